"""``python -m loadtests.run``: the load test (:mod:`loadtests.run.command`)."""

import sys

from loadtests.run.command import main

sys.exit(main())
