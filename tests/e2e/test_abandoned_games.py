"""Abandoned games in real time, through the public gRPC API over a real Redis: with
short limits, an idle game ends with its event (a watcher and a play session see it
and close), its keys get the finished games' TTL, and a table nobody joined leaves
the lobby.  (The rules on a fake clock: tests/integration/test_abandoned_games.py.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import redis.asyncio as aioredis

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from services.store.redis import game_keys
from tests.e2e.conftest import StartServer

ABANDON_AFTER = 2.0
UNJOINED_AFTER = 1.0
FINISHED_TTL = 30


async def watch_to_end(stub: pb_grpc.GameServiceAsyncStub, game_id: str) -> list[pb.Event]:
    events = []
    async for item in stub.WatchGame(pb.WatchGameRequest(game_id=game_id)):
        if item.HasField("event"):
            events.append(item.event)
    return events


async def play_to_end(
    stub: pb_grpc.GameServiceAsyncStub, game_id: str, token: str
) -> list[pb.PlayResponse]:
    """A seat's play session that never acts, until the server closes it."""
    closed = asyncio.Event()

    async def requests() -> AsyncIterator[pb.PlayRequest]:
        yield pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=game_id, token=token))
        await closed.wait()

    received = []
    call = stub.Play(requests())
    async for response in call:
        received.append(response)
        if response.HasField("closed"):
            closed.set()
            break
    call.cancel()
    return received


async def ttl(redis_url: str, game_id: str) -> int:
    client = aioredis.Redis.from_url(redis_url)
    try:
        return int(await client.ttl(game_keys(game_id)[0]))
    finally:
        await client.aclose()


async def test_idle_games_end_and_expire_in_real_time(
    start_server: StartServer, fresh_redis: str
) -> None:
    env = await start_server(
        "redis",
        abandon_after=ABANDON_AFTER,
        unjoined_after=UNJOINED_AFTER,
        finished_ttl=FINISHED_TTL,
    )
    async with grpc.aio.insecure_channel(env.target) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        create = pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2)
        table = await stub.CreateGame(create)
        game = await stub.CreateGame(create)
        first = await stub.JoinGame(pb.JoinGameRequest(game_id=game.game_id, seat=0))
        last_write = time.monotonic()  # (before the last write: its stamp is later)
        await stub.JoinGame(pb.JoinGameRequest(game_id=game.game_id, seat=1))
        lobby = await stub.ListOpenGames(pb.ListOpenGamesRequest())
        assert [g.game_id for g in lobby.games] == [table.game_id]
        assert await ttl(fresh_redis, game.game_id) == -1  # unfinished: no expiry

        async with asyncio.timeout(30):
            watched, played = await asyncio.gather(
                watch_to_end(stub, game.game_id), play_to_end(stub, game.game_id, first.token)
            )
        # (never before its limit: the idle clock counts from the last join)
        assert time.monotonic() - last_write >= ABANDON_AFTER

        assert watched[-1].type == pb.EVENT_TYPE_GAME_ABANDONED and not watched[-1].HasField("seat")
        assert watched[-1].game_abandoned.seed and watched[-1].version == 1
        events = [r.event for r in played if r.HasField("event")]
        assert events[-1].type == pb.EVENT_TYPE_GAME_ABANDONED
        closed = played[-1].closed
        assert not closed.HasField("error") and closed.final_view.abandoned
        assert closed.final_view.game_over and list(closed.final_view.winners) == []

        view = await stub.GetView(pb.GetViewRequest(game_id=game.game_id))
        assert view.game_over and view.abandoned and view.version == 1
        assert 0 < await ttl(fresh_redis, game.game_id) <= FINISHED_TTL

        # the table nobody joined ended sooner, and left the lobby
        lobby = await stub.ListOpenGames(pb.ListOpenGamesRequest())
        assert list(lobby.games) == []
        ended = await stub.GetView(pb.GetViewRequest(game_id=table.game_id))
        assert ended.abandoned and ended.game_over
        assert 0 < await ttl(fresh_redis, table.game_id) <= FINISHED_TTL
        try:
            await stub.JoinGame(pb.JoinGameRequest(game_id=table.game_id))
        except grpc.aio.AioRpcError as refused:
            assert refused.code() is grpc.StatusCode.FAILED_PRECONDITION
        else:
            raise AssertionError("joined an abandoned table")
