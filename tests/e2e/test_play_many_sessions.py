"""Hundreds of play sessions on one stream: every move made through another replica
reaches each of them, while they share one blocking Redis read per index shard.
"""

from __future__ import annotations

import asyncio

import grpc
import redis.asyncio as aioredis

from clients.sdk import Seat
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from services.store.redis import SHARDS
from tests.e2e.conftest import StartServer
from tests.e2e.play_support import DRAW, raw_play

MANY_GAMES = 150  # two seats each: 300 sessions on one stream


async def test_one_stream_holds_hundreds_of_sessions_woken_from_another_replica(
    start_server: StartServer, fresh_redis: str
) -> None:
    """300 seats of 150 games on one Play stream of replica A: every move, made through
    replica B, reaches every session of its game on A, while the sessions hold one
    blocking Redis read per index shard between them (A's log readers), not one each."""
    a = await start_server("redis")
    b = await start_server("redis")
    seats: dict[tuple[str, int], Seat] = {}
    for n in range(MANY_GAMES):
        game, joined = await a.new_game("whiskertrail", 2, f"many {n}".encode())
        for handle in joined:
            seats[(game.game_id, handle.seat)] = handle
    async with raw_play(a.target) as stream, asyncio.timeout(120):
        for (gid, _), handle in seats.items():
            stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, token=handle.token)))
        snapshots: set[tuple[str, int]] = set()
        to_act: dict[str, int] = {}  # game → the seat prompted at version 0
        while len(snapshots) < len(seats) or len(to_act) < MANY_GAMES:
            message = await stream.next()
            kind = message.WhichOneof("kind")
            assert kind in ("snapshot", "event", "prompt"), message
            if kind == "snapshot":
                snapshots.add((message.game_id, message.seat))
            elif kind == "prompt":
                assert message.prompt.version == 0
                to_act[message.game_id] = message.seat
        await asyncio.sleep(0.5)  # every session waiting for version 1
        admin = aioredis.Redis.from_url(fresh_redis)
        try:
            info = await admin.info("clients")
        finally:
            await admin.aclose()
        # A's readers, one per index shard (and B's, if any)
        assert int(info["blocked_clients"]) <= 2 * SHARDS, info

        async with grpc.aio.insecure_channel(b.target) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            for gid, seat in to_act.items():
                token = seats[(gid, seat)].token
                request = pb.SubmitActionRequest(
                    game_id=gid, expected_version=0, request_id=f"many-{gid}", action=DRAW
                )
                answer = await stub.SubmitAction(
                    request, metadata=(("authorization", f"Bearer {token}"),), timeout=10
                )
                assert answer.version == 1
        moved: set[tuple[str, int]] = set()
        while len(moved) < len(seats):
            message = await stream.next()
            if message.WhichOneof("kind") == "event" and message.event.version == 1:
                moved.add((message.game_id, message.seat))
    assert moved == set(seats)
