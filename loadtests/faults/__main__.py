"""``python -m loadtests.faults``: the fault campaign (:mod:`loadtests.faults.run`)."""

import sys

from loadtests.faults.run import main

sys.exit(main())
