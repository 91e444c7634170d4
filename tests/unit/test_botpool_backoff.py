"""A bot pool whose target is unreachable backs off (doubling, capped) and logs one line
when listing starts failing and one when it works again, not one per poll."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any, cast

import grpc
import pytest
import structlog
from structlog.testing import capture_logs

from clients import botpool
from clients.botpool import BotPool
from clients.sdk import CallError, GlintwickClient
from glintwick.v1 import game_pb2 as pb


class FlakyServer:
    """Answers ListBotTurns with UNAVAILABLE ``failures`` times, then with no turns."""

    target = "fake:0"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[float] = []

    async def bot_turns(self, token: str, limit: int = 0, **_: Any) -> list[pb.BotTurn]:
        self.calls.append(asyncio.get_running_loop().time())
        if len(self.calls) <= self.failures:
            raise CallError(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "connection refused")
        return []


@pytest.fixture
def info_logs() -> Iterator[None]:
    """Info lines through, whatever level an earlier test left structlog at."""
    before = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    yield
    structlog.configure(**before)


async def test_an_unreachable_target_is_polled_less_and_less_and_logged_once(
    monkeypatch: pytest.MonkeyPatch, info_logs: None
) -> None:
    monkeypatch.setattr(botpool, "MAX_BACKOFF_SECONDS", 0.4)
    server = FlakyServer(failures=6)
    stop = asyncio.Event()
    with capture_logs() as logs:
        pool = BotPool(cast(GlintwickClient, server), "token", poll_seconds=0.01)
        running = asyncio.create_task(pool.run(stop))
        while len(server.calls) < 9:
            await asyncio.sleep(0.01)
        stop.set()
        stats = await running
    gaps = [b - a for a, b in zip(server.calls, server.calls[1:], strict=False)]
    # (bounds, not ratios of measured gaps: a loaded machine stretches any one gap,
    # and a stretched 0.2 s gap once made the next 0.4 s one look like no doubling)
    schedule = [0.1, 0.2, 0.4, 0.4, 0.4, 0.4]  # doubling from 0.05, capped at 0.4
    assert all(gap >= wait * 0.9 for gap, wait in zip(gaps, schedule, strict=False))
    assert max(gaps[3:6]) < 0.8 * 1.2  # capped (uncapped: 0.8, 1.6, 3.2)
    assert gaps[-1] < 0.4 * 0.75  # back to the idle poll (0.01 s) once the target answers
    events = [entry["event"] for entry in logs]
    assert events.count("bot_turns_failing") == 1 and events.count("bot_turns_recovered") == 1
    assert stats.errors == 6
