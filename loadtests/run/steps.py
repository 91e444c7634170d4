"""``--steps``: one run per table count and transport, in turn, and the largest count
each transport holds (its move p99 within ``--step-p99-ms``, no failure)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from loadtests.run.arguments import METRICS, MOVE_SAMPLES, PROBE_SAMPLES, TRANSPORTS
from loadtests.run.report import print_summary
from loadtests.run.runs import RunResult, run_locust
from loadtests.run.served import Service


def submit_p99(
    result: RunResult, transport: str = "unary", metric: str = "call", aio: bool = False
) -> float | None:
    """The p99 of the moves of ``transport``'s table users (ms), by ``metric``; ``aio``:
    the tables are the probe's (``call`` and ``cycle`` are its samples)."""
    if aio:
        metric = {"call": "probe-call", "cycle": "probe-cycle"}[metric]
    if metric in PROBE_SAMPLES:
        row = result.probe.get("samples", {}).get(PROBE_SAMPLES[metric], {})
        failed = result.probe.get("failures") or result.probe.get("transport") != transport
        return None if failed or not row.get("count") else float(row["p99"])
    name = MOVE_SAMPLES[metric][transport]
    rows = [r for r in result.stats if r["name"] == name and r["type"] == "grpc"]
    return rows[0]["p99_ms"] if rows else None


class Holds:
    """Which table counts each transport held, stepping up: a count is held when its
    move p99 is within ``limit`` ms with no failure and every count before it was."""

    def __init__(self, transports: Sequence[str], limit: float) -> None:
        self.limit = limit
        self.held: dict[str, int | None] = dict.fromkeys(transports)
        self.broken: set[str] = set()

    def record(self, transport: str, tables: int, p99: float | None, failed: bool) -> None:
        if p99 is None or p99 > self.limit or failed:
            self.broken.add(transport)
        elif transport not in self.broken:
            self.held[transport] = tables


def run_steps(
    args: argparse.Namespace, steps: Sequence[int], served: Service, summary: dict[str, Any]
) -> int:
    """One run per table count of ``steps`` and transport of ``--step-transports``, in
    turn, each transport until its first count that does not hold; each run and the
    counts held go into ``summary``.  The exit code: 1 if a request failed, else 0."""
    transports = [t.strip() for t in args.step_transports.split(",") if t.strip()]
    unknown = set(transports) - set(TRANSPORTS)
    if unknown or not transports:
        raise SystemExit(f"--step-transports: unary and/or play, not {sorted(unknown)}")
    summary["steps"] = []
    code = 0
    aio = args.table_client == "aio"
    if aio and args.probe_tables > 0:
        raise SystemExit("--table-client aio: the tables are the probe's already")
    if aio and args.step_metric in PROBE_SAMPLES:
        args.step_metric = PROBE_SAMPLES[args.step_metric]
    metrics = METRICS if args.probe_tables > 0 else tuple(MOVE_SAMPLES)
    if args.step_metric not in metrics:
        raise SystemExit(f"--step-metric {args.step_metric} needs --probe-tables")
    holds = {m: Holds(transports, args.step_p99_ms) for m in metrics}
    # the transports take turns at each count (so a noisy minute of a shared
    # machine falls on both); each stops at its first count over the limit
    going = list(transports)
    for tables in steps:
        for transport in list(going):
            prefix = args.out / f"step-{transport}-{tables}"
            # only this transport's table users (and the other users as configured)
            counts = (0, tables) if transport == "play" else (tables, 0)
            if aio:
                counts = (0, 0)
            result = run_locust(
                args,
                counts[0],
                prefix,
                served.grpc_target,
                served.http_url,
                served.watch,
                counts[1],
                aio_tables=(transport, tables) if aio else None,
            )
            print_summary(result, f"step: {tables} {transport} tables")
            p99s = {m: submit_p99(result, transport, m, aio) for m in metrics}
            failures = sum(r["failures"] for r in result.stats if r["name"] == "Aggregated")
            if aio and result.exit_code:
                failures += 1  # (the tables' own failures: the probe's report)
            summary["steps"].append(
                {
                    "transport": transport,
                    "tables": tables,
                    "move_p99_ms": p99s[args.step_metric],
                    "move_p99_ms_by_metric": p99s,
                    **asdict(result),
                }
            )
            if failures:
                code = 1
            for metric, p99 in p99s.items():
                holds[metric].record(transport, tables, p99, bool(failures))
            if transport in holds[args.step_metric].broken:
                going.remove(transport)
    summary["tables_held"] = holds[args.step_metric].held
    summary["tables_held_by_metric"] = {m: h.held for m, h in holds.items()}
    for metric in metrics:
        probed = f"the probe's {PROBE_SAMPLES.get(metric)}"
        names = MOVE_SAMPLES.get(metric) or dict.fromkeys(TRANSPORTS, probed)
        if aio:
            names = dict.fromkeys(TRANSPORTS, f"the aio tables' {metric}")
        for transport in transports:
            print(
                f"\nlargest {transport} table count with {names[transport]} p99"
                f" <= {args.step_p99_ms:.0f} ms: {holds[metric].held[transport]}"
                + ("" if metric == args.step_metric else " (of the counts run)")
            )
    return code
