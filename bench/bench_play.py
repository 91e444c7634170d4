"""Play sessions against the unary loop: messages per move and moves per second.

The same games (2-seat whiskertrail, the greedy bot at every seat, fixed seeds) are
played twice through a real gRPC server on the memory store, in this process: once
by the unary bot runner (``clients/botrunner.py``: GetView, ListLegalActions,
SubmitAction and a watch to wake up), then on one play session per game
(``PlaySession``, played by the table core's Play runner): with every event
(``play``) and prompts only (``play_prompts_only``, what the bots use).  Every message the client
sends is counted (unary requests and watch subscriptions; stream messages), and
what it receives too.  The scores must be the same both ways.

    python -m bench.bench_play [--games 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from clients.botrunner import play_seat
from clients.bots.greedy import GreedyBot
from clients.runners import PlayRunner
from clients.sdk import GlintwickClient, Seat
from clients.table import Table
from services.config import ServerOptions


class _Count(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    """Counts the unary calls and the watches a client opens."""

    def __init__(self) -> None:
        self.calls = 0

    async def intercept_unary_unary(
        self, continuation: Callable[..., Awaitable[Any]], details: Any, request: Any
    ) -> Any:
        self.calls += 1
        return await continuation(details, request)

    async def intercept_unary_stream(
        self, continuation: Callable[..., Awaitable[Any]], details: Any, request: Any
    ) -> Any:
        self.calls += 1
        return await continuation(details, request)


async def _new_game(
    client: GlintwickClient, seed: bytes, rules: str = "whiskertrail", seats: int = 2
) -> list[Seat]:
    game = await client.create_game(rules, seats=seats, seed=seed)
    return [await client.join(game.game_id, seat=s) for s in range(seats)]


async def play_table(
    client: GlintwickClient, seats: list[Seat], tag: str, prompts_only: bool
) -> tuple[int, int]:
    """A game's seats on one Play stream, the greedy bot at each (seeded by ``tag``),
    to its end: the messages the stream sent and received."""
    # (every prompt answered, as a client holding its seats apart would)
    table = Table(in_turn_order=False)
    for seat in seats:
        table.sit(seat.game_id, seat.seat, GreedyBot(), random.Random(f"{tag}/{seat.seat}"))
    async with client.play_session(prompts_only=prompts_only) as session:
        for seat in seats:
            session.add(seat)
        await PlayRunner(table).run(session)
        return session.sent, session.received


async def _unary(target: str, seeds: list[bytes]) -> dict[str, Any]:
    count = _Count()
    channel = grpc.aio.insecure_channel(target, interceptors=[count])
    client = GlintwickClient(target, channel=channel)
    games = [await _new_game(client, seed) for seed in seeds]
    count.calls = 0
    started = time.perf_counter()
    await asyncio.gather(
        *(
            play_seat(
                seat, GreedyBot(), random.Random(f"{n}/{seat.seat}"), poll=0.2, transport="unary"
            )
            for n, seats in enumerate(games)
            for seat in seats
        )
    )
    took = time.perf_counter() - started
    calls = count.calls
    moves, scores = await _results(client, games)
    await client.close()
    return {"moves": moves, "seconds": took, "sent_per_move": calls / moves, "scores": scores}


async def _play(
    target: str,
    seeds: list[bytes],
    prompts_only: bool,
    on_started: Callable[[], None] | None = None,
    *,
    on_finished: Callable[[], None] | None = None,
    rules: str = "whiskertrail",
    seats: int = 2,
) -> dict[str, Any]:
    """``on_started``: called once the games are created, as their play starts (the
    floor benchmark reads the server's CPU there), ``on_finished`` once they are over
    (before their replays are read); ``rules``, ``seats``: the games'."""
    client = GlintwickClient(target)
    games = [await _new_game(client, seed, rules, seats) for seed in seeds]
    sent = received = 0
    if on_started is not None:
        on_started()
    started = time.perf_counter()

    async def game(n: int, seats: list[Seat]) -> None:
        nonlocal sent, received
        out, back = await play_table(client, seats, str(n), prompts_only)
        sent += out
        received += back

    await asyncio.gather(*(game(n, seats) for n, seats in enumerate(games)))
    took = time.perf_counter() - started
    if on_finished is not None:
        on_finished()
    moves, scores = await _results(client, games)
    await client.close()
    return {
        "moves": moves,
        "seconds": took,
        "sent_per_move": sent / moves,
        "received_per_move": received / moves,
        "scores": scores,
    }


async def _results(client: GlintwickClient, games: list[list[Seat]]) -> tuple[int, list[Any]]:
    moves = 0
    scores = []
    for seats in games:
        replay = await client.replay(seats[0].game_id)
        moves += len(replay.steps)
        scores.append(list(replay.scores))
    return moves, scores


async def main(games: int) -> dict[str, Any]:
    from glintwick_cli import start_server

    running = await start_server(
        ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="", bots=False)
    )
    target = f"127.0.0.1:{running.grpc_port}"
    seeds = [f"bench play {n}".encode() for n in range(games)]
    try:
        unary = await _unary(target, seeds)
        play = await _play(target, seeds, prompts_only=False)
        prompts = await _play(target, seeds, prompts_only=True)
    finally:
        await running.stop(grace=0.5)
    assert unary["scores"] == play["scores"] == prompts["scores"], (
        "the same games must end the same"
    )

    def rate(run: dict[str, Any]) -> float:
        return float(run["moves"] / run["seconds"])

    return {
        "games": games,
        "unary": {k: v for k, v in unary.items() if k != "scores"},
        "play": {k: v for k, v in play.items() if k != "scores"},
        "play_prompts_only": {k: v for k, v in prompts.items() if k != "scores"},
        "speedup": rate(play) / rate(unary),
        "speedup_prompts_only": rate(prompts) / rate(unary),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=8)
    print(json.dumps(asyncio.run(main(parser.parse_args().games)), indent=2))
