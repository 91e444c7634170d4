"""A whole tournament: schedule, play (gRPC or in process), score, optionally SPRT."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from clients.botrunner import Transport
from clients.tournament import schedule as sched
from clients.tournament.ratings import rate
from clients.tournament.runner import GameResult, run_grpc, run_inprocess
from clients.tournament.sprt import Sprt
from clients.tournament.stats import all_pairs, bot_stats, per_deal_set
from engine.rulesets import RuleSet


@dataclass
class Config:
    rules: RuleSet
    bots: list[str]
    deals: int = 4
    seats: int = 2
    seed: int = 1
    schedule: str = "round-robin"
    concurrency: int = 8
    target: str | None = None  # None: in process, on the engine
    sprt: tuple[str, str] | None = None  # play A vs B deal set by deal set until decided
    progress: bool = False
    transport: Transport = "play"  # through a server: Play streams, or the unary loop
    prompts_only: bool = True  # Play streams without events (the bots read none)


def summarize(config: Config, results: Sequence[GameResult], sprt: Sprt | None) -> dict[str, Any]:
    stats = bot_stats(results, config.seed)
    return {
        "ruleset": config.rules.name,
        "ruleset_hash": config.rules.hash,
        "seed": config.seed,
        "bots": config.bots,
        "seats": config.seats,
        "schedule": config.schedule,
        "deals": config.deals,
        "mode": "grpc" if config.target else "inprocess",
        "games": len(results),
        "stats": [asdict(s) for s in stats],
        "ratings": [asdict(r) for r in rate(results)],
        "pairs": [asdict(p) for p in all_pairs(results, [s.bot for s in stats], config.seed)],
        "illegal": sum(r.illegal for r in results),
        "timeouts": sum(r.timeouts for r in results),
        "errors": sum(r.errors for r in results),
        "sprt_pair": list(config.sprt) if config.sprt else None,
        "sprt": sprt.summary() if sprt else None,
    }


async def _play(config: Config, specs: list[sched.GameSpec], bar: Any) -> list[GameResult]:
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
            config.prompts_only,
        )
    return run_inprocess(specs, config.rules, config.seed, progress)


async def run(config: Config) -> tuple[dict[str, Any], list[GameResult]]:
    """Play the tournament; (summary, every game result in schedule order)."""
    bar = None
    if config.progress:
        from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

        bar = tqdm(total=config.deals * config.seats * 8, unit="game", leave=False)
    try:
        if config.sprt is None:
            specs = sched.games(
                config.bots, config.seats, config.deals, config.seed, config.schedule
            )
            if bar is not None:
                bar.total = len(specs)
            results = await _play(config, specs, bar)
            return summarize(config, results, None), results
        a, b = config.sprt
        test = Sprt()
        results = []
        batch = max(1, config.concurrency // config.seats)
        done = 0
        while done < config.deals and test.decision == "undecided":
            n = min(batch, config.deals - done)
            specs = sched.games([a, b], config.seats, n, config.seed, "gauntlet", first_deal=done)
            played = await _play(config, specs, bar)
            for sets in per_deal_set(played).values():
                test.add(sum(sets[a]), sum(sets[b]))
                if test.decision != "undecided":
                    break
            results.extend(played)
            done += n
        for i, r in enumerate(results):
            r.spec = sched.GameSpec(i, *_fields(r.spec)[1:])
        return summarize(config, results, test), results
    finally:
        if bar is not None:
            bar.close()


def _fields(spec: sched.GameSpec) -> tuple[Any, ...]:
    return (
        spec.index,
        spec.lineup,
        spec.lineup_index,
        spec.deal,
        spec.rotation,
        spec.seats,
        spec.seed,
    )


def run_sync(config: Config) -> tuple[dict[str, Any], list[GameResult]]:
    return asyncio.run(run(config))
