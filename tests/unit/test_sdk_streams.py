"""Which ends of a Play stream the SDK's PlaySession reopens: its transport's (a
replica gone, the network), not a server's answer."""

from __future__ import annotations

import asyncio

import grpc
from grpc_status import rpc_status

from clients.sdk import CORE_WRITE_FAILED, GlintwickClient, PlaySession, _stream_dropped
from services.errors import internal
from services.grpc_api import status_of


def ended(
    code: grpc.StatusCode, details: str, trailing: tuple[tuple[str, bytes | str], ...] = ()
) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details)


def test_unavailable_and_the_core_s_own_internal_reopen_a_server_s_internal_does_not() -> None:
    assert _stream_dropped(ended(grpc.StatusCode.UNAVAILABLE, "Stream removed"))
    # grpc-python's status when a request could not be written on a failed transport
    # (grpc/grpc#34148): a server killed under the stream, seen in `make faults`
    assert _stream_dropped(ended(grpc.StatusCode.INTERNAL, CORE_WRITE_FAILED))
    server = rpc_status.to_status(status_of(internal()))
    assert server.code is grpc.StatusCode.INTERNAL
    assert not _stream_dropped(ended(server.code, server.details, tuple(server.trailing_metadata)))
    assert not _stream_dropped(ended(grpc.StatusCode.INTERNAL, "Unexpected <class 'KeyError'>"))
    assert not _stream_dropped(ended(grpc.StatusCode.CANCELLED, CORE_WRITE_FAILED))


async def test_a_caller_cancelled_while_it_closes_a_session_is_cancelled() -> None:
    """A task cancelled while it closes a session (the bot pool's reader stopped just as
    its last game ended and it let the stream go) must end cancelled: the close once
    swallowed that cancellation, and the pool's reader went on waiting for seats."""
    async with GlintwickClient("127.0.0.1:1") as client:
        session = PlaySession(client)
        slow = asyncio.Event()

        async def stream() -> None:
            try:
                await asyncio.Event().wait()
            finally:
                await slow.wait()  # (its end takes a moment)

        session._task = asyncio.create_task(stream())
        await asyncio.sleep(0)
        closing = asyncio.create_task(session.close())
        await asyncio.sleep(0.01)
        closing.cancel()
        slow.set()
        await asyncio.wait({closing}, timeout=5)
        assert closing.cancelled()
