"""Idle Server-Sent Event streams stay alive: both SSE faces (the watch and the play
session) send a `: keep-alive` comment while nothing happens (docs/API.md: every 15 s;
shortened here), so proxies that cut silent connections leave them open, and the
stream goes on with its messages after one."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from services import rest
from tests.e2e.support import Env, read_sse

KEEPALIVE = 1.0  # seconds, for the test (rest checks an idle stream every second)


@pytest.fixture(autouse=True)
def short_keepalive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rest, "SSE_KEEPALIVE_SECONDS", KEEPALIVE)


async def idle_lines(response: aiohttp.ClientResponse, seconds: float) -> list[bytes]:
    """Every line the stream sends within ``seconds``."""
    lines: list[bytes] = []
    with_time = asyncio.timeout(seconds)
    try:
        async with with_time:
            async for line in response.content:
                lines.append(line)
    except TimeoutError:
        pass
    return lines


@pytest.mark.parametrize("face", ["watch", "play"])
async def test_an_idle_stream_sends_keep_alives_then_goes_on(server: Env, face: str) -> None:
    game, joined = await server.new_game("whiskertrail", 2, b"keep alive")
    view = await joined[0].view()
    mover = joined[view.to_act[0]]
    waiter = joined[1 - mover.seat]
    auth = {"Authorization": f"Bearer {waiter.token}"}
    async with (
        aiohttp.ClientSession(server.http) as http,
        http.get(f"/v1/games/{game.game_id}:{face}", headers=auth) as stream,
    ):
        assert stream.status == 200
        lines = await idle_lines(stream, 4 * KEEPALIVE + 2)
        # the opening comment, the snapshot and the deal's events, then only keep-alives
        assert lines[0].startswith(b": ")
        keep_alives = [i for i, line in enumerate(lines) if line == b": keep-alive\n"]
        assert len(keep_alives) >= 2, lines
        last_data = max(i for i, line in enumerate(lines) if line.startswith(b"data:"))
        assert last_data < keep_alives[0]
        # a move after the silence still arrives on the same stream
        legal = await mover.legal_actions()
        await mover.act(legal[0], expected_version=0)
        async with asyncio.timeout(10):
            async for kind, _, data in read_sse(stream):
                if kind == "event":
                    event = data["event"] if face == "play" else data  # (a PlayResponse)
                    assert event["version"] == "1", data
                    break
