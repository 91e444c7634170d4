"""The load test's own hooks inside locust, so that a run's figures count what happened
in it however busy the machine is (locust loads this file by path beside the
locustfile: ``-f loadtests/locustfile.py,loadtests/run/locust_hooks.py``).

* gevent's clock is set right before the run.  gevent keeps a cached "now", updated
  each time its loop turns; locust's start (its imports, the locustfile's) takes
  seconds on a busy machine before the loop turns, and the ``--run-time`` timer,
  armed against that stale "now", would end the run as many seconds early (a 3 s run
  cut to a fraction of a second).
* The request statistics are written once the run is over, to
  ``<csv prefix>_final_stats.csv`` (the columns of locust's ``_stats.csv``): locust
  writes its CSV files every second while the run goes on, not at its end, so they
  lag by up to a second of requests (all of a short run's).
"""

from __future__ import annotations

import csv
from typing import Any

import gevent
from locust import events
from locust.env import Environment
from locust.runners import WorkerRunner
from locust.stats import PERCENTILES_TO_REPORT, StatsCSV

#: what the final statistics' file name adds to locust's ``--csv`` prefix
FINAL_STATS = "_final_stats.csv"


def set_the_clock(**_: Any) -> None:
    """gevent's "now" made current before locust arms its ``--run-time`` timer."""
    gevent.get_hub().loop.update_now()


def write_final_stats(environment: Environment, **_: Any) -> None:
    """Every request's statistics once the run is over (in the only process, or the
    master of ``--processes``, which has its workers' last reports by then)."""
    options = environment.parsed_options
    if options is None or not options.csv_prefix or isinstance(environment.runner, WorkerRunner):
        return
    with open(f"{options.csv_prefix}{FINAL_STATS}", "w", newline="") as handle:
        StatsCSV(environment, PERCENTILES_TO_REPORT).requests_csv(csv.writer(handle))


# locust's event hooks are untyped: register the listeners without decorators
_events: Any = events
_events.init.add_listener(set_the_clock)
_events.quitting.add_listener(write_final_stats)
