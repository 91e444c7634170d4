"""The load test's options: each has a ``LOADTEST_*`` environment variable."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import loadtests.run

ROOT = Path(__file__).resolve().parents[2]

#: the sample of one move per metric and table transport: ``call``, the request that
#: makes it (its answer); ``cycle``, from sending it to the next decision's legal actions
#: (a unary table's views and ListLegalActions; a stream's result and next prompt)
MOVE_SAMPLES = {
    "call": {"unary": "SubmitAction", "play": "Play (act)"},
    "cycle": {"unary": "Unary (next prompt)", "play": "Play (next prompt)"},
}
TRANSPORTS = ("unary", "play")


#: the probe's samples (loadtests/probe.py), whichever transport it plays
PROBE_SAMPLES = {"probe-call": "call", "probe-cycle": "cycle"}
METRICS = (*MOVE_SAMPLES, *PROBE_SAMPLES)
#: who plays a step's tables: locust's table users, or the probe's grpc.aio client
TABLE_CLIENTS = ("locust", "aio")


def _env(name: str, default: str) -> str:
    return os.environ.get(f"LOADTEST_{name}", default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.run",
        description=(loadtests.run.__doc__ or "").split("\n\n")[0] or None,
        epilog="Every option has a LOADTEST_<NAME> environment variable (e.g. LOADTEST_TABLES).",
    )
    add = parser.add_argument
    add("--time", default=_env("TIME", "60s"), help="locust --run-time (per step with --steps)")
    add("--tables", type=int, default=int(_env("TABLES", "20")), help="gRPC tables in play")
    add(
        "--play-tables",
        type=int,
        default=int(_env("PLAY_TABLES", "0")),
        help="gRPC tables in play on Play streams",
    )
    add("--http-tables", type=int, default=int(_env("HTTP_TABLES", "2")))
    add("--solvers", type=int, default=int(_env("SOLVERS", "2")))
    add("--watchers", type=int, default=int(_env("WATCHERS", "10")))
    add(
        "--think-time",
        type=float,
        default=float(_env("THINK_TIME", "0.5")),
        help="mean seconds a table thinks before each move",
    )
    add("--solver-wait", type=float, default=float(_env("SOLVER_WAIT", "0.2")))
    add("--spawn-rate", type=float, default=float(_env("SPAWN_RATE", "20")))
    add(
        "--max-p99-ms",
        default=_env("MAX_P99_MS", "SubmitAction=100,*=250"),
        help="fail when a p99 is over its limit ('' none): '100' or 'SubmitAction=100,*=250'",
    )
    add(
        "--workers",
        type=int,
        default=int(_env("WORKERS", "2")),
        help="server processes (glintwick serve --workers; >1 needs the Redis store)",
    )
    add("--store", choices=["redis", "cluster", "memory"], default=_env("STORE", "redis"))
    add(
        "--locust-processes",
        type=int,
        default=int(_env("LOCUST_PROCESSES", "1")),
        help="load generator processes (locust --processes; 1: one process)",
    )
    add("--out", type=Path, default=Path(_env("OUT", str(ROOT / "build" / "loadtest"))))
    add(
        "--target",
        default=_env("TARGET", ""),
        help="gRPC host:port of a deployed service: start nothing, load it",
    )
    add(
        "--http-target",
        default=_env("HTTP_TARGET", ""),
        help="base URL of the deployed service's HTTP/JSON face (with --target)",
    )
    add("--steps", default=_env("STEPS", ""), help="table counts to step through, e.g. 5,10,20")
    add(
        "--step-p99-ms",
        type=float,
        default=float(_env("STEP_P99_MS", "100")),
        help="--steps: the move p99 a table count must hold",
    )
    add(
        "--step-metric",
        choices=METRICS,
        default=_env("STEP_METRIC", "call"),
        help="--steps: the move's sample that must hold: call (SubmitAction, Play (act)), "
        "cycle (to the next decision's legal actions: the next prompt), or either as the "
        "probe sees it (probe-call, probe-cycle: needs --probe-tables)",
    )
    add(
        "--probe-tables",
        type=int,
        default=int(_env("PROBE_TABLES", "0")),
        help="tables of loadtests/probe.py (a client outside locust) timed beside the load",
    )
    add(
        "--table-client",
        choices=TABLE_CLIENTS,
        default=_env("TABLE_CLIENT", "locust"),
        help="--steps: who plays the stepped tables: locust (its gevent table users) or aio "
        "(loadtests/probe.py, a grpc.aio client in a process of its own; then call and "
        "cycle are its samples)",
    )
    add(
        "--step-transports",
        default=_env("STEP_TRANSPORTS", "unary,play"),
        help="--steps: the table users stepped, in turn: unary (TableUser), play (PlayTableUser)",
    )
    add(
        "--profile",
        action="store_true",
        default=_env("PROFILE", "") not in ("", "0"),
        help="record the server with py-spy (top functions in <out>/profile-top.txt)",
    )
    add(
        "--profile-native",
        action="store_true",
        default=_env("PROFILE_NATIVE", "") not in ("", "0"),
        help="with --profile: C frames too (py-spy --native: grpc's core, protobuf, hiredis)",
    )
    add(
        "--server-root",
        type=Path,
        default=Path(_env("SERVER_ROOT", str(ROOT))),
        help="the checkout whose server code runs (e.g. a git worktree of a commit)",
    )
    add("locust_args", nargs="*", help="after --: passed to locust")
    return parser


def seconds(text: str) -> float:
    """locust's run-time syntax: 90, 90s, 2m, 1h30m."""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+)([hms])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a run time: {text!r} (e.g. 60s, 2m, 1h30m)")
    return float(sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts))
