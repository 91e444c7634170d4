"""``make loadtest``: Redis, the server's processes and a headless locust run, with reports.

    python -m loadtests.run [--time 60s] [--tables 20] [--workers 2] [--max-p99-ms 100] …

1. starts a redis-server on a free port (``--store cluster``: a six-node Redis Cluster)
   and ``glintwick serve --store redis://… --workers N`` on free ports (or, with
   ``--target``, uses a deployed service and starts nothing);
2. runs locust headless (``loadtests/locustfile.py``) for ``--time``, writing CSV
   (``<out>/stats_*.csv``) and HTML (``<out>/report.html``) reports;
3. samples the CPU time of the load generator, the server processes and Redis
   (``psutil``), and with ``--profile`` records the server with py-spy;
4. prints a summary (also ``<out>/summary.json``) and exits non-zero when a request
   failed (1) or a p99 is over its ``--max-p99-ms`` limit (3).

``--steps 5,10,20,40`` runs once per table count instead (the other users as
configured) and reports the largest count whose move p99 stays within
``--step-p99-ms``, for each table transport of ``--step-transports`` in the same run
(``unary``: ``TableUser``, whose move is ``SubmitAction``; ``play``:
``PlayTableUser`` on Play streams, whose move is ``Play (act)``, from act to result;
``--step-metric cycle``: a move's whole cycle instead, from sending it to holding the
next decision's legal actions, ``Unary (next prompt)`` and ``Play (next prompt)``;
``probe-call``, ``probe-cycle``: the same two as ``--probe-tables`` tables of
``loadtests/probe.py`` see them, a grpc.aio client in a process of its own, playing
the stepped transport beside the load; the count each metric holds is reported
either way).
Every option has a ``LOADTEST_*`` environment variable; options
after ``--`` go to locust as they are.  Everything started is stopped on exit.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from loadtests.redis_cluster import redis_cluster
from loadtests.redis_process import free_port, redis_server

ROOT = Path(__file__).resolve().parent.parent
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"


def _env(name: str, default: str) -> str:
    return os.environ.get(f"LOADTEST_{name}", default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.run",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
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


# --------------------------------------------------------------------------- processes


def _stop(process: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """SIGTERM the process (a server forwards it to its workers), then SIGKILL what is left."""
    if process.poll() is not None:
        return
    try:
        family = [psutil.Process(process.pid), *psutil.Process(process.pid).children(True)]
    except psutil.NoSuchProcess:
        family = []
    process.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(family, timeout=grace)
    for leftover in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            leftover.kill()
    process.wait(5)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    grpc_target: str
    http_url: str


def _events(log: Path) -> list[str]:
    """The event names of the JSON lines in a server log (other lines skipped)."""
    names = []
    for line in log.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict):
                names.append(str(record.get("event")))
    return names


@contextlib.contextmanager
def serve(store: str, workers: int, root: Path, log: Path) -> Iterator[Server]:
    """``glintwick serve`` on free ports with ``workers`` processes; stopped afterwards."""
    grpc_port, http_port = free_port(), free_port()
    command = [
        sys.executable, "-m", "glintwick_cli", "serve", "--store", store,
        "--workers", str(workers), "--grpc", f"127.0.0.1:{grpc_port}",
        "--http", f"127.0.0.1:{http_port}", "--log-format", "json", "--no-bots",
        # the load generator stands for many clients: it names each simulated user's
        # own address in x-forwarded-for, believed from it as from an ingress
        "--trusted-proxy", "127.0.0.1",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(root)}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=sink, stderr=sink)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited ({process.returncode}); see {log}")
            if _events(log).count("serving") >= max(1, workers):
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"the server did not start in 60 s; see {log}")
        http_url = f"http://127.0.0.1:{http_port}"
        with urllib.request.urlopen(f"{http_url}/healthz", timeout=5) as answer:
            if answer.status != 200:
                raise RuntimeError(f"the server is not healthy: {answer.status}")
        yield Server(process, f"127.0.0.1:{grpc_port}", http_url)
    finally:
        _stop(process)


# --------------------------------------------------------------------------- CPU


def _note_tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """Note the CPU seconds (user + system) of each process of a tree in ``seen``.

    ``seen`` keeps every process ever sampled at its last sighting, so one that has
    ended (a locust worker process at the end of the run) still counts what it used.
    """
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    for process in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            seen[process.pid] = times.user + times.system


class CpuSampler:
    """Samples the CPU seconds of named process trees (and the machine) every second.

    The figures are taken over a window that leaves out the first seconds (starting,
    spawning users) and the last (stopping).
    """

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self.samples: list[tuple[float, dict[str, float], float]] = []
        self._seen: dict[str, dict[int, float]] = {name: {} for name in groups}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        per_group = {}
        for name, pids in self.groups.items():
            for pid in pids:
                _note_tree_cpu(pid, self._seen[name])
            per_group[name] = sum(self._seen[name].values())
        machine = psutil.cpu_times()
        busy = machine.user + machine.system + machine.nice + machine.irq + machine.softirq
        self.samples.append((time.monotonic(), per_group, busy))

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self._sample()

    def start(self) -> None:
        self._sample()
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        if len(self.samples) < 3:
            return {}
        # drop the first seconds (start-up, spawning) and the last (shutting down)
        first, last = self.samples[min(5, len(self.samples) // 4)], self.samples[-2]
        wall = last[0] - first[0]
        cores = psutil.cpu_count() or 1
        split = {
            name: round(100 * (last[1][name] - first[1][name]) / wall, 1) for name in self.groups
        }
        machine = 100 * (last[2] - first[2]) / wall
        split["everything else on the machine"] = round(machine - sum(split.values()), 1)
        return {
            "window_seconds": round(wall, 1),
            "cores": cores,
            "percent_of_one_core": split,
            "machine_busy_percent_of_all_cores": round(machine / cores, 1),
        }


# --------------------------------------------------------------------------- profile


def profile_top(raw: Path, limit: int = 25) -> str:
    """The top of a py-spy raw (collapsed stacks) profile: self and inclusive shares."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";") if "(" in f]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        return "no samples\n"
    lines = [f"{total} samples", "", "self (on-CPU in the function itself):"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(limit)]
    lines += ["", "inclusive (the function and what it calls):"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in inclusive.most_common(limit)]
    return "\n".join(lines) + "\n"


def start_profiler(
    pid: int, duration: float, out: Path, native: bool = False
) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        print("py-spy is not installed: no profile", file=sys.stderr)
        return None
    command = [
        spy, "record", "--pid", str(pid), "--subprocesses", "--rate", "100",
        "--duration", str(max(1, int(duration))), "--format", "raw", "--output", str(out),
    ]  # fmt: skip
    if native:
        command.append("--native")
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --------------------------------------------------------------------------- locust


@dataclass
class RunResult:
    exit_code: int
    stats: list[dict[str, Any]] = field(default_factory=list)
    cpu: dict[str, Any] = field(default_factory=dict)
    profile: str = ""
    probe: dict[str, Any] = field(default_factory=dict)


def read_stats(prefix: Path) -> list[dict[str, Any]]:
    path = Path(f"{prefix}_stats.csv")
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
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "--only-summary",
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
    locust = subprocess.Popen(command, cwd=ROOT) if users > 0 or aio_tables is None else None
    probe = None
    groups: dict[str, list[int]] = {}
    if locust is not None:
        groups["load generator (locust)"] = [locust.pid]
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
    if args.profile and "server (glintwick)" in watch:
        # the middle 60% of the run: not the spawning, not the stopping
        run, pid = seconds(args.time), watch["server (glintwick)"][0]

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
            _stop(locust)
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
        self.process: subprocess.Popen[bytes] | None = None
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
        self.process = subprocess.Popen(command, cwd=ROOT)

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
                _stop(self.process)
        try:
            report: dict[str, Any] = json.loads(self.out.read_text())
        except (OSError, ValueError):
            return {}
        return report


def print_summary(result: RunResult, title: str) -> None:
    print(f"\n== {title}: locust exit code {result.exit_code}")
    print(f"{'type':6} {'name':28} {'reqs':>8} {'fails':>6} {'req/s':>8} {'p50':>6} {'p99':>6}")
    for row in result.stats:
        p50 = "" if row["p50_ms"] is None else f"{row['p50_ms']:.0f}"
        p99 = "" if row["p99_ms"] is None else f"{row['p99_ms']:.0f}"
        print(
            f"{row['type']:6} {row['name'][:28]:28} {row['requests']:8} {row['failures']:6} "
            f"{row['rps']:8.1f} {p50:>6} {p99:>6}"
        )
    if result.cpu:
        print(f"CPU over {result.cpu['window_seconds']} s ({result.cpu['cores']} cores):")
        for name, percent in result.cpu["percent_of_one_core"].items():
            print(f"  {name:32} {percent:6.1f}% of a core")
    if result.probe:
        print(
            f"probe ({result.probe['tables']} {result.probe['transport']} tables, outside locust):"
        )
        for name, row in result.probe["samples"].items():
            if row["count"]:
                print(
                    f"  {name:8} {row['count']:6} moves"
                    f"  p50 {row['p50']:.0f}  p99 {row['p99']:.0f} ms"
                )
        for failure in result.probe["failures"]:
            print(f"  failed: {failure}")
    if result.profile:
        print("server profile (top):")
        print("\n".join(result.profile.splitlines()[:15]))


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
AIO_TABLES = "load generator (aio tables)"


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


def _commit(root: Path) -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "engine", "services", "glintwick"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return ""
    return head + ("+uncommitted changes" if dirty else "")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    seconds(args.time)  # fail early on a malformed run time
    steps = [int(s) for s in args.steps.split(",") if s.strip()] if args.steps else []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks
    summary: dict[str, Any] = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "load_average_before": os.getloadavg(),
        "server_code": _commit(args.server_root),
    }
    with contextlib.ExitStack() as stack:
        if args.target:
            grpc_target, http_url = args.target, args.http_target or "http://127.0.0.1:8080"
            watch: dict[str, list[int]] = {}
        else:
            store = "memory"
            if args.store == "redis":
                store = stack.enter_context(redis_server())
            elif args.store == "cluster":  # six nodes: loadtests/redis_cluster.py
                store = stack.enter_context(redis_cluster()).url
            elif args.workers > 1:
                print("--workers > 1 needs the Redis store; using 1", file=sys.stderr)
                args.workers = 1
            server = stack.enter_context(
                serve(store, args.workers, args.server_root, args.out / "server.log")
            )
            grpc_target, http_url = server.grpc_target, server.http_url
            watch = {"server (glintwick)": [server.process.pid]}
            redis_pids = [
                p.pid for p in psutil.Process().children() if p.name().startswith("redis-server")
            ]
            if redis_pids:
                watch["redis-server"] = redis_pids
            print(
                f"serving: gRPC {grpc_target}, HTTP {http_url}, store {args.store}, "
                f"{args.workers} worker(s)"
            )
        if not steps:
            result = run_locust(args, args.tables, args.out / "stats", grpc_target, http_url, watch)
            print_summary(result, f"{args.tables} tables")
            summary["run"] = asdict(result)
            code = result.exit_code
        else:
            code = 0
            transports = [t.strip() for t in args.step_transports.split(",") if t.strip()]
            unknown = set(transports) - set(TRANSPORTS)
            if unknown or not transports:
                raise SystemExit(f"--step-transports: unary and/or play, not {sorted(unknown)}")
            summary["steps"] = []
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
                        grpc_target,
                        http_url,
                        watch,
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
    summary["load_average_after"] = os.getloadavg()
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"reports: {args.out}/ (CSV, HTML, summary.json)")
    return code


if __name__ == "__main__":
    sys.exit(main())
