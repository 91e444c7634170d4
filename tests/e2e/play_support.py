"""Shared machinery of the play-session tests (tests/e2e/test_play_*.py).

* :func:`choose`: the greedy house bot's choice of a move, on the wire's messages.
* :func:`mirror_from_log`: the store's action log of a game replayed into a
  :class:`~tests.e2e.support.Mirror`; :func:`all_events`: what the mirror says a seat
  receives over the whole game.
* :class:`RawPlay` (:func:`raw_play`): a raw Play stream, written to message by message
  (or with bytes that are no message) and read answer by answer; :func:`act` and
  :data:`DRAW` build what it sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import grpc

from clients.bots.greedy import GreedyBot
from clients.turn import wire_choice
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from tests.e2e.support import Mirror


def choose(view: pb.View, actions: list[pb.Action], rng: random.Random) -> pb.Action:
    """The greedy house bot's choice (games of a few hundred moves, not thousands)."""
    return wire_choice(GreedyBot(), view, actions, rng)


async def mirror_from_log(env_store: object, game_id: str, mirror: Mirror) -> list[spb.LogEntry]:
    """Replay the store's action log into ``mirror``; the entries."""
    from services.store.base import GameStore

    assert isinstance(env_store, GameStore)
    entries: list[spb.LogEntry] = []
    while items := await env_store.read_log(game_id, len(entries)):
        entries.extend(spb.LogEntry.FromString(i.entry) for i in items)
    assert [e.version for e in entries] == list(range(1, len(entries) + 1)), "a gap in the log"
    for entry in entries:
        mirror.apply(entry.seat, convert.action_from_pb(entry.action))
    return entries


def all_events(mirror: Mirror, seat: int) -> list[pb.Event]:
    return [e for v in range(mirror.version + 1) for e in mirror.expected_events(seat, v)]


class RawPlay:
    """A raw Play stream: send messages (or bytes), read the answers one by one."""

    def __init__(self, channel: grpc.aio.Channel, token: str | None = None) -> None:
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        call = channel.stream_stream(
            "/glintwick.v1.GameService/Play",
            request_serializer=lambda data: data,
            response_deserializer=pb.PlayResponse.FromString,
        )
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.call = call(self._requests(), metadata=metadata)

    async def _requests(self) -> AsyncIterator[bytes]:
        while True:
            data = await self._queue.get()
            if data is None:
                return
            yield data

    def send(self, message: pb.PlayRequest | bytes) -> None:
        data = message if isinstance(message, bytes) else message.SerializeToString()
        self._queue.put_nowait(data)

    async def next(self, kind: str | None = None) -> pb.PlayResponse:
        """The next message (of ``kind``, skipping others) within 10 s."""
        async with asyncio.timeout(10):
            while True:
                message = await self.call.read()
                assert isinstance(message, pb.PlayResponse), "the stream ended"
                if kind is None or message.WhichOneof("kind") == kind:
                    return message

    def cancel(self) -> None:
        self.call.cancel()


@contextlib.asynccontextmanager
async def raw_play(target: str, token: str | None = None) -> AsyncIterator[RawPlay]:
    async with grpc.aio.insecure_channel(target) as channel:
        stream = RawPlay(channel, token)
        try:
            yield stream
        finally:
            stream.cancel()


def act(game_id: str, version: int, request_id: str, action: pb.Action) -> pb.PlayRequest:
    return pb.PlayRequest(
        act=pb.PlayAct(
            game_id=game_id, expected_version=version, request_id=request_id, action=action
        )
    )


DRAW = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))
