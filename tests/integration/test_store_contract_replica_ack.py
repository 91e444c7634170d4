"""The store contract (test_store_contract.py) again, on a Redis store that acknowledges
each write only once a replica has it (``ack_replicas=1``, ``serve --ack replica``):
the same semantics, every write through WAIT (a real primary and replica)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from loadtests.redis_process import RedisProcess, redis_pair
from services.store.base import GameStore
from services.store.redis import RedisStore
from tests.integration.test_store_contract import *  # noqa: F403 (the contract's tests)


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[RedisProcess, RedisProcess]]:
    with redis_pair() as both:
        yield both


@pytest.fixture
async def store(pair: tuple[RedisProcess, RedisProcess]) -> AsyncIterator[GameStore]:
    primary, _ = pair
    client = aioredis.Redis.from_url(primary.url)
    await client.flushdb()
    await client.aclose()
    replicated = RedisStore(primary.url, finished_ttl=60, ack_replicas=1, ack_timeout=2.0)
    try:
        yield replicated
    finally:
        await replicated.close()
