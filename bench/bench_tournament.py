"""Tournament benchmark: gRPC vs in-process speed, bot strength with intervals, oracle gap.

    .venv/bin/python -m bench.bench_tournament            # small default (N=4)
    GLINTWICK_BENCH_DEALS=50 .venv/bin/python -m bench.bench_tournament

``run(deals)`` returns a dict: games/s for the same greedy-vs-strong games through an
embedded gRPC server (on Play streams and by the unary loop) and in process;
``transports``: the same games against a server in its own process (in-memory
store), Play streams (prompts only, as the runner plays; and with every event,
``play_events``) against the unary loop in the same run: games/s, the server's
CPU time per move (from /proc, as bench_service reports it) and whether the scores
are the same; mean penalty per game with 95% bootstrap
intervals for random/greedy/strong over ``deals`` duplicate deal sets (round robin,
in process); and strong vs oracle (in process, where the oracle sees every card).
All on whiskertrail cut to its first two contracts, two seats.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from clients.botrunner import TRANSPORTS, Transport
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
    speed: dict[str, Any] = {
        "games": len(local),
        "inprocess_games_per_s": round(len(local) / t_local, 2),
    }
    try:
        target = f"127.0.0.1:{running.grpc_port}"
        for transport in TRANSPORTS:
            await run_tournament(
                Config(SHORT, speed_bots, 1, seed=seed + 1, target=target, transport=transport)
            )
            t0 = time.perf_counter()
            _, remote = await run_tournament(
                Config(
                    SHORT,
                    speed_bots,
                    deals=deals,
                    seed=seed,
                    target=target,
                    concurrency=8,
                    transport=transport,
                )
            )
            t_remote = time.perf_counter() - t0
            lat = [x for r in remote for x in r.latencies]
            speed[f"grpc_{transport}_games_per_s"] = round(len(remote) / t_remote, 2)
            speed[f"grpc_{transport}_mean_move_ms"] = (
                round(1000 * sum(lat) / len(lat), 2) if lat else None
            )
            speed[f"grpc_{transport}_same_scores"] = [r.scores for r in local] == [
                r.scores for r in remote
            ]
    finally:
        await running.stop(grace=0.5)
    speed["grpc_play_vs_unary"] = round(
        speed["grpc_play_games_per_s"] / speed["grpc_unary_games_per_s"], 2
    )
    out["speed"] = speed
    summary, _ = await run_tournament(
        Config(SHORT, ["random", "greedy", "strong"], deals, seed=seed)
    )
    out["strength"] = summary["stats"]
    out["ratings"] = summary["ratings"]
    summary, _ = await run_tournament(Config(SHORT, ["oracle", "strong"], deals, seed=seed))
    out["oracle_gap"] = summary["stats"]
    return out


def transports(deals: int, seed: int, concurrency: int = 8) -> dict[str, Any]:
    """The tournament against a server process of its own, on each transport in turn
    (an untimed deal set first): games/s, moves, server CPU µs per move, same scores."""
    from bench.bench_service import cpu_seconds, glintwick_server, served

    out: dict[str, Any] = {"deals": deals, "concurrency": concurrency, "store": "memory"}
    scores: dict[str, list[list[int]]] = {}
    modes: list[tuple[str, Transport, bool]] = [
        *((t, t, True) for t in TRANSPORTS),
        ("play_events", "play", False),
    ]
    with (
        tempfile.TemporaryDirectory(prefix="glintwick-bench-") as logs,
        served(glintwick_server(Path(logs), "memory")) as server,
    ):
        for name, transport, prompts_only in modes:
            warm = Config(SHORT, ["greedy", "strong"], 1, seed=seed + 1, target=server.target)
            warm = dataclasses.replace(warm, transport=transport, prompts_only=prompts_only)
            asyncio.run(run_tournament(warm))
            config = Config(
                SHORT,
                ["greedy", "strong"],
                deals,
                seed=seed,
                target=server.target,
                concurrency=concurrency,
                transport=transport,
                prompts_only=prompts_only,
            )
            before = cpu_seconds(server.pid)
            mine = time.process_time()
            t0 = time.perf_counter()
            _, results = asyncio.run(run_tournament(config))
            seconds = time.perf_counter() - t0
            after = cpu_seconds(server.pid)
            mine = time.process_time() - mine
            moves = sum(r.moves for r in results)
            scores[name] = [r.scores for r in results]
            out[name] = {
                "games": len(results),
                "moves": moves,
                "games_per_s": round(len(results) / seconds, 2),
                "server_cpu_us_per_move": (
                    round(1e6 * (after - before) / moves, 1)
                    if before is not None and after is not None and moves
                    else None
                ),
                # the bots and the SDK (this process): what the server's share is beside
                "client_cpu_us_per_move": round(1e6 * mine / moves, 1) if moves else None,
            }
    out["play_vs_unary_games_per_s"] = round(
        out["play"]["games_per_s"] / out["unary"]["games_per_s"], 2
    )
    out["play_events_vs_unary_games_per_s"] = round(
        out["play_events"]["games_per_s"] / out["unary"]["games_per_s"], 2
    )
    out["same_scores"] = scores["play"] == scores["unary"] == scores["play_events"]
    return out


def run(deals: int | None = None, seed: int = 1) -> dict[str, Any]:
    n = deals if deals is not None else int(os.environ.get("GLINTWICK_BENCH_DEALS", "4"))
    out = asyncio.run(_bench(n, seed))
    out["transports"] = transports(n, seed)
    return out


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["transports"]:  # only the Play-against-unary comparison
        n = int(os.environ.get("GLINTWICK_BENCH_DEALS", "4"))
        print(json.dumps(transports(n, 1), indent=2))
    else:
        print(json.dumps(run(), indent=2, default=lambda o: asdict(o)))
