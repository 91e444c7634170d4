"""Play scheduled games: through a server (gRPC, the SDK, concurrently) or in process.

Both runners return one :class:`GameResult` per :class:`GameSpec`, in schedule
order, tagged with the rule set's hash and the tournament seed.  Bots are seeded
from the tournament seed and the game's place in the schedule, so a run reproduces
exactly: the games' seeds are fixed, every bot's choices are fixed, and a May-I
window is decided by seat order, never by timing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clients.botrunner import Transport, play_seats
from clients.bots.oracle import OracleBot
from clients.bots.registry import make_bot
from clients.sdk import GlintwickClient
from clients.tournament.schedule import GameSpec
from clients.turn import engine_turn
from engine.events import Event, EventType
from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb

Progress = Callable[[int], None]
#: called with each game's result as soon as it is over (a shard records it then)
Finished = Callable[["GameResult"], None]


@dataclass
class GameResult:
    spec: GameSpec
    scores: list[int]
    winners: list[int]
    ruleset_hash: str
    tournament_seed: int
    mode: str  # "grpc" | "inprocess"
    game_id: str = ""
    moves: int = 0
    illegal: int = 0
    timeouts: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    # how each round ended, in order: "went_out", "exhaustions", "turn_cap", "dry" or "dead"
    # (engine.events.RoundEnded.reason)
    round_ends: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        """The deterministic part (what a rerun must reproduce)."""
        return {
            "index": self.spec.index,
            "lineup": list(self.spec.lineup),
            "deal": self.spec.deal,
            "rotation": self.spec.rotation,
            "order": self.spec.order,
            "reference": self.spec.reference,
            "seats": list(self.spec.seats),
            "seed": self.spec.seed.hex(),
            "scores": self.scores,
            "winners": self.winners,
            "ruleset_hash": self.ruleset_hash,
            "tournament_seed": self.tournament_seed,
            "moves": self.moves,
            "illegal": self.illegal,
            "timeouts": self.timeouts,
            "errors": self.errors,
            "round_ends": self.round_ends,
        }


def play_inprocess(
    spec: GameSpec, rules: RuleSet, tournament_seed: int, record: Path | None = None
) -> GameResult:
    """One game on the engine directly (same bots, same seeds; the oracle sees all);
    ``record``: a directory for its replayable log (clients.training.recording)."""
    started = time.perf_counter()
    state = GameState.new_game(rules, len(spec.seats), spec.seed)
    recorder = None
    if record is not None:
        from clients.training.recording import GameRecorder  # (only when recording)

        recorder = GameRecorder(state, spec.seats)
    bots = []
    rngs = []
    for s, name in enumerate(spec.seats):
        bot = make_bot(name, spec.bot_seed(tournament_seed, s))
        bot.setup(rules, s)
        bots.append(bot)
        rngs.append(random.Random(bot.seed))
    for bot in bots:
        if isinstance(bot, OracleBot):
            bot.attach(lambda: state, bots, rngs)
    moves = 0
    latencies: list[float] = []
    round_ends: list[str] = []
    while not state.is_terminal():
        seat = state.to_act[0]
        t0 = time.perf_counter()
        before = state
        state, action, events = engine_turn(state, seat, bots[seat], rngs[seat])
        latencies.append(time.perf_counter() - t0)
        if recorder is not None:
            recorder.record(before, seat, action)
        moves += 1
        round_ends.extend(round_end_reasons(events))
    if recorder is not None and record is not None:
        recorder.write(record, spec.index, state)
    return GameResult(
        spec,
        list(state.scores),
        list(state.winners()),
        rules.hash,
        tournament_seed,
        "inprocess",
        moves=moves,
        latencies=latencies,
        seconds=time.perf_counter() - started,
        round_ends=round_ends,
    )


def round_end_reasons(events: Sequence[Event]) -> list[str]:
    return [str(e.public["reason"]) for e in events if e.type == EventType.ROUND_ENDED]


def replayed_round_ends(replay: pb.Replay) -> list[str]:
    """How each round of a finished game ended, from its replay (GetReplay: the seed
    and every action, re-run on the engine), as a client outside the server learns it."""
    return round_end_reasons(convert.replay_events(replay))


def run_inprocess(
    specs: Sequence[GameSpec],
    rules: RuleSet,
    tournament_seed: int,
    progress: Progress | None = None,
    finished: Finished | None = None,
    workers: int = 1,
    record: Path | None = None,
) -> list[GameResult]:
    """Every game on the engine, in schedule order; ``workers`` > 1 plays them in that
    many processes (each game is seeded by itself: the results are the same);
    ``record``: a directory for each game's replayable log."""
    if workers <= 1 or len(specs) < 2:
        out = []
        for spec in specs:
            out.append(play_inprocess(spec, rules, tournament_seed, record))
            if finished:
                finished(out[-1])
            if progress:
                progress(1)
        return out
    by_index: dict[int, GameResult] = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        pending = {
            pool.submit(play_inprocess, spec, rules, tournament_seed, record): spec.index
            for spec in specs
        }
        for done in concurrent.futures.as_completed(pending):
            result = done.result()
            result.latencies = []  # (kept small across the process boundary)
            by_index[pending[done]] = result
            if finished:
                finished(result)
            if progress:
                progress(1)
    return [by_index[spec.index] for spec in specs]


async def play_grpc(
    client: GlintwickClient,
    spec: GameSpec,
    rules: RuleSet,
    tournament_seed: int,
    transport: Transport = "play",
    prompts_only: bool = True,
) -> GameResult:
    """One game through the public API: create, join every seat, play them all at once
    (``"play"``: every seat on one Play stream, prompts only unless ``prompts_only`` is
    False; ``"unary"``: unary calls, following the turn from seat to seat), each seat
    answering in turn order as the engine in process asks them."""
    started = time.perf_counter()
    preset = PRESETS.get(rules.name)
    wanted: str | Any = (
        rules.name
        if preset is not None and preset.hash == rules.hash
        else (convert.rules_to_pb(rules))
    )
    game = await client.create_game(wanted, seats=len(spec.seats), seed=spec.seed)
    seats = [
        await client.join(game.game_id, seat=s, name=name) for s, name in enumerate(spec.seats)
    ]
    bots = [make_bot(name, spec.bot_seed(tournament_seed, s)) for s, name in enumerate(spec.seats)]
    rngs = [random.Random(bot.seed) for bot in bots]
    results = await play_seats(
        seats,
        bots,
        rngs,
        rules=rules,
        in_turn_order=True,
        prompts_only=prompts_only,
        transport=transport,
    )
    final = next((r.final_view for r in results if r.final_view is not None), None)
    if final is None:
        raise RuntimeError(f"game {game.game_id} did not finish: {results}")
    round_ends = replayed_round_ends(await client.replay(game.game_id))
    return GameResult(
        spec,
        [p.score for p in final.players],
        list(final.winners),
        rules.hash,
        tournament_seed,
        "grpc",
        game_id=game.game_id,
        moves=sum(r.moves for r in results),
        illegal=sum(r.illegal for r in results),
        timeouts=sum(r.timeouts for r in results),
        errors=sum(r.errors for r in results),
        latencies=[x for r in results for x in r.latencies],
        seconds=time.perf_counter() - started,
        round_ends=round_ends,
    )


async def run_grpc(
    target: str,
    specs: Sequence[GameSpec],
    rules: RuleSet,
    tournament_seed: int,
    concurrency: int = 8,
    progress: Progress | None = None,
    transport: Transport = "play",
    finished: Finished | None = None,
    prompts_only: bool = True,
) -> list[GameResult]:
    """Every game against the server at ``target``, ``concurrency`` at a time."""
    gate = asyncio.Semaphore(max(1, concurrency))
    async with GlintwickClient(target) as client:

        async def one(spec: GameSpec) -> GameResult:
            async with gate:
                result = await play_grpc(
                    client, spec, rules, tournament_seed, transport, prompts_only
                )
            if finished:
                finished(result)
            if progress:
                progress(1)
            return result

        return list(await asyncio.gather(*(one(s) for s in specs)))
