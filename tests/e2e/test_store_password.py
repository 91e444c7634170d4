"""The store's password from its own variable (GLINTWICK_STORE_PASSWORD, as the
Kubernetes manifests set it from a Secret), joined to a URL that has none: a server
given it serves on a Redis that requires it; one without it waits NOT_SERVING."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.asyncio.connection import parse_url

from glintwick_cli import build_parser, start_server
from loadtests.processes.redis import redis_server
from services.config import options_from, with_password

PASSWORD = "p@ss/w:rd %"  # every character a URL would have to quote


@pytest.fixture
async def guarded_redis() -> AsyncIterator[str]:
    """A redis-server of its own that requires :data:`PASSWORD`: its URL, without it."""
    with redis_server() as url:
        client = aioredis.Redis.from_url(url)
        await client.config_set("requirepass", PASSWORD)
        await client.aclose()
        yield url


def test_the_password_joins_a_url_that_has_none() -> None:
    assert parse_url(with_password("redis://h:6379/0", PASSWORD))["password"] == PASSWORD
    assert with_password("redis://:own@h:6379/0", PASSWORD) == "redis://:own@h:6379/0"
    assert parse_url(with_password("redis://user@h/0", "x"))["username"] == "user"
    assert with_password("memory", PASSWORD) == "memory"
    assert with_password("redis://h/0", None) == "redis://h/0"


@pytest.mark.parametrize("given", [True, False])
async def test_a_server_reaches_a_redis_with_a_password_from_its_variable(
    guarded_redis: str, monkeypatch: pytest.MonkeyPatch, given: bool
) -> None:
    monkeypatch.setenv("GLINTWICK_STORE", guarded_redis)
    if given:
        monkeypatch.setenv("GLINTWICK_STORE_PASSWORD", PASSWORD)
    else:
        monkeypatch.delenv("GLINTWICK_STORE_PASSWORD", raising=False)
    args = build_parser().parse_args(["serve", "--grpc", "127.0.0.1:0", "--http", ""])
    running = await start_server(options_from(args))
    try:
        assert running.monitor.healthy is given  # without it: NOAUTH, NOT_SERVING
    finally:
        await running.stop(grace=0.5)
