"""A stream's leases in the store, and the one task per process that renews them.

An open watch or play session holds a lease on each bounded set it counts towards
(its game's watchers or sessions, its client's streams: :func:`.quotas.hold_stream`
takes them, as the quotas say).  The process's :class:`LeaseKeeper` (one per
:class:`~.context.Context`) renews every open stream's leases every third of
``LEASE_SECONDS``; a replica that dies leaves its leases to end by themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import TypeVar

from services.store.base import GameStore, StoreUnavailableError

T = TypeVar("T")

#: seconds a stream's lease lasts unless renewed (the keeper renews every third of it)
LEASE_SECONDS = 60.0


@dataclass(eq=False)
class StreamHold:
    """A stream's leases (on its game's set and its client's): renewed by its
    :class:`LeaseKeeper` until :meth:`release`."""

    keeper: LeaseKeeper
    member: str
    sets: tuple[tuple[str, int], ...]  # (key, limit)
    released: bool = False

    async def release(self) -> None:
        if self.released:
            return
        self.released = True
        self.keeper.forget(self)
        with contextlib.suppress(StoreUnavailableError):
            for key, _ in self.sets:
                await self.keeper.store.release(key, self.member)


class HeldStream(AsyncIterator[T]):
    """A stream whose leases are released when it ends or is closed (even if never
    iterated: a generator that never started would skip its own ``finally``)."""

    def __init__(self, inner: AsyncIterator[T], hold: StreamHold | None) -> None:
        self._inner = inner
        self._hold = hold

    def __aiter__(self) -> HeldStream[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await anext(self._inner)
        except BaseException:
            await self._release()
            raise

    async def aclose(self) -> None:
        try:
            if isinstance(self._inner, AsyncGenerator):
                await self._inner.aclose()
        finally:
            await self._release()

    async def _release(self) -> None:
        if self._hold is not None:
            await self._hold.release()


class LeaseKeeper:
    """Renews every open stream's leases of this process in ``store``, every third of
    ``LEASE_SECONDS``: one task per process, however many streams, started with the
    first lease kept and ended once none is left or ``stopping`` is set (the server
    stopping)."""

    def __init__(self, store: GameStore, stopping: asyncio.Event) -> None:
        self.store = store
        self._stopping = stopping
        self._holds: set[StreamHold] = set()
        self._task: asyncio.Task[None] | None = None

    def keep(self, hold: StreamHold) -> None:
        self._holds.add(hold)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._renew(), name="stream-leases")

    def forget(self, hold: StreamHold) -> None:
        self._holds.discard(hold)

    async def _renew(self) -> None:
        stopping = self._stopping
        while self._holds and not stopping.is_set():
            with contextlib.suppress(TimeoutError):  # (the server stopping ends it now)
                async with asyncio.timeout(LEASE_SECONDS / 3):
                    await stopping.wait()
            for hold in list(self._holds):
                for key, limit in hold.sets:
                    # (a lease lost meanwhile, its place taken: the stream goes on, over
                    # the quota by one until it ends; a store down: renewed next time)
                    with contextlib.suppress(StoreUnavailableError):
                        if not hold.released:
                            await self.store.hold(key, hold.member, limit, LEASE_SECONDS)
                        if hold.released:  # (released while that renewal was in flight)
                            await self.store.release(key, hold.member)
