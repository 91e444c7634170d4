"""This checkout against another one (an older commit), measured in one run.

    git worktree add /tmp/before <commit> && make -C /tmp/before install
    .venv/bin/python -m bench.against_tree /tmp/before [--pairs 5]

Each figure alternates the two trees, pair after pair (which goes first alternates
too), so that both meet the same load; the ratio quoted is the median of the per-pair
ratios (this tree / the other).

* ``tournament``: in-process games/s of a greedy/strong tournament on the short
  whiskertrail of ``bench.bench_tournament`` (after one untimed warm-up game);
* ``solver``: ``analyse`` over the conformance corpus, µs per hand (the fastest of
  several passes per tree process);
* ``play``: moves/s of ``bench.bench_play``'s games on Play streams, prompts only
  (the client's bots and the server in one process, on the memory store: the table
  core and its Play runner on one side of the stream, the server's session on the
  other; after one untimed warm-up game);
* ``submit``: SubmitAction calls/s and server CPU per move, both trees' servers
  against one real Redis, with the bare GET + SET server as the common baseline;
* ``play_server``: server CPU per move of ``bench.bench_floor``'s games on Play
  streams, prompts only, each tree's server in a process of its own, on one real Redis
  and on the memory store, played by this tree's client (which asks for results in
  prompts: a server that does not know the field ignores it); the messages per move,
  and the floor (a bare grpc.aio stream, one EVALSHA a message) in the same pairs;
  Redis's own CPU per move (INFO cpu) in the Redis runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis

from bench.bench_play import _play
from bench.bench_service import (
    _measure,
    _ping,
    _SubmitLoad,
    baseline_server,
    cpu_seconds,
    glintwick_server,
    served,
)
from loadtests.processes.redis import redis_server

HERE = Path(__file__).resolve().parent.parent

TOURNAMENT = """
import asyncio, time
from bench.bench_tournament import SHORT
from clients.tournament.tournament import Config, run
asyncio.run(run(Config(SHORT, ["greedy", "strong"], deals=1, seed=99)))
t0 = time.perf_counter()
_, games = asyncio.run(run(Config(SHORT, ["greedy", "strong"], deals={deals}, seed=1)))
print(len(games) / (time.perf_counter() - t0))
"""

# (``_play`` is the one piece of bench_play both trees have that plays on Play streams
# alone: the code before issue 28 has no public entry for it)
PLAY = """
import asyncio
from bench.bench_play import _play
from glintwick_cli import start_server
from services.config import ServerOptions
async def measure():
    running = await start_server(
        ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="", bots=False)
    )
    target = f"127.0.0.1:{{running.grpc_port}}"
    try:
        await _play(target, [b"warm-up"], prompts_only=True)
        seeds = [f"bench play {{n}}".encode() for n in range({games})]
        played = await _play(target, seeds, prompts_only=True)
    finally:
        await running.stop(grace=0.5)
    return played["moves"] / played["seconds"]
print(asyncio.run(measure()))
"""

SOLVER = """
import json, time
from engine.cards import cards_from_codes
from engine.rulesets import PRESETS
from engine.solver import analyse
cases = []
for line in open("tests/data/solver-cases.jsonl"):
    c = json.loads(line)
    rules = PRESETS[c["ruleset"]]
    cases.append((cards_from_codes(c["hand"], rules.decks, rules.jokers), rules, c["round"]))
best = float("inf")
for _ in range(7):
    t0 = time.perf_counter()
    for hand, rules, rnd in cases:
        analyse(hand, rules, rnd)
    best = min(best, (time.perf_counter() - t0) / len(cases))
print(best * 1e6)
"""


def _python(tree: Path) -> str:
    return str(tree / ".venv" / "bin" / "python")


def _snippet(tree: Path, code: str) -> float:
    out = subprocess.run(
        [_python(tree), "-c", code], cwd=tree, check=True, capture_output=True, text=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def _pairs(other: Path, code: str, pairs: int) -> dict[str, Any]:
    mine: list[float] = []
    theirs: list[float] = []
    for pair in range(pairs):
        # (which tree goes first alternates: a load that grows or fades falls on both)
        if pair % 2 == 0:
            theirs.append(_snippet(other, code))
            mine.append(_snippet(HERE, code))
        else:
            mine.append(_snippet(HERE, code))
            theirs.append(_snippet(other, code))
    return {
        "this": round(statistics.median(mine), 2),
        "other": round(statistics.median(theirs), 2),
        "ratios": [round(a / b, 3) for a, b in zip(mine, theirs, strict=True)],
    }


def submit(other: Path, pairs: int, seconds: float, concurrency: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"this": [], "other": [], "getset": []}
    with contextlib.ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="glintwick-bench-")))
        redis_url = stack.enter_context(redis_server())
        getset = stack.enter_context(baseline_server(logs, redis_url))
        servers = {}
        for name, tree in (("this", HERE), ("other", other)):
            # each tree's server on its own code, run from its own folder (on the
            # default event loop: a tree may predate --event-loop)
            server = glintwick_server(
                logs, redis_url, event_loop=None, name=name, python=_python(tree), root=tree
            )
            servers[name] = stack.enter_context(served(server))
        for pair in range(pairs):
            runs["getset"].append(_measure(getset, seconds, concurrency, _ping))
            for name in ("other", "this") if pair % 2 == 0 else ("this", "other"):
                runs[name].append(
                    _measure(servers[name], seconds, concurrency, _SubmitLoad(concurrency))
                )
    out: dict[str, Any] = {}
    for name, measured in runs.items():
        out[name] = {
            "per_second": statistics.median(m["per_second"] for m in measured),
            "server_cpu_us": statistics.median(m.get("server_cpu_us", 0.0) for m in measured),
        }
    out["this_vs_other"] = [
        round(a["per_second"] / b["per_second"], 3)
        for a, b in zip(runs["this"], runs["other"], strict=True)
    ]
    out["server_cpu_this_vs_other"] = [
        round(a["server_cpu_us"] / b["server_cpu_us"], 3)
        for a, b in zip(runs["this"], runs["other"], strict=True)
        if a.get("server_cpu_us") and b.get("server_cpu_us")
    ]
    for name in ("this", "other"):
        out[f"{name}_vs_getset"] = round(
            statistics.median(
                a["per_second"] / b["per_second"]
                for a, b in zip(runs[name], runs["getset"], strict=True)
            ),
            3,
        )
    return out


#: the figures of each Play run, per move
PER_MOVE = ("cpu_us_per_move", "redis_cpu_us_per_move", "received_per_move", "sent_per_move")


def play_server(other: Path, pairs: int, games: int) -> dict[str, Any]:
    from bench.bench_floor import _a_prompt, _floor, _glintwick, floor_server

    runs: dict[str, list[dict[str, Any]]] = {}
    with contextlib.ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="glintwick-bench-")))
        redis_url = stack.enter_context(redis_server())
        stats = stack.enter_context(contextlib.closing(redis.Redis.from_url(redis_url)))
        servers = {}
        for name, tree in (("this", HERE), ("other", other)):
            for store in ("redis", "memory"):
                server = glintwick_server(
                    logs, redis_url if store == "redis" else "memory", event_loop=None,
                    name=f"{name}-{store}", python=_python(tree), root=tree,
                )  # fmt: skip
                servers[f"{name}_{store}"] = stack.enter_context(served(server))
        reply, act = asyncio.run(_a_prompt(servers["this_redis"].target))
        floor = stack.enter_context(floor_server(logs, redis_url, reply))
        for running in servers.values():
            asyncio.run(_play(running.target, [b"warm-up"], prompts_only=True))
        seeds = [f"bench play {n}".encode() for n in range(games)]
        for _ in range(pairs):
            for name in ("other_redis", "this_redis", "other_memory", "this_memory"):
                runs.setdefault(name, []).append(_glintwick(servers[name], stats, seeds))
            moves = runs["this_redis"][-1]["moves"]
            start = cpu_seconds(floor.pid)
            asyncio.run(_floor(floor.target, act, games, moves))
            after = cpu_seconds(floor.pid)
            assert start is not None and after is not None
            runs.setdefault("floor", []).append(
                {"cpu_us_per_move": round(1e6 * (after - start) / moves, 1)}
            )
    out: dict[str, Any] = {}
    for name, measured in runs.items():
        out[name] = {
            key: round(float(statistics.median(m[key] for m in measured)), 2)
            for key in PER_MOVE
            if key in measured[0]
        }
        out[name]["cpu_us_range"] = [m["cpu_us_per_move"] for m in measured]
    out["redis_commands_per_move"] = {
        name: runs[name][-1]["redis_commands"] for name in ("this_redis", "other_redis")
    }
    for store in ("redis", "memory"):
        ratios = [
            round(a["cpu_us_per_move"] / b["cpu_us_per_move"], 3)
            for a, b in zip(runs[f"this_{store}"], runs[f"other_{store}"], strict=True)
        ]
        out[f"cpu_{store}_this_vs_other"] = ratios
        out[f"median_cpu_{store}_ratio"] = statistics.median(ratios)
    for name in ("this_redis", "other_redis"):
        out[f"{name}_vs_floor"] = statistics.median(
            round(a["cpu_us_per_move"] / b["cpu_us_per_move"], 3)
            for a, b in zip(runs[name], runs["floor"], strict=True)
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout, with its own .venv")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--games", type=int, default=8, help="Play-stream games per pair")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--only",
        choices=["tournament", "play", "solver", "submit", "play_server"],
        action="append",
    )
    args = parser.parse_args()
    other = args.other.resolve()
    wanted = args.only or ["tournament", "play", "solver", "submit"]
    results: dict[str, Any] = {"other": str(other)}
    if "tournament" in wanted:
        results["tournament_games_per_s"] = _pairs(
            other, TOURNAMENT.format(deals=args.deals), args.pairs
        )
    if "play" in wanted:
        results["play_moves_per_s"] = _pairs(other, PLAY.format(games=args.games), args.pairs)
    if "solver" in wanted:
        results["solver_us_per_hand"] = _pairs(other, SOLVER, args.pairs)
    if "submit" in wanted:
        results["submit"] = submit(other, args.pairs, args.seconds, args.concurrency)
    if "play_server" in wanted:
        results["play_server"] = play_server(other, args.pairs, args.games)
    for key in ("tournament_games_per_s", "play_moves_per_s", "solver_us_per_hand"):
        if key in results:
            results[key]["median_ratio"] = statistics.median(results[key]["ratios"])
    if "submit" in results:
        submitted = results["submit"]
        submitted["median_ratio"] = statistics.median(submitted["this_vs_other"])
        if submitted["server_cpu_this_vs_other"]:
            submitted["median_cpu_ratio"] = statistics.median(submitted["server_cpu_this_vs_other"])
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
