"""A command in a process of its own, its output in a log file (or this process's):
started, waited for (a JSON log line of an event), frozen and thawed, and stopped by
pid (SIGTERM, a grace, then SIGKILL of what is left of its process tree)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[2]


def glintwick_command(python: str = sys.executable) -> list[str]:
    """The ``glintwick`` command installed next to ``python``, else its module."""
    binary = Path(python).with_name("glintwick")
    return [str(binary)] if binary.exists() else [python, "-m", "glintwick_cli"]


def json_log_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a log file (other lines, such as a traceback's, are skipped)."""
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict):
                lines.append(record)
    return lines


class ChildProcess:
    """``command`` in a process of its own (in ``cwd``, ``env`` added to this one's),
    stdout and stderr in ``log`` (None: this process's).  As a context manager: started
    on entry, stopped on exit."""

    def __init__(
        self,
        command: Sequence[str],
        log: Path | None = None,
        *,
        cwd: Path = ROOT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.command = list(command)
        self.log = log
        self.cwd = cwd
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self._process: subprocess.Popen[bytes] | None = None
        self.frozen = False

    def start(self) -> ChildProcess:
        if self.log is None:
            self._process = subprocess.Popen(self.command, cwd=self.cwd, env=self.env)
        else:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            with self.log.open("wb") as sink:
                self._process = subprocess.Popen(
                    self.command, cwd=self.cwd, env=self.env, stdout=sink, stderr=subprocess.STDOUT
                )
        self.frozen = False
        return self

    @property
    def process(self) -> subprocess.Popen[bytes]:
        assert self._process is not None, "the process is not started"
        return self._process

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.process.wait(timeout)

    def send_signal(self, number: int) -> None:
        if self.running:
            self.process.send_signal(number)

    def text(self) -> str:
        """The log so far ("" without one)."""
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")

    def lines(self) -> list[dict[str, Any]]:
        """The log's JSON lines so far."""
        return json_log_lines(self.log) if self.log is not None and self.log.exists() else []

    def events(self, name: str) -> list[dict[str, Any]]:
        """The log's JSON lines of event ``name`` so far."""
        return [line for line in self.lines() if line.get("event") == name]

    def wait_for_event(self, event: str, count: int = 1, timeout: float = 60.0) -> None:
        """Until the log has ``count`` JSON lines of ``event``; RuntimeError (with the
        log) if the process ends first or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while len(self.events(event)) < count:
            if self.poll() is not None:
                raise RuntimeError(
                    f"{self.command[:4]} exited ({self.process.returncode}) before"
                    f" {event!r}: {self.log}\n{self.text()[-4000:]}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"no {event!r} from {self.command[:4]} in {timeout} s: {self.log}\n"
                    + self.text()[-4000:]
                )
            time.sleep(0.1)

    def freeze(self) -> None:
        """SIGSTOP: it runs nothing (its sockets stay open) until :meth:`thaw`."""
        self.send_signal(signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            self.send_signal(signal.SIGCONT)
            self.frozen = False

    def _descendants(self) -> list[psutil.Process]:
        """The processes it started (a server's ``--workers``) that run now."""
        try:
            return psutil.Process(self.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def kill(self) -> None:
        """SIGKILL of the process and its descendants: no shutdown at all (a crash)."""
        if self._process is None:
            return
        descendants = self._descendants()
        self._process.kill()
        for descendant in descendants:
            with contextlib.suppress(psutil.NoSuchProcess):
                descendant.kill()
        self._process.wait(10)
        psutil.wait_procs(descendants, timeout=10)

    def stop(self, grace: float = 15.0) -> int | None:
        """SIGTERM (thawed first: a frozen process cannot stop), ``grace`` seconds for
        it and its descendants to end, then SIGKILL of what is left; its exit code
        (None if it never started).  One that ended already is left as it is."""
        if self._process is None:
            return None
        if self.running:
            self.thaw()
            descendants = self._descendants()
            self._process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + grace
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(grace)
            # (the process itself is reaped by Popen, keeping its exit code; its
            # descendants are not this process's children: psutil watches them)
            _, alive = psutil.wait_procs(descendants, timeout=max(0.0, deadline - time.monotonic()))
            for leftover in alive:
                with contextlib.suppress(psutil.NoSuchProcess):
                    leftover.kill()
            if self._process.poll() is None:
                self._process.kill()
            psutil.wait_procs(alive, timeout=5)
        return self._process.wait(10)

    def __enter__(self) -> ChildProcess:
        if self._process is None:
            self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
