"""Tournament benchmark: gRPC vs in-process speed, bot strength with intervals, oracle gap.

    .venv/bin/python -m bench.bench_tournament            # small default (N=4)
    GLINTWICK_BENCH_DEALS=50 .venv/bin/python -m bench.bench_tournament

``run(deals)`` returns a dict: games/s for the same greedy-vs-strong games through an
embedded gRPC server and in process; mean penalty per game with 95% bootstrap
intervals for random/greedy/strong over ``deals`` duplicate deal sets (round robin,
in process); and strong vs oracle (in process, where the oracle sees every card).
All on whiskertrail cut to its first two contracts, two seats.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from dataclasses import asdict
from typing import Any

from clients.tournament.tournament import Config
from clients.tournament.tournament import run as run_tournament
from engine.rulesets import WHISKERTRAIL

SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])


async def _bench(deals: int, seed: int) -> dict[str, Any]:
    import logging

    import structlog

    from services.config import ServerOptions
    from services.server import start

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))

    out: dict[str, Any] = {"ruleset_hash": SHORT.hash, "seed": seed, "deals": deals}
    speed_bots = ["greedy", "strong"]
    # one untimed deal set per mode first: games/s is the steady state, without the
    # process's one-time costs (imports, finding the bots, the first solver calls)
    await run_tournament(Config(SHORT, speed_bots, deals=1, seed=seed + 1))
    t0 = time.perf_counter()
    _, local = await run_tournament(Config(SHORT, speed_bots, deals=deals, seed=seed))
    t_local = time.perf_counter() - t0
    running = await start(
        ServerOptions(grpc_address="127.0.0.1:0", http_address="", store="memory")
    )
    try:
        target = f"127.0.0.1:{running.grpc_port}"
        await run_tournament(Config(SHORT, speed_bots, deals=1, seed=seed + 1, target=target))
        t0 = time.perf_counter()
        _, remote = await run_tournament(
            Config(SHORT, speed_bots, deals=deals, seed=seed, target=target, concurrency=8)
        )
        t_remote = time.perf_counter() - t0
    finally:
        await running.stop(grace=0.5)
    lat = [x for r in remote for x in r.latencies]
    out["speed"] = {
        "games": len(local),
        "inprocess_games_per_s": round(len(local) / t_local, 2),
        "grpc_games_per_s": round(len(remote) / t_remote, 2),
        "grpc_mean_move_ms": round(1000 * sum(lat) / len(lat), 2) if lat else None,
        "same_scores": [r.scores for r in local] == [r.scores for r in remote],
    }
    summary, _ = await run_tournament(
        Config(SHORT, ["random", "greedy", "strong"], deals, seed=seed)
    )
    out["strength"] = summary["stats"]
    out["ratings"] = summary["ratings"]
    summary, _ = await run_tournament(Config(SHORT, ["oracle", "strong"], deals, seed=seed))
    out["oracle_gap"] = summary["stats"]
    return out


def run(deals: int | None = None, seed: int = 1) -> dict[str, Any]:
    n = deals if deals is not None else int(os.environ.get("GLINTWICK_BENCH_DEALS", "4"))
    return asyncio.run(_bench(n, seed))


if __name__ == "__main__":
    print(json.dumps(run(), indent=2, default=lambda o: asdict(o)))
