from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from services.store.base import GameStore
from services.store.memory import MemoryStore
from services.store.redis import RedisStore
from tests.redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[GameStore]:
    if request.param == "memory":
        yield MemoryStore(finished_ttl=60)
        return
    client = aioredis.Redis.from_url(redis_url)
    await client.flushdb()
    await client.aclose()
    redis_store = RedisStore(redis_url, finished_ttl=60)
    yield redis_store
    await redis_store.close()
