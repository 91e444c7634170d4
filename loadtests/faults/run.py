"""The campaign's run and its command (``python -m loadtests.faults``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import loadtests.faults
from loadtests.faults.campaign import Campaign, Clients
from loadtests.faults.checks import Verdict, check_game
from loadtests.faults.figures import Figures, recovery_seconds, server_log_errors, worst_stall
from loadtests.faults.steps import Context, steps_for
from loadtests.faults.topologies import TOPOLOGIES
from loadtests.processes.server import UNLIMITED, ServerProcess
from services.store.redis import RedisStore


async def campaign(args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Any], bool]:
    topology = TOPOLOGIES[args.topology](workdir / "redis")
    topology.start()
    logs = workdir / "logs"
    logs.mkdir()
    servers = [
        ServerProcess(
            logs, *UNLIMITED, *topology.server_options, store=topology.url, name=f"server{i}"
        )
        for i in range(2)
    ]
    figures = Figures()
    clients: Clients | None = None
    try:
        for server in servers:
            await asyncio.to_thread(server.start)
        clients = Clients([s.address for s in servers], max(2, args.games // 20))
        play = Campaign(clients, figures, args.seed)
        play.think = args.think  # (each pause uniform in 0..2× this)
        context = Context(topology, servers, clients, figures)
        started = time.monotonic()
        tables = [asyncio.create_task(play.table(i)) for i in range(args.games)]
        await asyncio.sleep(args.warmup)
        for step in steps_for(topology, args.fault_seconds):
            at = time.monotonic()
            detail = await step.inject(context)
            repaired = time.monotonic()
            await asyncio.sleep(args.settle)
            figures.faults.append(
                {
                    "fault": step.name,
                    "at_s": round(at - started, 1),
                    "lasted_s": round(repaired - at, 1),
                    "detail": detail,
                    "start": at,
                }
            )
            print(f"  {step.name} at {at - started:.0f} s: {detail}", flush=True)
        play.stopping = True
        play.think = 0.0
        done, pending = await asyncio.wait(tables, timeout=args.finish)
        failures = [
            "cancelled" if t.cancelled() else repr(t.exception())
            for t in done
            if t.cancelled() or t.exception() is not None
        ]
        for task in pending:
            task.cancel()
        for fault in figures.faults:
            start = fault.pop("start")
            fault["recovery_s"] = recovery_seconds(figures.ack_times, start, time.monotonic())
            stall = worst_stall(play.games, start)
            fault["worst_stall_s"] = stall[0] if stall else None
            fault["worst_stall_game"] = stall[1] if stall else None
        elapsed = time.monotonic() - started
        verdict = Verdict()
        verdict.problems += [f"a table failed: {f}" for f in failures]
        if figures.abandoned:  # (a join retried with its request id is never SEAT_TAKEN)
            verdict.problems.append(f"{figures.abandoned} tables abandoned at join")
        store = RedisStore(topology.url)
        try:
            checker = clients.of(0)
            for game in play.games:
                with contextlib.suppress(asyncio.CancelledError):
                    await check_game(store, checker, game, verdict)
        finally:
            await store.close()
        unexpected = {c: n for c, n in figures.errors.items() if c in ("INTERNAL", "UNKNOWN")}
        ok = verdict.ok and not failures and not pending and not unexpected
        ok = ok and not figures.abandoned
        report = {
            "topology": topology.name,
            "games": figures.games,
            "games_finished": figures.finished,
            "concurrent_tables": args.games,
            "moves_acknowledged": figures.moves,
            "seconds": round(elapsed, 1),
            "moves_per_second": round(figures.moves / elapsed, 1),
            "faults": figures.faults,
            "client_errors_by_reason": dict(figures.errors.most_common()),
            "client_error_samples": figures.samples,
            "tables_abandoned_at_join": figures.abandoned,
            "watch_resumes": figures.watch_resumes,
            "play_session_reopens": figures.play_resumes,
            "streams_checked": sum(len(g.streams) for g in play.games),
            "moves_lost": verdict.lost,
            "applied_twice": verdict.duplicated,
            "applied_unacknowledged": verdict.unacknowledged,
            "state_mismatches": verdict.state_mismatches,
            "unfinished": verdict.unfinished + len(pending),
            "stream_faults": verdict.stream_faults,
            "server_log_errors": dict(server_log_errors(logs)),
            "refusals_not_retried": {
                what: f"{n}, the first at {figures.first_fatal[what][0] - started:.1f} s:"
                f" {figures.first_fatal[what][1]}"
                for what, n in figures.fatal.most_common()
            },
            "problems": verdict.problems[:20],
            "ok": ok,
        }
        return report, ok
    finally:
        if clients is not None:
            await clients.close()
        for server in servers:
            server.stop()
        topology.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.faults",
        description=(loadtests.faults.__doc__ or "").split("\n")[0],
    )
    parser.add_argument("--games", type=int, default=200, help="tables in play at once")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before the first fault")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after each fault")
    parser.add_argument("--finish", type=float, default=180.0, help="seconds for every game to end")
    parser.add_argument(
        "--fault-seconds", type=float, default=5.0, help="how long Redis stays frozen, etc."
    )
    parser.add_argument("--topology", choices=sorted(TOPOLOGIES), default="standalone")
    parser.add_argument("--think", type=float, default=0.25, help="mean seconds between moves")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--keep-logs", action="store_true", help="keep the servers' logs")
    args = parser.parse_args(argv)
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    workdir = Path(tempfile.mkdtemp(prefix="glintwick-faults-"))
    ok = False
    try:
        report, ok = asyncio.run(campaign(args, workdir))
    finally:
        if ok and not args.keep_logs:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"kept the servers' logs: {workdir}/logs", flush=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    print("faults: OK" if ok else "faults: FAILED", flush=True)
    return 0 if ok else 1
