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

A store of several parts (a Redis Cluster: one part per primary) is judged part by
part (:meth:`~services.store.base.GameStore.ping_parts`): while one primary is down
(killed or frozen, until its replica is promoted), only the calls that need it are
refused, those of games (and limits) on the other primaries go on; a call across
parts (the lobby, the deadline sweep, the bot-turn scan, the games in play) is
refused while any part is down, as a store wholly down refuses it.  The process
stays SERVING while some part answers (docs/OPERATIONS.md, "Store outages"); it is
NOT_SERVING only when the whole store is (a store of one part: as soon as it is).
The lines are logged per part (with ``node``, a cluster's primary).
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
    WHOLE,
    Admission,
    GameStore,
    LogCursor,
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
    """Whether the store answers, part by part, as its last probe (or a failed call)
    found: ``down`` maps each part judged down (``WHOLE``: the whole store) to why."""

    def __init__(
        self, store: GameStore, name: str, interval: float = 1.0, down_interval: float = 0.5
    ) -> None:
        self._store = store
        self.name = name  # the store's URL, redacted: for the logs
        self.interval = interval  # between probes while the store answers
        self.down_interval = down_interval  # between probes while it does not
        self.down: dict[str, str] = {}
        self.error = ""  # why the store (or a part of it) was last found unreachable
        self._down_since: dict[str, float] = {}
        self._wake = asyncio.Event()
        self._available = asyncio.Event()
        self._available.set()
        self._listeners: list[Listener] = []

    @property
    def healthy(self) -> bool:
        """Every part of the store answers."""
        return not self.down

    @property
    def serving(self) -> bool:
        """What the process's health says: some part of the store answers (a store
        of one part: it answers)."""
        return WHOLE not in self.down

    def refusal(self, parts: tuple[str, ...] | None) -> str | None:
        """Why a call needing ``parts`` (None: every part) is refused now (None: it is not)."""
        if not self.down:
            return None
        if parts is None:
            return next(iter(self.down.values()))
        for part in (WHOLE, *parts):
            if part in self.down:
                return self.down[part]
        return None

    def on_change(self, listener: Listener) -> None:
        """Call ``listener(serving)`` after every change of :attr:`serving`."""
        self._listeners.append(listener)

    async def probe(self) -> bool:
        """Ping the store now and record what it says (logging each change): whether
        every part answered."""
        await self._judge(await self._store.ping_parts())
        return self.healthy

    def suspect(self, error: StoreUnavailableError) -> None:
        """A call met the store unreachable: probe at once (the probe judges, so one
        dropped connection of a busy pool does not fail every other call)."""
        if self.serving:
            if self.healthy:
                self.error = error.error
            self._wake.set()

    async def wait_available(self) -> None:
        """Until every part answers."""
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

    async def _judge(self, down: dict[str, str]) -> None:
        was_serving = self.serving
        now = time.monotonic()
        for part in [p for p in self.down if p not in down]:
            node = {"node": part} if part != WHOLE else {}
            since = self._down_since.pop(part, now)
            log.warning(
                "store_available", store=self.name, down_seconds=round(now - since, 3), **node
            )
        for part, error in down.items():
            if part not in self.down:
                self._down_since[part] = now
                self.error = error
                node = {"node": part} if part != WHOLE else {}
                log.error("store_unavailable", store=self.name, error=error, **node)
        self.down = dict(down)
        if self.down:
            self._available.clear()
        else:
            self._available.set()
        if self.serving != was_serving:
            for listener in self._listeners:
                await listener(self.serving)


class MonitoredStore(GameStore):
    """A store whose calls answer :class:`StoreUnavailableError` at once while the
    monitor judges a part they need down, and wake the monitor when one meets the
    store unreachable."""

    def __init__(self, inner: GameStore, monitor: StoreMonitor) -> None:
        self.inner = inner
        self.monitor = monitor

    def _games(self, *game_ids: str) -> tuple[str, ...] | None:
        # (the parts are looked up only while some part is down)
        if not self.monitor.down:
            return ()
        return tuple(self.inner.part_of_game(g) for g in game_ids)

    def _key(self, kind: str, name: str) -> tuple[str, ...] | None:
        if not self.monitor.down:
            return ()
        return (self.inner.part_of_key(kind, name),)

    def _refuse_game(self, game_id: str) -> None:
        """Raise the refusal of a call on ``game_id`` while its part is judged down."""
        if self.monitor.down:
            refused = self.monitor.refusal(self._games(game_id))
            if refused is not None:
                raise StoreUnavailableError(refused)

    def _suspected(self, error: StoreUnavailableError) -> StoreUnavailableError:
        """``error`` (raised again by the caller), the monitor woken by it."""
        self.monitor.suspect(error)
        return error

    async def _call(self, call: Awaitable[T], parts: tuple[str, ...] | None = None) -> T:
        """``call``, which needs ``parts`` of the store (None: every part)."""
        refused = self.monitor.refusal(parts)
        if refused is not None:
            if asyncio.iscoroutine(call):
                call.close()  # (never awaited: no warning about it)
            raise StoreUnavailableError(refused)
        try:
            return await call
        except StoreUnavailableError as exc:
            self.monitor.suspect(exc)
            raise

    async def create(self, game_id: str, write: Write) -> None:
        await self._call(self.inner.create(game_id, write), self._games(game_id))

    async def load(self, game_id: str) -> Snapshot | None:
        return await self._call(self.inner.load(game_id), self._games(game_id))

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        # (a move's calls, commit and each session's wait, are _call written out: a
        # coroutine frame fewer for each of their awaits to pass through)
        self._refuse_game(game_id)
        try:
            return await self.inner.commit(game_id, expected_revision, write)
        except StoreUnavailableError as exc:
            raise self._suspected(exc)  # noqa: B904  (the same error, raised again)

    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        return await self._call(self.inner.idempotent_response(game_id, key), self._games(game_id))

    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        return await self._call(
            self.inner.read_log(game_id, after_version, limit), self._games(game_id)
        )

    async def wait_log(
        self, game_id: str, after_version: int, timeout: float, cursor: LogCursor | None = None
    ) -> list[LogItem]:
        self._refuse_game(game_id)
        try:
            return await self.inner.wait_log(game_id, after_version, timeout, cursor)
        except StoreUnavailableError as exc:
            raise self._suspected(exc)  # noqa: B904  (the same error, raised again)

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
        return await self._call(self.inner.unfinished(game_ids), self._games(*game_ids))

    async def take(
        self, key: str, rate: float, burst: int, cost: int = 1, game_id: str | None = None
    ) -> Admission:
        parts = self._key("rate", key) if game_id is None else self._games(game_id)
        return await self._call(self.inner.take(key, rate, burst, cost, game_id), parts)

    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        return await self._call(
            self.inner.hold(key, member, limit, seconds), self._key("hold", key)
        )

    async def release(self, key: str, *members: str) -> None:
        await self._call(self.inner.release(key, *members), self._key("hold", key))

    async def held(self, key: str) -> list[str]:
        return await self._call(self.inner.held(key), self._key("hold", key))

    def follow(self, game_id: str) -> None:
        self.inner.follow(game_id)

    def unfollow(self, game_id: str) -> None:
        self.inner.unfollow(game_id)

    def part_of_game(self, game_id: str) -> str:
        return self.inner.part_of_game(game_id)

    def part_of_key(self, kind: str, name: str) -> str:
        return self.inner.part_of_key(kind, name)

    async def ping(self) -> bool:
        """The monitor's judgement (no round trip: health checks cost the store
        nothing): whether the process serves, some part of the store answering."""
        return self.monitor.serving

    async def ping_parts(self) -> dict[str, str]:
        return dict(self.monitor.down)

    async def close(self) -> None:
        await self.inner.close()
