"""``glintwick serve`` in a process of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from loadtests.redis_process import free_port

ROOT = Path(__file__).resolve().parents[2]


class ServerProcess:
    """``glintwick serve`` on a fixed gRPC port, killed (SIGKILL) and restarted there."""

    def __init__(self, name: str, store_url: str, logs: Path, extra: Sequence[str] = ()) -> None:
        self.name = name
        self.port = free_port()
        self.store_url = store_url
        self.logs = logs
        self.extra = list(extra)
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        command = [sys.executable, "-m", "glintwick_cli", "serve", "--store", self.store_url,
                   "--grpc", self.address, "--http", "", "--log-format", "json", "--no-bots",
                   "--rate", "0", "--limits", "off", "--quotas", "off", *self.extra]  # fmt: skip
        self.starts += 1
        log = self.logs / f"{self.name}.{self.starts}.log"
        with log.open("wb") as sink:
            env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while b'"serving"' not in log.read_bytes():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}); see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not serve in {timeout} s; see {log}")
            time.sleep(0.1)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None
