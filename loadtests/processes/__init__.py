"""The processes that tests, load tests, benchmarks and the fault campaign start, one
helper each: ``glintwick serve`` (:mod:`~loadtests.processes.server`), a redis-server
(:mod:`~loadtests.processes.redis`) and a Redis Cluster of them
(:mod:`~loadtests.processes.cluster`); any other command with its output in a log file
(:mod:`~loadtests.processes.child`), on free ports (:mod:`~loadtests.processes.ports`).

Each is stopped by its pid, never by name: other work on the machine keeps its own.
"""
