"""A whole tournament: schedule, play (gRPC or in process), score, optionally SPRT;
or one shard of it (:mod:`.shards`).

The schedule and the games name each bot by its spec (what loads it); the results
by the bot's name (``clients.bots.bot_name``: its class's ``name``), so one class is
one bot in the results whether a registered name, ``module:Class`` or
``path/to/file.py:Class`` loaded it."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clients.botrunner import Transport
from clients.bots.registry import bot_names
from clients.tournament import schedule as sched
from clients.tournament.ratings import rate
from clients.tournament.runner import Finished, GameResult, run_grpc, run_inprocess
from clients.tournament.shards import Plan, Shard, ShardError, ShardWriter, merge
from clients.tournament.shards import results as shard_results
from clients.tournament.sprt import MARGIN, Sprt
from clients.tournament.stats import (
    all_pairs,
    bot_stats,
    mutual_differences,
    mutual_pair,
    order_spreads,
    round_endings,
    substituted_differences,
    substitution_bot_stats,
    substitution_pair,
    substitution_pairs,
)
from engine.rulesets import RuleSet

#: what ``--sprt`` plays: per deal, each bot's own game and the other bot in each seat,
#: both ways
SPRT_SCHEDULE = sched.MUTUAL_SUBSTITUTION


@dataclass
class Config:
    rules: RuleSet
    bots: list[str]
    deals: int = 4
    seats: int = 2
    seed: int = 1
    schedule: str = "round-robin"
    seating: str = "balanced"  # every cyclic order of a lineup, or "cyclic": its own only
    concurrency: int = 8
    workers: int = 1  # in process: games played in this many processes at once
    target: str | None = None  # None: in process, on the engine
    # play A vs B deal set by deal set until decided, on the mutual substitution design
    # (``schedule`` is then ignored)
    sprt: tuple[str, str] | None = None
    sprt_margin: float = MARGIN  # H1 of the SPRT: A better by this many points per game
    progress: bool = False
    transport: Transport = "play"  # through a server: Play streams, or the unary loop
    prompts_only: bool = True  # Play streams without events (the bots read none)
    shard: Shard | None = None  # play only this shard's deal sets, recorded in ``out``
    out: Path | None = None  # where a shard's results file is (shards.Shard.file)
    record: Path | None = None  # in process: each game's replayable log goes here

    @property
    def played_schedule(self) -> str:
        """The schedule the games follow: an SPRT plays the mutual substitution."""
        return SPRT_SCHEDULE if self.sprt is not None else self.schedule

    def plan(self) -> Plan:
        return Plan(
            self.rules,
            tuple(self.bots),
            self.seats,
            self.schedule,
            self.deals,
            self.seed,
            self.seating,
        )


def named(config: Config, results: Sequence[GameResult]) -> list[GameResult]:
    """The results with every bot by its name in place of its spec (the games are
    the same: a bot's seed does not depend on how it is named)."""
    names = bot_names(config.bots)

    def rename(spec: sched.GameSpec) -> sched.GameSpec:
        return dataclasses.replace(
            spec,
            lineup=tuple(names[s] for s in spec.lineup),
            seats=tuple(names[s] for s in spec.seats),
        )

    return [dataclasses.replace(r, spec=rename(r.spec)) for r in results]


def summarize(config: Config, results: Sequence[GameResult], sprt: Sprt | None) -> dict[str, Any]:
    """The summary of results :func:`named` names (the specs of ``config`` are named
    alike)."""
    names = bot_names(config.bots)
    schedule = config.played_schedule
    spreads = order_spreads(results, config.seed)
    if schedule in ("substitution", SPRT_SCHEDULE):
        stats = substitution_bot_stats(results, config.seed)
        spreads = []  # no third bot at a table: no seat order to spread over
    else:
        stats = bot_stats(results, config.seed)
    if schedule == "substitution":
        pairs = substitution_pairs(results, config.seed)
    elif schedule == SPRT_SCHEDULE:
        # the mutual difference, then its two halves: A among Bs, B among As
        a, b = (names[s] for s in (config.sprt or config.bots))
        pair = mutual_pair(results, a, b, config.seed)
        halves = substituted_differences(results)
        pairs = [pair] if pair is not None else []
        for candidate, reference in ((a, b), (b, a)):
            if halves.get((candidate, reference)):
                diffs = list(halves[(candidate, reference)].values())
                pairs.append(substitution_pair(candidate, reference, diffs, config.seed))
    else:
        pairs = all_pairs(results, [s.bot for s in stats], config.seed)
    return {
        "ruleset": config.rules.name,
        "ruleset_hash": config.rules.hash,
        "seed": config.seed,
        "bots": list(dict.fromkeys(names[s] for s in config.bots)),
        "seats": config.seats,
        "schedule": schedule,
        "deals": config.deals,  # per lineup; an SPRT's most
        "deal_sets": len({r.spec.deal_set for r in results}),
        "mode": results[0].mode if results else ("grpc" if config.target else "inprocess"),
        "games": len(results),
        "stats": [asdict(s) for s in stats],
        "ratings": [asdict(r) for r in rate(results)],
        "seating": config.seating,
        "pairs": [asdict(p) for p in pairs],
        "order_spreads": [asdict(o) for o in spreads],
        "round_ends": round_endings(results),
        "illegal": sum(r.illegal for r in results),
        "timeouts": sum(r.timeouts for r in results),
        "errors": sum(r.errors for r in results),
        "sprt_pair": [names[s] for s in config.sprt] if config.sprt else None,
        "sprt": sprt.summary() if sprt else None,
    }


async def _play(
    config: Config, specs: list[sched.GameSpec], bar: Any, finished: Finished | None = None
) -> list[GameResult]:
    progress = bar.update if bar is not None else None
    if config.target:
        return await run_grpc(
            config.target,
            specs,
            config.rules,
            config.seed,
            config.concurrency,
            progress,
            config.transport,
            finished=finished,
            prompts_only=config.prompts_only,
        )
    return run_inprocess(
        specs, config.rules, config.seed, progress, finished, config.workers, config.record
    )


async def _play_shard(config: Config, bar: Any) -> tuple[dict[str, Any], list[GameResult]]:
    """One shard: its games not recorded yet, each recorded as it finishes; the summary
    of the shard's games (``glintwick tournament merge`` summarizes the tournament)."""
    assert config.shard is not None
    if config.sprt is not None:
        raise ShardError("an SPRT decides deal set by deal set: it cannot be sharded")
    if config.out is None:
        raise ShardError("a shard needs --out, the directory of its results file")
    writer = ShardWriter(config.shard.file(config.out), config.plan(), config.shard)
    todo = writer.todo()
    if bar is not None:
        bar.total = len(todo)
    await _play(config, todo, bar, writer.add)
    played = named(config, shard_results(writer.path))
    return summarize(config, played, None), played


async def run(config: Config) -> tuple[dict[str, Any], list[GameResult]]:
    """Play the tournament; (summary, every game result in schedule order).
    BotSpecError, before any game, when two of the bots go by one name."""
    bot_names(config.bots)
    bar = None
    if config.progress:
        from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

        # (a schedule's own count replaces it once known; an SPRT's is its most)
        bar = tqdm(total=config.deals * 2 * (config.seats + 1), unit="game", leave=False)
    try:
        if config.shard is not None:
            return await _play_shard(config, bar)
        if config.sprt is None:
            specs = sched.games(
                config.bots,
                config.seats,
                config.deals,
                config.seed,
                config.schedule,
                seating=config.seating,
            )
            if bar is not None:
                bar.total = len(specs)
            results = named(config, await _play(config, specs, bar))
            return summarize(config, results, None), results
        a, b = config.sprt
        test = Sprt(margin=config.sprt_margin)
        results = []
        per_deal = 2 * (config.seats + 1)  # both bots' own games, each among the other's
        batch = max(1, config.concurrency // per_deal)
        done = 0
        while done < config.deals and test.decision == "undecided":
            n = min(batch, config.deals - done)
            specs = sched.games([a, b], config.seats, n, config.seed, SPRT_SCHEDULE, done)
            played = await _play(config, specs, bar)
            used: set[int] = set()
            for deal, difference in mutual_differences(played, a, b).items():
                test.observe(difference)
                used.add(deal)
                if test.decision != "undecided":
                    break
            # the report covers the deal sets the test saw, no more (a batch's others
            # were played, not counted)
            results.extend(r for r in played if r.spec.deal in used)
            done += n
        for i, r in enumerate(results):
            r.spec = dataclasses.replace(r.spec, index=i)
        results = named(config, results)
        return summarize(config, results, test), results
    finally:
        if bar is not None:
            bar.close()


def merged(paths: Sequence[Path]) -> tuple[dict[str, Any], list[GameResult]]:
    """The summary of a sharded tournament from its shards' results files (or their
    directories): what one process playing the whole tournament gives."""
    plan, results = merge(paths)
    config = Config(
        plan.rules,
        list(plan.bots),
        deals=plan.deals,
        seats=plan.seats,
        seed=plan.seed,
        schedule=plan.schedule,
        seating=plan.seating,
    )
    played = named(config, results)
    return summarize(config, played, None), played


def run_sync(config: Config) -> tuple[dict[str, Any], list[GameResult]]:
    return asyncio.run(run(config))
