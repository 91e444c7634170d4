"""The floor of a Play move: a bare grpc.aio bidirectional stream, one EVALSHA a message.

Every message a client sends on ``Play`` is answered by one message, after one
``EVALSHA`` on Redis (a ``SET`` of a ``--payload-bytes`` value: a move's commit is one
script).  The answer is the PlayResponse given in ``--reply`` (a file of its bytes: a
real prompt, so that the floor serializes what the Glintwick server sends).  What a
move cannot cost less than on this stack: one message in, one out, one script
(bench/bench_floor.py measures the server's CPU for it next to the real server's).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import redis.asyncio as aioredis

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from services.server import run_async
from services.store.redis import connection_pool

SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return 1"


class Floor(pb_grpc.GameServiceServicer):
    def __init__(self, redis_url: str, reply: pb.PlayResponse, payload_bytes: int) -> None:
        # (the store's connections, hiredis packing: like with like)
        self._redis = aioredis.Redis(
            connection_pool=connection_pool(redis_url, aioredis.ConnectionPool)
        )
        self._reply = reply
        self._payload = "x" * payload_bytes
        self._sha = ""

    async def Ping(
        self, request: pb.PingRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.PingResponse:
        if not self._sha:
            self._sha = await self._redis.script_load(SCRIPT)
        return pb.PingResponse()

    async def Play(
        self,
        request_iterator: AsyncIterator[pb.PlayRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[pb.PlayResponse]:
        async for request in request_iterator:
            key = f"floor:{request.act.game_id}"
            await self._redis.evalsha(self._sha, 1, key, self._payload)  # type: ignore[misc]
            # (a new message each time, as a server building its reply does)
            reply = pb.PlayResponse()
            reply.CopyFrom(self._reply)
            yield reply


async def main(port: int, redis_url: str, reply: Path, payload_bytes: int) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    reply_message = pb.PlayResponse.FromString(reply.read_bytes())
    floor = Floor(redis_url, reply_message, payload_bytes)  # type: ignore[abstract]
    pb_grpc.add_GameServiceServicer_to_server(floor, server)
    if server.add_insecure_port(f"127.0.0.1:{port}") == 0:
        raise OSError(f"cannot bind port {port}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--reply", type=Path, required=True)
    parser.add_argument("--payload-bytes", type=int, default=600)
    parser.add_argument("--event-loop", choices=["auto", "uvloop", "asyncio"], default="auto")
    args = parser.parse_args()
    run_async(main(args.port, args.redis, args.reply, args.payload_bytes), args.event_loop)
