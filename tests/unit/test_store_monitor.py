"""A server's stop cancels its store monitor and then awaits it: the monitor must end
on every cancel, whatever it was waiting for.  On Python 3.11, ``asyncio.wait_for``
swallows a cancel that arrives in the same step as its inner await's completion; a
monitor (or a Redis PING) waiting through it ran on after the cancel, and a test
server's stop, and with it CI, waited for ever."""

from __future__ import annotations

import asyncio

from services.store.base import StoreUnavailableError
from services.store.health import StoreMonitor
from services.store.memory import MemoryStore


async def _waiting_monitor() -> tuple[StoreMonitor, asyncio.Task[None]]:
    monitor = StoreMonitor(MemoryStore(), "memory", interval=60.0)
    task = asyncio.create_task(monitor.run())
    for _ in range(5):  # it probes, then waits for its next probe
        await asyncio.sleep(0)
    assert not task.done()
    return monitor, task


async def test_a_cancel_in_the_step_its_wait_ends_ends_the_monitor() -> None:
    monitor, task = await _waiting_monitor()
    monitor.suspect(StoreUnavailableError("dropped"))  # ends its wait ...
    task.cancel()  # ... in the same step as the server's stop cancels it
    done, _ = await asyncio.wait({task}, timeout=2.0)
    assert done, "the cancelled monitor ran on"
    assert task.cancelled()


async def test_a_cancel_while_it_waits_ends_the_monitor() -> None:
    _, task = await _waiting_monitor()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2.0)
    assert done and task.cancelled()
