"""A stream's leases (services/usecases/quotas.py): never left behind by a stream
that did not open, whatever stopped it."""

from __future__ import annotations

import asyncio

import pytest

from services.store.base import StoreUnavailableError
from services.store.memory import MemoryStore
from services.usecases.context import Caller, Context, ServiceConfig
from services.usecases.quotas import hold_stream


class HeldUpStore(MemoryStore):
    """The embedded store, whose holds on the client's set wait (or fail) on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.reached = asyncio.Event()
        self.go_on = asyncio.Event()
        self.fail = False

    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        if key.startswith("streams:"):
            self.reached.set()
            await self.go_on.wait()
            if self.fail:
                raise StoreUnavailableError("down")
        return await super().hold(key, member, limit, seconds)


@pytest.mark.parametrize("stopped_by", ["cancel", "outage"])
async def test_a_stream_stopped_between_its_two_leases_leaves_neither(stopped_by: str) -> None:
    """A watch holds a lease on its game's set, then one on its client's.  Cancelled
    (the client gone) or failed (the store unreachable) between the two, the game's
    lease is released at once: it is nobody's, and left there it would count towards
    the game's watchers for its whole lease (a client cancelling watches at that
    moment, again and again, would fill a game for everyone)."""
    store = HeldUpStore()
    ctx = Context(store, ServiceConfig())
    task = asyncio.create_task(hold_stream(ctx, "watch", "g", Caller(address="198.51.100.3")))
    await store.reached.wait()
    assert len(await store.held("watch:g")) == 1  # (the game's lease, held)
    if stopped_by == "cancel":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        store.fail = True
        store.go_on.set()
        assert await task is None  # (fail-open: nothing held)
    assert await store.held("watch:g") == []
