from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from loadtests.processes.cluster import RedisCluster
from loadtests.processes.redis import redis_server
from services.store.base import GameStore
from services.store.memory import MemoryStore
from services.store.redis import RedisStore


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@contextlib.asynccontextmanager
async def fresh_redis_store(redis_url: str) -> AsyncIterator[RedisStore]:
    """A RedisStore on the session's redis-server, emptied first."""
    client = aioredis.Redis.from_url(redis_url)
    await client.flushdb()
    await client.aclose()
    redis_store = RedisStore(redis_url, finished_ttl=60)
    try:
        yield redis_store
    finally:
        await redis_store.close()


@pytest.fixture(params=["memory", "redis", "cluster"])
async def store(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[GameStore]:
    """Each store: the memory store, a RedisStore on the session's redis-server, and
    one on the session's Redis Cluster (emptied first)."""
    if request.param == "memory":
        yield MemoryStore(finished_ttl=60)
        return
    if request.param == "cluster":
        cluster: RedisCluster = request.getfixturevalue("fresh_cluster")
        cluster_store = RedisStore(cluster.url, finished_ttl=60)
        try:
            yield cluster_store
        finally:
            await cluster_store.close()
        return
    async with fresh_redis_store(redis_url) as redis_store:
        yield redis_store


@pytest.fixture
async def redis_store(redis_url: str) -> AsyncIterator[RedisStore]:
    async with fresh_redis_store(redis_url) as store:
        yield store
