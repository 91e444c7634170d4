"""The checks of a store connection that more than one Redis topology's tests make (the
redis-servers themselves: ``loadtests.processes.redis`` and ``.cluster``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError


async def check_a_closed_transport_is_unreachable(connection: Any) -> None:
    """``connection`` (of the store's classes), connected by a PING, has its transport
    closed under it as a client's close does: the next command raises redis-py's
    ConnectionError (the store's "unreachable"), not uvloop's RuntimeError "the handler
    is closed" nor asyncio's AttributeError."""
    await connection.send_packed_command(connection.pack_command("PING"))
    assert await connection.read_response() in (b"PONG", "PONG")  # (connected)
    assert connection._writer is not None
    connection._writer.transport.close()
    await asyncio.sleep(0.05)  # (the loop has closed the handle)
    with pytest.raises(RedisConnectionError, match=r"closed|lost"):
        await connection.send_packed_command(connection.pack_command("PING"))


def on_loop(loop: str, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``main`` on a new event loop: asyncio's, or uvloop's (the server's)."""
    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(main())
    else:
        asyncio.run(main())
