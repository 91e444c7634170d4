"""A small tournament end to end through gRPC against an embedded in-memory server."""

from __future__ import annotations

import dataclasses

from clients.tournament import schedule as sched
from clients.tournament.runner import run_inprocess
from clients.tournament.tournament import Config, run
from engine.rulesets import WHISKERTRAIL
from services.config import ServerOptions
from services.server import start

SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])


async def test_tournament_through_grpc_reproduces_and_matches_in_process() -> None:
    running = await start(
        ServerOptions(grpc_address="127.0.0.1:0", http_address="", store="memory")
    )
    try:
        target = f"127.0.0.1:{running.grpc_port}"
        config = Config(SHORT, ["greedy", "strong"], deals=2, seats=2, seed=7, target=target)
        summary, results = await run(config)
        again, results2 = await run(config)
    finally:
        await running.stop(grace=0.5)
    rows = [r.row() for r in results]
    assert rows == [r.row() for r in results2]  # same seed, same games, same scores
    assert summary["stats"] == again["stats"] and summary["ratings"] == again["ratings"]
    assert summary["illegal"] == summary["errors"] == summary["timeouts"] == 0
    assert summary["ruleset_hash"] == SHORT.hash and summary["seed"] == 7
    assert all(r.game_id for r in results) and len({r.game_id for r in results}) == 4
    # every bot played every seat of every deal
    for deal in range(2):
        games = [r.spec for r in results if r.spec.deal == deal]
        assert len({g.seed for g in games}) == 1
        for bot in ("greedy", "strong"):
            assert sorted(g.seats.index(bot) for g in games) == [0, 1]
    # the server played exactly the games the engine plays in process
    specs = sched.games(["greedy", "strong"], 2, 2, 7)
    local = [r.row() for r in run_inprocess(specs, SHORT, 7)]
    assert [(r["scores"], r["moves"]) for r in rows] == [(r["scores"], r["moves"]) for r in local]


async def test_sprt_stops_when_decided() -> None:
    config = Config(
        SHORT,
        ["greedy", "random"],
        deals=40,
        seats=2,
        seed=3,
        sprt=("greedy", "random"),
        concurrency=2,
    )
    summary, results = await run(config)
    assert summary["sprt"]["decision"] == "H1"
    assert summary["sprt"]["wins"] + summary["sprt"]["losses"] < 40
    assert len(results) < 80
