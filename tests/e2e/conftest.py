"""Fixtures of the end-to-end suite: real servers on real sockets, over both stores.

``server`` starts one in-process server (``services.server.start``: gRPC and HTTP
on free ports, the deadline sweeper running) on the memory store or on a real
redis-server that the session starts on a free port (never a mock), and hands the
test an SDK client connected to it.  Tests that need a server configured otherwise
(a tiny rate limit, no operator credential, two replicas) use ``start_server``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
import redis.asyncio as aioredis
import structlog

from loadtests.processes.cluster import RedisCluster
from loadtests.processes.redis import redis_server
from services.config import ServerOptions
from tests.e2e.support import Env, open_env

StartServer = Callable[..., Awaitable[Env]]


@pytest.fixture(scope="session", autouse=True)
def quiet_server_logs() -> Iterator[None]:
    """The servers log every move at INFO: keep warnings and errors only (restored after)."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.configure(**saved)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


async def flush(url: str) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        await client.flushdb()
    finally:
        await client.aclose()


@pytest.fixture
async def fresh_redis(redis_url: str) -> str:
    """The session's redis-server, emptied for this test."""
    await flush(redis_url)
    return redis_url


#: the shared stores of a test whose cluster run is long: that run is marked slow
#: (``make test-cluster`` runs it; ``make test`` the rest)
SHARED_STORES_CLUSTER_SLOW = ["redis", pytest.param("cluster", marks=pytest.mark.slow)]


@pytest.fixture(params=["redis", "cluster"])
def shared_store(request: pytest.FixtureRequest) -> str:
    """What replicas share, emptied for this test: "redis" (the session's redis-server)
    or "cluster" (the session's Redis Cluster)."""
    store: str = request.param
    return store


@pytest.fixture
async def start_server(
    fresh_redis: str, request: pytest.FixtureRequest
) -> AsyncIterator[StartServer]:
    """Start servers (``store``: "memory", "redis" or "cluster"; other keywords:
    ServerOptions); all are stopped after the test."""
    started: list[Env] = []

    async def start(store: str = "memory", **options: object) -> Env:
        url = fresh_redis if store == "redis" else "memory"
        if store == "cluster":
            url = store_url(request, store)
        env = await open_env(ServerOptions(store=url, **options), store)  # type: ignore[arg-type]
        started.append(env)
        return env

    yield start
    for env in reversed(started):
        await env.close()


def store_url(request: pytest.FixtureRequest, store: str) -> str:
    """The URL of a shared store ("redis" or "cluster") of this test, emptied (the
    cluster at its first use in the test: its session fixture starts it then)."""
    if store == "redis":
        url: str = request.getfixturevalue("fresh_redis")
        return url
    cluster: RedisCluster = request.getfixturevalue("fresh_cluster")
    return cluster.url


@pytest.fixture
def shared_url(request: pytest.FixtureRequest, shared_store: str) -> str:
    """The URL of ``shared_store``, emptied for this test."""
    return store_url(request, shared_store)


@pytest.fixture(params=["memory", "redis"])
async def server(request: pytest.FixtureRequest, start_server: StartServer) -> Env:
    """One server with the default options (and an operator credential) on each store."""
    store: str = request.param
    return await start_server(store)
