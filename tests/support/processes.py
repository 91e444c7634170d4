"""Processes the end-to-end tests start: ``glintwick`` commands with their output in a file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def glintwick_command() -> list[str]:
    """The installed ``glintwick`` command next to this Python, else the module."""
    binary = Path(sys.executable).with_name("glintwick")
    return [str(binary)] if binary.exists() else [sys.executable, "-m", "glintwick_cli"]


@contextlib.contextmanager
def logged_process(
    command: Sequence[str], logs: Path, *, grace: float = 15.0
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` with its output in ``logs``; at the end, if it still runs, SIGTERM and
    ``grace`` seconds to stop (its exit code kept), then SIGKILL."""
    with logs.open("wb") as out:
        child = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            cwd=ROOT,
        )
        try:
            yield child
        finally:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(grace)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait(5)


def json_log_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a log file (other lines, such as a traceback's, are skipped)."""
    lines = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            lines.append(json.loads(line))
    return lines


def wait_for_log_event(
    process: subprocess.Popen[bytes], logs: Path, event: str = "serving", timeout: float = 30.0
) -> None:
    """Until ``logs`` has a JSON line of ``event``; fails if the process ends first."""
    deadline = time.monotonic() + timeout
    while not any(line.get("event") == event for line in json_log_lines(logs)):
        assert process.poll() is None, logs.read_text()
        assert time.monotonic() < deadline, logs.read_text()
        time.sleep(0.1)


async def wait_for_ping(
    ping: Callable[[], Awaitable[Any]],
    process: subprocess.Popen[bytes],
    logs: Path,
    timeout: float = 30.0,
) -> None:
    """Until ``ping()`` answers; fails if the process ends first or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, logs.read_text()
        try:
            await ping()
            return
        except Exception:
            assert time.monotonic() < deadline, logs.read_text()
            await asyncio.sleep(0.1)
