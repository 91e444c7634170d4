"""The service benchmark's load generator against a real server: every call it
makes succeeds, so `make bench` measures served calls, not errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bench import bench_service
from services.config import NO_QUOTAS
from tests.e2e.conftest import StartServer
from tests.e2e.support import Env


@pytest.fixture(params=["memory", "redis"])
async def bench_server(request: pytest.FixtureRequest, start_server: StartServer) -> Env:
    """A server as the benchmarks run theirs: no rate limits, no quotas (their load
    generators flood from one address: bench_service.NO_LIMITS)."""
    return await start_server(request.param, rates=None, quotas=NO_QUOTAS)


@pytest.mark.parametrize("kind", ["ping", "analyse", "submit"])
async def test_load_generator_calls_succeed(bench_server: Env, kind: str) -> None:
    makers: dict[str, Callable[[int], bench_service.Call]] = {
        "ping": bench_service._ping,
        "analyse": bench_service._analyse_factory(),
        "submit": bench_service._SubmitLoad(2),
    }
    make = makers[kind]
    # _drive raises on the first failed call (an illegal or stale move, say)
    result = await bench_service._drive(bench_server.target, 0.5, 2, make)
    assert result["calls"] > 0


async def test_submit_tables_play_their_worked_out_games(server: Env) -> None:
    """The moves worked out before the clock starts are the server's game: each one
    lands at the version the table expects, on the game its seed deals."""
    load = bench_service._SubmitLoad(1)
    result = await bench_service._drive(server.target, 0.5, 1, load)
    calls = result["calls"]
    table = load.tables[0]
    assert calls > 0 and table.games == 0  # a random game lasts thousands of moves
    game = await server.client.game(table.game_id)
    assert game.version == table.version == calls
