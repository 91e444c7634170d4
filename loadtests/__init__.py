"""Load tests with locust (docs/LOADTEST.md): ``make loadtest`` or ``python -m loadtests.run``."""
