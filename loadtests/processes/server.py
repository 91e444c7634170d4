"""``glintwick serve`` in a process of its own, for tests, load tests, benchmarks and the
fault campaign alike (the in-process server of the end-to-end tests,
``glintwick_cli.start_server``, is another thing: no process).

A :class:`ServerProcess` keeps its ports (free ones, unless given) across restarts, so
that clients find it again where it was; each start has a log file of its own
(``<logs>/<name>.log``, then ``<name>.2.log`` …, JSON lines), and a start waits until
every worker process has logged ``serving``.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from loadtests.processes.child import ROOT, ChildProcess
from loadtests.processes.ports import free_port

#: the options of a server under load from one address (a fault campaign's clients, a
#: benchmark's): no house bots, no rate limits, no quotas (docs/OPERATIONS.md)
UNLIMITED = ("--no-bots", "--rate", "0", "--limits", "off", "--quotas", "off")
#: how long a start may take on a busy machine (imports, then each worker's start)
START_SECONDS = 60.0


class ServerProcess:
    """``glintwick serve --store <store> --grpc <host>:<port> --log-format json`` with
    ``options`` after them: ``--http`` on a free port of 127.0.0.1 with ``http``, else
    none; ``--workers`` when ``workers`` is above 1.  ``python`` and ``root``: the
    interpreter and the checkout whose code runs (another tree's, to compare); ``env``:
    variables added to this process's.  Started (and waited for) on entry as a context
    manager, stopped on exit."""

    def __init__(
        self,
        logs: Path,
        *options: str,
        store: str = "memory",
        name: str = "server",
        workers: int = 1,
        http: bool = False,
        host: str = "127.0.0.1",
        grpc_port: int = 0,
        python: str = sys.executable,
        root: Path = ROOT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.logs = logs
        self.options = list(options)
        #: the store URL, which a restart may change (a cluster's node that runs now)
        self.store = store
        self.name = name
        self.workers = workers
        self.host = host
        self.grpc_port = grpc_port or free_port()
        self.http_port: int | None = free_port() if http else None
        self.python = python
        self.root = root
        self.env = {"PYTHONPATH": str(root), **(env or {})}
        self.starts = 0
        self._current: ChildProcess | None = None

    @property
    def address(self) -> str:
        """Its gRPC address (a client's target)."""
        return f"{self.host}:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        assert self.http_port is not None, "started without --http"
        return f"http://127.0.0.1:{self.http_port}"

    def command(self) -> list[str]:
        http = "" if self.http_port is None else f"127.0.0.1:{self.http_port}"
        # (the module, run in ``root``: that checkout's code, whatever ``python`` has installed)
        command = [self.python, "-m", "glintwick_cli", "serve", "--store", self.store,
                   "--grpc", self.address, "--http", http, "--log-format", "json"]  # fmt: skip
        if self.workers > 1:
            command += ["--workers", str(self.workers)]
        return command + self.options

    def start(self, timeout: float = START_SECONDS, *, wait: bool = True) -> ServerProcess:
        """Start it on its ports, and (``wait``) until each worker logs ``serving``
        (RuntimeError, with the log, if it exits first or ``timeout`` passes)."""
        self.starts += 1
        suffix = "" if self.starts == 1 else f".{self.starts}"
        log = self.logs / f"{self.name}{suffix}.log"
        self._current = ChildProcess(self.command(), log, cwd=self.root, env=self.env).start()
        if wait:
            self.wait_serving(timeout)
        return self

    def wait_serving(self, timeout: float = START_SECONDS) -> None:
        self.current.wait_for_event("serving", self.workers, timeout)

    @property
    def current(self) -> ChildProcess:
        """The process of its latest start."""
        assert self._current is not None, f"{self.name} is not started"
        return self._current

    @property
    def log(self) -> Path:
        """The log file of its latest start."""
        assert self.current.log is not None
        return self.current.log

    @property
    def pid(self) -> int:
        return self.current.pid

    @property
    def running(self) -> bool:
        return self._current is not None and self._current.running

    def poll(self) -> int | None:
        return self.current.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.current.wait(timeout)

    def send_signal(self, number: int = signal.SIGTERM) -> None:
        self.current.send_signal(number)

    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines of its latest start's log."""
        return self.current.lines()

    def events(self, name: str) -> list[dict[str, Any]]:
        return self.current.events(name)

    def text(self) -> str:
        return self.current.text()

    def kill(self) -> None:
        """SIGKILL (its workers too): a crash; :meth:`start` brings it back on its ports."""
        if self._current is not None:
            self._current.kill()

    def freeze(self) -> None:
        self.current.freeze()

    def thaw(self) -> None:
        self.current.thaw()

    def stop(self, grace: float = 15.0) -> int | None:
        """SIGTERM, ``grace`` seconds, then SIGKILL of what is left; its exit code."""
        return None if self._current is None else self._current.stop(grace)

    def __enter__(self) -> ServerProcess:
        if self._current is None:
            self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
