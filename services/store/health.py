"""Store health: one judgement per process of whether the store answers, and what
follows from it.

A :class:`StoreMonitor` probes the store (``ping`` with a short deadline) every
``interval`` seconds, and at once when a call meets the store unreachable.  Its
judgement drives the process's health (gRPC health and ``/healthz``: NOT_SERVING
while the store is down, SERVING again when it is back, no restart needed) and
the calls: while the store is judged down, :class:`MonitoredStore` answers
:class:`~services.store.base.StoreUnavailableError` at once instead of making
every call wait for its own timeout.  Each change of the judgement is logged once
(``store_unavailable`` with the error, ``store_available`` with how long it was
down): an outage is two lines, not a traceback per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

import structlog

from services.store.base import (
    Admission,
    GameStore,
    LogItem,
    OpenGame,
    Snapshot,
    StoreUnavailableError,
    Write,
)

log = structlog.get_logger("glintwick.store")

T = TypeVar("T")

Listener = Callable[[bool], Awaitable[None]]


def redacted(url: str) -> str:
    """``url`` without its credentials (``redis://:secret@host:6379/0`` → ``redis://host:6379/0``,
    and a ``password`` query parameter dropped), fit for a log line."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() != "password"])
    if netloc != parts.netloc:
        url = url.replace(parts.netloc, netloc, 1)
    if query != parts.query:
        url = url.replace("?" + parts.query, "?" + query if query else "", 1)
    return url


class StoreMonitor:
    """Whether the store answers, as its last probe (or a failed call) found."""

    def __init__(
        self, store: GameStore, name: str, interval: float = 1.0, down_interval: float = 0.5
    ) -> None:
        self._store = store
        self.name = name  # the store's URL, redacted: for the logs
        self.interval = interval  # between probes while the store answers
        self.down_interval = down_interval  # between probes while it does not
        self.healthy = True
        self.error = ""  # why the store was last found unreachable
        self._down_since = 0.0
        self._wake = asyncio.Event()
        self._available = asyncio.Event()
        self._available.set()
        self._listeners: list[Listener] = []

    def on_change(self, listener: Listener) -> None:
        """Call ``listener(healthy)`` after every change of the judgement."""
        self._listeners.append(listener)

    async def probe(self) -> bool:
        """Ping the store now and record what it says (logging a change)."""
        try:
            answered = await self._store.ping()
            error = "" if answered else "the store did not answer PING"
        except StoreUnavailableError as exc:
            answered, error = False, exc.error
        await self._judge(answered, error)
        return answered

    def suspect(self, error: StoreUnavailableError) -> None:
        """A call met the store unreachable: probe at once (the probe judges, so one
        dropped connection of a busy pool does not fail every other call)."""
        if self.healthy:
            self.error = error.error
            self._wake.set()

    async def wait_available(self) -> None:
        await self._available.wait()

    async def run(self) -> None:
        """Probe for ever (a task of the server's), at once when a call suspects."""
        while True:
            await self.probe()
            pause = self.interval if self.healthy else self.down_interval
            # asyncio.timeout, not wait_for: on 3.11 wait_for swallows a cancel that
            # arrives as its inner wait completes, and stop() would await this for ever
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await self._wake.wait()
            self._wake.clear()

    async def _judge(self, answered: bool, error: str) -> None:
        if answered == self.healthy:
            return
        self.healthy = answered
        if answered:
            self._available.set()
            log.warning(
                "store_available",
                store=self.name,
                down_seconds=round(time.monotonic() - self._down_since, 3),
            )
        else:
            self._available.clear()
            self._down_since = time.monotonic()
            self.error = error
            log.error("store_unavailable", store=self.name, error=error)
        for listener in self._listeners:
            await listener(answered)


class MonitoredStore(GameStore):
    """A store whose calls answer :class:`StoreUnavailableError` at once while the
    monitor judges it down, and wake the monitor when one meets it unreachable."""

    def __init__(self, inner: GameStore, monitor: StoreMonitor) -> None:
        self.inner = inner
        self.monitor = monitor

    async def _call(self, call: Awaitable[T]) -> T:
        if not self.monitor.healthy:
            if asyncio.iscoroutine(call):
                call.close()  # (never awaited: no warning about it)
            raise StoreUnavailableError(self.monitor.error)
        try:
            return await call
        except StoreUnavailableError as exc:
            self.monitor.suspect(exc)
            raise

    async def create(self, game_id: str, write: Write) -> None:
        await self._call(self.inner.create(game_id, write))

    async def load(self, game_id: str) -> Snapshot | None:
        return await self._call(self.inner.load(game_id))

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        return await self._call(self.inner.commit(game_id, expected_revision, write))

    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        return await self._call(self.inner.idempotent_response(game_id, key))

    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        return await self._call(self.inner.read_log(game_id, after_version, limit))

    async def wait_log(self, game_id: str, after_version: int, timeout: float) -> list[LogItem]:
        return await self._call(self.inner.wait_log(game_id, after_version, timeout))

    async def due_deadlines(self, now: float, limit: int = 100) -> list[str]:
        return await self._call(self.inner.due_deadlines(now, limit))

    async def bot_turns(self, limit: int = 100, lease: float = 0.0) -> list[str]:
        return await self._call(self.inner.bot_turns(limit, lease))

    async def open_games(
        self, rule_set_hash: str = "", after: int = 0, limit: int = 50
    ) -> list[OpenGame]:
        return await self._call(self.inner.open_games(rule_set_hash, after, limit))

    async def games_in_play(self) -> int:
        return await self._call(self.inner.games_in_play())

    async def unfinished(self, game_ids: list[str]) -> set[str]:
        return await self._call(self.inner.unfinished(game_ids))

    async def take(
        self, key: str, rate: float, burst: int, cost: int = 1, game_id: str | None = None
    ) -> Admission:
        return await self._call(self.inner.take(key, rate, burst, cost, game_id))

    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        return await self._call(self.inner.hold(key, member, limit, seconds))

    async def release(self, key: str, *members: str) -> None:
        await self._call(self.inner.release(key, *members))

    async def held(self, key: str) -> list[str]:
        return await self._call(self.inner.held(key))

    async def ping(self) -> bool:
        """The monitor's judgement (no round trip: health checks cost the store nothing)."""
        return self.monitor.healthy

    async def close(self) -> None:
        await self.inner.close()
