"""``make loadtest``: Redis, the server's processes and a headless locust run, with reports.

    python -m loadtests.run [--time 60s] [--tables 20] [--workers 2] [--max-p99-ms 100] …

1. starts a redis-server on a free port (``--store cluster``: a six-node Redis Cluster)
   and ``glintwick serve --store redis://… --workers N`` on free ports (or, with
   ``--target``, uses a deployed service and starts nothing);
2. runs locust headless (``loadtests/locustfile.py``) for ``--time``, writing CSV
   (``<out>/stats_*.csv``) and HTML (``<out>/report.html``) reports;
3. samples the CPU time of the load generator, the server processes and Redis
   (``psutil``), and with ``--profile`` records the server with py-spy;
4. prints a summary (also ``<out>/summary.json``) and exits non-zero when a request
   failed (1) or a p99 is over its ``--max-p99-ms`` limit (3).

``--steps 5,10,20,40`` runs once per table count instead (the other users as
configured) and reports the largest count whose move p99 stays within
``--step-p99-ms``, for each table transport of ``--step-transports`` in the same run
(``unary``: ``TableUser``, whose move is ``SubmitAction``; ``play``:
``PlayTableUser`` on Play streams, whose move is ``Play (act)``, from act to result;
``--step-metric cycle``: a move's whole cycle instead, from sending it to holding the
next decision's legal actions, ``Unary (next prompt)`` and ``Play (next prompt)``;
``probe-call``, ``probe-cycle``: the same two as ``--probe-tables`` tables of
``loadtests/probe.py`` see them, a grpc.aio client in a process of its own, playing
the stepped transport beside the load; the count each metric holds is reported
either way).
Every option has a ``LOADTEST_*`` environment variable; options
after ``--`` go to locust as they are.  Everything started is stopped on exit.

The package, a module a concept: :mod:`~loadtests.run.arguments` (the options),
:mod:`~loadtests.run.served` (the Redis and server it starts, or the target it loads),
:mod:`~loadtests.run.runs` (one run: locust, the probe, the CPU sampled, the profile),
:mod:`~loadtests.run.cpu`, :mod:`~loadtests.run.profiling`,
:mod:`~loadtests.run.steps` (``--steps``: the counts each transport holds),
:mod:`~loadtests.run.report` (what it prints and keeps) and
:mod:`~loadtests.run.command` (the command); :mod:`~loadtests.run.locust_hooks` runs
inside locust.
"""
