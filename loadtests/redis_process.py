"""A real redis-server on a free port (tests, load tests, benchmarks: never a mock)."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Start redis-server (no persistence) and yield its URL; stop it by pid afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "redis-server is not installed: `apt-get install -y redis-server` (.ci/run does it)"
        )
    for _ in range(5):
        port = free_port()
        workdir = tempfile.mkdtemp(prefix="glintwick-redis-")
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        if process.poll() is None:
            try:
                yield f"redis://127.0.0.1:{port}/0"
            finally:
                process.terminate()
                process.wait(10)
                shutil.rmtree(workdir, ignore_errors=True)
            return
        shutil.rmtree(workdir, ignore_errors=True)
    raise RuntimeError("could not start redis-server on a free port")


# what each durability mode adds to redis-server's command line (docs/OPERATIONS.md)
PERSISTENCE = {
    "none": ["--save", "", "--appendonly", "no"],
    "everysec": ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
    "always": ["--save", "", "--appendonly", "yes", "--appendfsync", "always"],
}


class RedisProcess:
    """A redis-server on a fixed port and data directory, which its owner kills
    (SIGKILL), freezes (SIGSTOP), thaws and restarts on the same port; a replica of
    another with ``replica_of``.  Stopped by pid (:meth:`stop`), never by name."""

    def __init__(
        self,
        workdir: Path,
        persistence: str = "none",
        *,
        replica_of: RedisProcess | None = None,
    ) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.persistence = persistence
        self.replica_of = replica_of
        self.process: subprocess.Popen[bytes] | None = None
        self.frozen = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.workdir.mkdir(parents=True, exist_ok=True)
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                   "--dir", str(self.workdir), *PERSISTENCE[self.persistence]]  # fmt: skip
        if self.replica_of is not None:
            command += ["--replicaof", "127.0.0.1", str(self.replica_of.port)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.frozen = False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited ({self.process.returncode})")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not listen on {self.port} in {timeout} s")

    def signal(self, number: signal.Signals) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(number)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync (what a crash keeps is on disk already)."""
        if self.process is not None:
            self.thaw()
            self.signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def freeze(self) -> None:
        self.signal(signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            self.signal(signal.SIGCONT)
            self.frozen = False

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is not None:
            self.thaw()
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            self.process = None


@contextlib.contextmanager
def redis_pair(persistence: str = "none") -> Iterator[tuple[RedisProcess, RedisProcess]]:
    """A primary and its replica (``--replicaof``), linked before yielding; both stopped."""
    root = Path(tempfile.mkdtemp(prefix="glintwick-redis-pair-"))
    primary = RedisProcess(root / "primary", persistence)
    replica = RedisProcess(root / "replica", persistence, replica_of=primary)
    try:
        primary.start()
        replica.start()
        deadline = time.monotonic() + 20
        while b"master_link_status:up" not in _info(replica.port):
            if time.monotonic() > deadline:
                raise RuntimeError("the replica did not link to its primary in 20 s")
            time.sleep(0.1)
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()
        shutil.rmtree(root, ignore_errors=True)


def _info(port: int) -> bytes:
    """INFO replication, by redis-cli (no client library: this module is imported early)."""
    return subprocess.run(
        ["redis-cli", "-p", str(port), "info", "replication"], capture_output=True, timeout=5
    ).stdout
