"""One run of the load: locust headless (its users as configured), the probe beside it
or as the whole load, the CPU of every process sampled, the server profiled."""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtests.processes.child import ChildProcess
from loadtests.run.arguments import ROOT, seconds
from loadtests.run.cpu import CpuSampler
from loadtests.run.profiling import profile_top, start_profiler
from loadtests.run.served import SERVER

LOCUSTFILE = ROOT / "loadtests" / "locustfile.py"
#: loaded by locust beside the locustfile (see there; not imported here: locust
#: monkey-patches the standard library when imported)
HOOKS = Path(__file__).with_name("locust_hooks.py")
#: what the run's statistics file adds to the ``--csv`` prefix (written by HOOKS)
FINAL_STATS = "_final_stats.csv"
#: the CPU group of the probe's tables when they are the whole load
AIO_TABLES = "load generator (aio tables)"


@dataclass
class RunResult:
    exit_code: int
    stats: list[dict[str, Any]] = field(default_factory=list)
    cpu: dict[str, Any] = field(default_factory=dict)
    profile: str = ""
    probe: dict[str, Any] = field(default_factory=dict)


def read_stats(prefix: Path) -> list[dict[str, Any]]:
    """The run's statistics per request and in all ("Aggregated"), as locust had them
    at the run's end (:mod:`loadtests.run.locust_hooks`)."""
    path = Path(f"{prefix}{FINAL_STATS}")
    if not path.exists():
        return []
    rows = []
    with path.open() as handle:
        for row in csv.DictReader(handle):
            rows.append(
                {
                    "type": row["Type"],
                    "name": row["Name"],
                    "requests": int(row["Request Count"]),
                    "failures": int(row["Failure Count"]),
                    "rps": float(row["Requests/s"]),
                    "p50_ms": _number(row["50%"]),
                    "p95_ms": _number(row["95%"]),
                    "p99_ms": _number(row["99%"]),
                    "max_ms": _number(row["Max Response Time"]),
                }
            )
    return rows


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _user_counts(args: argparse.Namespace, tables: int, play_tables: int | None) -> tuple[int, int]:
    """A run's Play tables and its locust users in all."""
    play = args.play_tables if play_tables is None else play_tables
    return play, tables + play + args.http_tables + args.solvers + args.watchers


def locust_command(
    args: argparse.Namespace,
    grpc_target: str,
    http_url: str,
    tables: int,
    prefix: Path,
    play_tables: int | None = None,
) -> list[str]:
    play, users = _user_counts(args, tables, play_tables)
    command = [
        sys.executable, "-m", "locust", "-f", f"{LOCUSTFILE},{HOOKS}",
        "--headless", "--only-summary",
        "--host", grpc_target, "--http-host", http_url, "--run-time", args.time,
        "--users", str(users), "--spawn-rate", str(args.spawn_rate), "--stop-timeout", "0",
        "--tables", str(tables), "--play-tables", str(play),
        "--http-tables", str(args.http_tables),
        "--solvers", str(args.solvers), "--watchers", str(args.watchers),
        "--think-time", str(args.think_time), "--solver-wait", str(args.solver_wait),
        "--max-p99-ms", args.max_p99_ms,
        "--csv", str(prefix), "--html", f"{prefix}-report.html",
    ]  # fmt: skip
    if args.locust_processes > 1:
        command += ["--processes", str(args.locust_processes)]
    return command + list(args.locust_args)


def run_locust(
    args: argparse.Namespace,
    tables: int,
    prefix: Path,
    grpc_target: str,
    http_url: str,
    watch: dict[str, list[int]],
    play_tables: int | None = None,
    aio_tables: tuple[str, int] | None = None,
) -> RunResult:
    """One locust run (with the probe beside it, if asked); ``aio_tables``: (transport,
    count) tables played by a :class:`Probe` as the load itself, and locust only for
    the other users (not started when there are none)."""
    command = locust_command(args, grpc_target, http_url, tables, prefix, play_tables)
    play, users = _user_counts(args, tables, play_tables)
    locust = ChildProcess(command, cwd=ROOT) if users > 0 or aio_tables is None else None
    probe = None
    groups: dict[str, list[int]] = {}
    if locust is not None:
        groups["load generator (locust)"] = [locust.start().pid]
    if aio_tables is not None:
        probe = Probe.whole_load(args, grpc_target, *aio_tables, prefix)
        groups[AIO_TABLES] = [probe.pid]
    elif args.probe_tables > 0:
        probe = Probe.beside(args, grpc_target, "play" if play > 0 else "unary", prefix, users)
    sampler = CpuSampler({**groups, **watch})
    sampler.start()
    raw = Path(f"{prefix}-profile.txt")
    profilers: list[subprocess.Popen[bytes]] = []
    timer = None
    if args.profile and SERVER in watch:
        # the middle 60% of the run: not the spawning, not the stopping
        run, pid = seconds(args.time), watch[SERVER][0]

        def begin() -> None:
            started = start_profiler(pid, run * 0.6, raw, args.profile_native)
            if started is not None:
                profilers.append(started)

        timer = threading.Timer(run * 0.2, begin)
        timer.start()
        print(f"profiling the server from {run * 0.2:.0f} s for {run * 0.6:.0f} s: {raw}")
    try:
        code = locust.wait() if locust is not None else 0
    finally:
        if locust is not None:
            locust.stop()
        probed = probe.finish() if probe is not None else {}
        if aio_tables is not None and (not probed or probed.get("failures")):
            code = code or 1  # the load's own tables failed (or never reported)
        cpu = sampler.stop()
        if timer is not None:
            timer.cancel()
        for profiler in profilers:
            profiler.wait(30)
    top = ""
    if profilers and raw.exists():
        top = profile_top(raw)
        Path(f"{prefix}-profile-top.txt").write_text(top)
    return RunResult(code, read_stats(prefix), cpu, top, probed)


class Probe:
    """``loadtests/probe.py`` in a process of its own, started after ``delay`` seconds:
    :meth:`beside` one locust run, or :meth:`whole_load`, the load's tables themselves."""

    def __init__(self, command: list[str], out: Path, delay: float, grace: float) -> None:
        self.out = out
        self.out.unlink(missing_ok=True)
        self.grace = grace  # seconds to wait for its end once the run is over
        self.process: ChildProcess | None = None
        self.timer: threading.Timer | None = None
        if delay > 0:
            self.timer = threading.Timer(delay, self._start, [command])
            self.timer.start()
        else:
            self._start(command)

    @staticmethod
    def _command(
        args: argparse.Namespace, target: str, transport: str, tables: int, out: Path
    ) -> list[str]:
        return [
            sys.executable, "-m", "loadtests.probe", "--target", target,
            "--transport", transport, "--tables", str(tables),
            "--think-time", str(args.think_time), "--out", str(out),
        ]  # fmt: skip

    @classmethod
    def beside(
        cls, args: argparse.Namespace, target: str, transport: str, prefix: Path, users: int
    ) -> Probe:
        """``--probe-tables`` tables beside one locust run: after the spawning (the
        users at ``--spawn-rate``, and a second), until a tenth of the run is left."""
        run = seconds(args.time)
        delay = min(run * 0.5, users / max(args.spawn_rate, 1e-9) + 1.0)
        out = Path(f"{prefix}-probe.json")
        command = [
            *cls._command(args, target, transport, args.probe_tables, out),
            "--seconds", f"{max(1.0, run * 0.9 - delay):.1f}",
        ]  # fmt: skip
        return cls(command, out, delay, grace=60.0)

    @classmethod
    def whole_load(
        cls, args: argparse.Namespace, target: str, transport: str, tables: int, prefix: Path
    ) -> Probe:
        """``tables`` tables as the load itself, started now for the whole run: their
        starts spread at ``--spawn-rate`` (as locust spawns its users), and that ramp
        and a second more left out of the samples (as locust's ``--reset-stats``)."""
        run = seconds(args.time)
        ramp = tables / max(args.spawn_rate, 1e-9)
        out = Path(f"{prefix}-probe.json")
        command = [
            *cls._command(args, target, transport, tables, out),
            "--seconds", f"{run:.1f}", "--ramp", f"{ramp:.2f}",
            "--warmup", f"{min(run * 0.5, ramp + 1.0):.2f}",
        ]  # fmt: skip
        return cls(command, out, 0.0, grace=run + 60.0)

    def _start(self, command: list[str]) -> None:
        self.process = ChildProcess(command, cwd=ROOT).start()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def finish(self) -> dict[str, Any]:
        """The probe's report ({} if it did not run or did not report)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer.join()
        if self.process is not None:
            try:
                self.process.wait(self.grace)
            except subprocess.TimeoutExpired:
                self.process.stop()
        try:
            report: dict[str, Any] = json.loads(self.out.read_text())
        except (OSError, ValueError):
            return {}
        return report
