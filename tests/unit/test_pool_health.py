"""A bot-pool worker's health endpoint (clients/pool_health.py): /livez follows the
worker's loop, /readyz its listing of the bot turns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, cast

import aiohttp
import grpc
import pytest

from clients import pool_health
from clients.botpool import BotPool
from clients.pool_health import start_health
from clients.sdk import CallError, GlintwickClient
from glintwick.v1 import game_pb2 as pb
from loadtests.processes.ports import free_port


class Server:
    """Answers ListBotTurns with no turns, UNAVAILABLE while ``down``, or never while ``stuck``."""

    target = "fake:0"

    def __init__(self) -> None:
        self.down = False
        self.stuck = False
        self.calls = 0

    async def bot_turns(self, token: str, limit: int = 0, **_: Any) -> list[pb.BotTurn]:
        self.calls += 1
        if self.stuck:
            await asyncio.Event().wait()
        if self.down:
            raise CallError(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "connection refused")
        return []


@pytest.fixture
async def worker() -> AsyncIterator[tuple[Server, str]]:
    """A pool worker against :class:`Server`, its health on a free port: (server, base URL)."""
    server = Server()
    pool = BotPool(cast(GlintwickClient, server), "token", poll_seconds=0.01)
    port = free_port()
    health = await start_health(pool, f"127.0.0.1:{port}")
    stop = asyncio.Event()
    running = asyncio.create_task(pool.run(stop))
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await health.cleanup()


async def status(url: str) -> int:
    async with aiohttp.ClientSession() as session, session.get(url) as answer:
        return answer.status


async def eventually(check: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.02)


async def test_ready_while_listing_works_and_live_while_the_loop_goes_round(
    worker: tuple[Server, str],
) -> None:
    server, base = worker
    assert await status(f"{base}/livez") == 200
    await eventually(lambda: _is(status(f"{base}/readyz"), 200))
    server.down = True  # the servers or their store down: not ready, still live
    await eventually(lambda: _is(status(f"{base}/readyz"), 503))
    assert await status(f"{base}/livez") == 200
    server.down = False
    await eventually(lambda: _is(status(f"{base}/readyz"), 200))


async def test_a_stuck_loop_is_not_live(
    worker: tuple[Server, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, base = worker
    monkeypatch.setattr(pool_health, "STALL_SECONDS", 0.3)
    assert await status(f"{base}/livez") == 200
    server.stuck = True  # a listing that never returns: the loop stops going round
    await eventually(lambda: _is(status(f"{base}/livez"), 503))


async def _is(answer: Any, expected: int) -> bool:
    return bool(await answer == expected)
