"""The clients on Play streams, end to end through real gRPC on both stores: the bot
runner, the house-bot pool and the tournament runner play whole games over play
sessions, their unary loop still works, and a tournament's scores are the same on
either transport (and in process) for the same seeds."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from clients.botpool import BotPool
from clients.botrunner import TRANSPORTS, Transport, play_seat
from clients.bots import make_bot
from clients.sdk import GlintwickClient
from clients.tournament import schedule as sched
from clients.tournament.runner import run_inprocess
from clients.tournament.tournament import Config, run
from engine.rulesets import PRESETS
from services.config import ServerOptions
from services.server import start
from tests.e2e.conftest import StartServer
from tests.e2e.support import OPERATOR_TOKEN, Env
from tests.e2e.test_house_bots import SHORT, SHORT_PB, check_replay, until_over

UNARY_PLAY = ("GetView", "ListLegalActions", "SubmitAction")
# the four-seat rule set cut to its first contract: claim windows prompt several seats
CONTRACT_SHORT = dataclasses.replace(
    PRESETS["contract"], contracts=PRESETS["contract"].contracts[:1]
)


def count_calls(client: GlintwickClient) -> Counter[str]:
    """Count the client's unary calls of the playing loop by method name."""
    calls: Counter[str] = Counter()
    for name in UNARY_PLAY:
        method = getattr(client.stub, name)

        def counted(
            *args: Any, _name: str = name, _method: Callable[..., Any] = method, **kw: Any
        ) -> Any:
            calls[_name] += 1
            return _method(*args, **kw)

        setattr(client.stub, name, counted)
    return calls


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_bot_runner_plays_a_whole_game(server: Env, transport: Transport) -> None:
    client = GlintwickClient(server.target)
    calls = count_calls(client)
    try:
        game = await client.create_game(SHORT_PB, seats=2, seed=b"runner")
        seats = [await client.join(game.game_id, seat=s) for s in range(2)]
        bots = [make_bot("greedy", seed=s) for s in range(2)]
        results = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_seat(seat, bot, random.Random(s), rules=SHORT, transport=transport)
                    for s, (seat, bot) in enumerate(zip(seats, bots, strict=True))
                )
            ),
            60,
        )
    finally:
        await client.close()
    replay = await server.client.replay(game.game_id)
    assert replay.game.finished
    assert sum(r.moves for r in results) == len(replay.steps) > 0
    assert all(r.final_view is not None and r.final_view.game_over for r in results)
    assert all(r.illegal == r.errors == r.timeouts == 0 and not r.gave_up for r in results)
    if transport == "play":
        # every move was an act on the stream; the final views came with the sessions'
        # ends (PlayClosed.final_view): no unary call at all
        assert not calls, calls
    else:
        assert calls["SubmitAction"] >= len(replay.steps) and calls["ListLegalActions"] > 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_pool_plays_house_bots_beside_a_person_on_a_play_stream(
    server: Env, transport: Transport
) -> None:
    """Three games at once (house bots and a person mixed), one worker: on the play
    transport its moves are acts on its one stream, none a unary call."""
    client = GlintwickClient(server.target)
    calls = count_calls(client)
    lineups = [{1: "greedy"}, {0: "random", 2: "greedy"}, {1: "greedy", 2: "random"}]
    games = [
        await server.client.create_game(
            SHORT_PB, seats=len(b) + 1, seed=f"mixed{i}".encode(), bots=b
        )
        for i, b in enumerate(lineups)
    ]
    people = [
        await server.client.join(g.game_id, seat=next(s for s in range(4) if s not in b))
        for g, b in zip(games, lineups, strict=True)
    ]
    stop = asyncio.Event()
    pool = BotPool(
        client, OPERATOR_TOKEN, poll_seconds=0.05, seed="mixed", transport=transport, name="p"
    )
    running = asyncio.create_task(pool.run(stop))
    try:
        person = [
            play_seat(p, make_bot("random", seed=i), random.Random(i), rules=SHORT)
            for i, p in enumerate(people)
        ]
        played = await asyncio.wait_for(asyncio.gather(*person), 90)
        await until_over(server.client, [g.game_id for g in games], 30)
    finally:
        stop.set()
        stats = await running
        await client.close()
    bot_steps = 0
    for game, lineup in zip(games, lineups, strict=True):
        seats = check_replay(await server.client.replay(game.game_id), seed="mixed")
        bot_steps += sum(1 for s in seats if s in lineup)
    assert stats.moves == bot_steps > 0 and stats.refused == stats.errors == 0, stats
    assert all(r.moves > 0 and r.illegal == r.errors == 0 for r in played)
    if transport == "play":
        assert not calls, calls  # no GetView / ListLegalActions / SubmitAction
    else:
        assert calls["SubmitAction"] >= bot_steps


@pytest.mark.parametrize(
    ("rules", "seats", "bots"),
    [(SHORT, 2, ["greedy", "strong"]), (CONTRACT_SHORT, 4, ["greedy", "random"])],
    ids=["whiskertrail", "contract"],
)
async def test_tournament_scores_are_the_same_on_play_streams_and_the_unary_loop(
    rules: Any, seats: int, bots: list[str]
) -> None:
    running = await start(
        ServerOptions(grpc_address="127.0.0.1:0", http_address="", store="memory")
    )
    try:
        target = f"127.0.0.1:{running.grpc_port}"
        rows: dict[str, list[dict[str, Any]]] = {}
        # the play transport prompts only (its default), and with every event
        modes: list[tuple[str, Transport, bool]] = [
            *((t, t, True) for t in TRANSPORTS),
            ("play_events", "play", False),
        ]
        for name, transport, prompts_only in modes:
            config = Config(
                rules,
                bots,
                deals=1,
                seats=seats,
                seed=11,
                target=target,
                transport=transport,
                prompts_only=prompts_only,
            )
            summary, results = await run(config)
            assert summary["illegal"] == summary["errors"] == summary["timeouts"] == 0
            rows[name] = [r.row() for r in results]
    finally:
        await running.stop(grace=0.5)
    assert rows["play"] == rows["unary"] == rows["play_events"]
    local = run_inprocess(sched.games(bots, seats, 1, 11), rules, 11)
    assert [(r["scores"], r["moves"]) for r in rows["play"]] == [(r.scores, r.moves) for r in local]


async def test_the_tournament_runner_plays_on_the_redis_store(start_server: StartServer) -> None:
    env = await start_server("redis")
    config = Config(SHORT, ["greedy", "random"], deals=1, seats=2, seed=5, target=env.target)
    summary, results = await run(config)
    assert summary["illegal"] == summary["errors"] == 0
    local = run_inprocess(sched.games(["greedy", "random"], 2, 1, 5), SHORT, 5)
    assert [(r.scores, r.moves) for r in results] == [(r.scores, r.moves) for r in local]
    assert len(results) == len(local) > 0 and all(r.mode == "grpc" for r in results)
