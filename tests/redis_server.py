"""The tests' redis-server: the helper lives in ``loadtests.redis_process`` (bench/ and
loadtests/ use it too, without importing tests)."""

from loadtests.redis_process import free_port, redis_server

__all__ = ["free_port", "redis_server"]
