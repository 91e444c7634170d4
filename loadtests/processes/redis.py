"""A real redis-server on a free port (tests, load tests, benchmarks, the fault campaign:
never a mock): :class:`RedisProcess`, which its owner kills, freezes and restarts on
the same port and data directory; :func:`redis_server`, one for a ``with`` block;
:func:`redis_pair`, a primary and its replica.  The Redis Cluster
(:mod:`loadtests.processes.cluster`) is made of :class:`RedisProcess` nodes."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from loadtests.processes.ports import free_port

# what each durability mode adds to redis-server's command line (docs/OPERATIONS.md)
PERSISTENCE = {
    "none": ["--save", "", "--appendonly", "no"],
    "everysec": ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
    "always": ["--save", "", "--appendonly", "yes", "--appendfsync", "always"],
}
#: tries of a redis-server on a free port (another process may take it meanwhile)
PORT_TRIES = 5


def binary(name: str = "redis-server") -> str:
    """The path of ``name`` (redis-server, redis-cli); RuntimeError if not installed."""
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(
            f"{name} is not installed: `apt-get install -y redis-server` (`make test` does it)"
        )
    return found


class RedisProcess:
    """A redis-server on a fixed port (a free one unless ``port`` is given) and data
    directory, which its owner kills (SIGKILL), freezes (SIGSTOP), thaws and restarts
    on the same port; a replica of another with ``replica_of``; ``password``: it
    requires one (in :attr:`url`); ``options``: more of redis-server's command line
    (a cluster node's).  Stopped by pid (:meth:`stop`), never by name."""

    def __init__(
        self,
        workdir: Path,
        persistence: str = "none",
        *,
        replica_of: RedisProcess | None = None,
        password: str = "",
        port: int = 0,
        options: Sequence[str] = (),
    ) -> None:
        self.port = port or free_port()
        self.workdir = workdir
        self.persistence = persistence
        self.replica_of = replica_of
        self.password = password
        self.options = list(options)
        self.process: subprocess.Popen[bytes] | None = None
        self.frozen = False

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        assert self.process is not None, "redis-server is not started"
        return self.process.pid

    def command(self) -> list[str]:
        command = [binary(), "--port", str(self.port), "--bind", "127.0.0.1",
                   "--dir", str(self.workdir), *PERSISTENCE[self.persistence]]  # fmt: skip
        if self.replica_of is not None:
            command += ["--replicaof", "127.0.0.1", str(self.replica_of.port)]
        if self.password:
            command += ["--requirepass", self.password]
        return command + self.options

    def start(self, timeout: float = 10.0) -> None:
        """Start it (on its port, from its data directory) and wait until it listens;
        RuntimeError if it exits first (its port taken meanwhile, say)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.frozen = False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise RuntimeError(f"redis-server on port {self.port} exited ({code})")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not listen on {self.port} in {timeout} s")

    def signal(self, number: signal.Signals) -> None:
        if self.running:
            assert self.process is not None
            self.process.send_signal(number)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync (what a crash keeps is on disk already)."""
        if self.process is not None:
            self.thaw()
            self.signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def freeze(self) -> None:
        """SIGSTOP: it answers nothing (its connections stay open) until :meth:`thaw`."""
        self.signal(signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            self.signal(signal.SIGCONT)
            self.frozen = False

    def wait_linked(self, timeout: float = 20.0) -> None:
        """Until this replica is linked to its primary (it has the primary's data)."""
        deadline = time.monotonic() + timeout
        while b"master_link_status:up" not in _info(self.port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica did not link to its primary in {timeout} s")
            time.sleep(0.1)

    def promote(self) -> None:
        """``REPLICAOF NO ONE``: this replica is a primary from now on (a manual failover)."""
        subprocess.run(
            [binary("redis-cli"), "-p", str(self.port), "replicaof", "no", "one"],
            check=True,
            capture_output=True,
            timeout=5,
        )
        self.replica_of = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        """SIGTERM (thawed first: a frozen process cannot stop), SIGKILL after 10 s."""
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
def redis_server(persistence: str = "none", password: str = "") -> Iterator[str]:
    """A redis-server in a temporary directory for the block: its URL (with
    ``password``, if it requires one); stopped by pid and its directory removed after."""
    workdir = Path(tempfile.mkdtemp(prefix="glintwick-redis-"))
    try:
        for attempt in range(PORT_TRIES):
            redis = RedisProcess(workdir, persistence, password=password)
            try:
                redis.start()
                break
            except RuntimeError:
                if attempt == PORT_TRIES - 1:
                    raise
        try:
            yield redis.url
        finally:
            redis.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def redis_pair(persistence: str = "none") -> Iterator[tuple[RedisProcess, RedisProcess]]:
    """A primary and its replica (``--replicaof``), linked before yielding; both stopped."""
    root = Path(tempfile.mkdtemp(prefix="glintwick-redis-pair-"))
    primary = RedisProcess(root / "primary", persistence)
    replica = RedisProcess(root / "replica", persistence, replica_of=primary)
    try:
        primary.start()
        replica.start()
        replica.wait_linked()
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()
        shutil.rmtree(root, ignore_errors=True)


def _info(port: int) -> bytes:
    """INFO replication, by redis-cli (no client library: this module is imported early)."""
    return subprocess.run(
        [binary("redis-cli"), "-p", str(port), "info", "replication"],
        capture_output=True,
        timeout=5,
    ).stdout
