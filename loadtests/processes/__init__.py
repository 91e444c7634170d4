"""The processes that tests, load tests and the fault campaign start: ``glintwick serve``
and redis-server."""
