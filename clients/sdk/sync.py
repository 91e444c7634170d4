"""The same calls for code that is not async."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from clients.sdk.client import GlintwickClient, Seat
from glintwick.v1 import game_pb2 as pb

T = TypeVar("T")


class SyncClient:
    """The same calls for code that is not async (one private event loop)."""

    def __init__(self, target: str | Sequence[str], **kw: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._client: GlintwickClient = self._run(_make_client(target, kw))

    def _run(self, awaitable: Awaitable[T]) -> T:
        return self._loop.run_until_complete(awaitable)

    def close(self) -> None:
        self._run(self._client.close())
        self._loop.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_game(self, rule_set: str = "whiskertrail", **kw: Any) -> pb.Game:
        return self._run(self._client.create_game(rule_set, **kw))

    def join(self, game_id: str, **kw: Any) -> SyncSeat:
        return SyncSeat(self, self._run(self._client.join(game_id, **kw)))

    def analyse(
        self, rule_set: str, round_number: int, hand: Sequence[str]
    ) -> pb.AnalyseHandResponse:
        return self._run(self._client.analyse(rule_set, round_number, hand))

    def replay(self, game_id: str) -> pb.Replay:
        return self._run(self._client.replay(game_id))


class SyncSeat:
    def __init__(self, owner: SyncClient, seat: Seat) -> None:
        self._owner = owner
        self.seat = seat

    def view(self) -> pb.View:
        return self._owner._run(self.seat.view())

    def legal_actions(self) -> list[pb.Action]:
        return self._owner._run(self.seat.legal_actions())

    def act(self, action: pb.Action, **kw: Any) -> pb.SubmitActionResponse:
        return self._owner._run(self.seat.act(action, **kw))


async def _make_client(target: str | Sequence[str], kw: dict[str, Any]) -> GlintwickClient:
    # a grpc.aio channel belongs to the loop it is made on: make it on ours
    return GlintwickClient(target, **kw)
