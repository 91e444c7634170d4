"""Baseline servers for the service benchmark: the same proto, trivial work.

``--mode empty`` answers Ping with nothing; ``--mode getset`` does one Redis GET
and one SET per Ping (what the cheapest stateful RPC costs).  The benchmark runs
them next to the real server in the same run, on the same event loop
(``--event-loop``, as the server's flag) and with the same Redis connections, so
ratios compare like with like.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

import grpc
import redis.asyncio as aioredis

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from services.server import run_async
from services.store.redis import connection_pool


class Baseline(pb_grpc.GameServiceServicer):
    def __init__(self, redis_url: str | None) -> None:
        # The store's connections (hiredis packing), so the two compare like with
        # like; in redis-py's default pool, which does not wait for a free
        # connection as the store's does: the cheapest GET + SET, not a handicapped one.
        self._redis = (
            aioredis.Redis(connection_pool=connection_pool(redis_url, aioredis.ConnectionPool))
            if redis_url
            else None
        )
        self._n = 0

    async def Ping(
        self, request: pb.PingRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.PingResponse:
        if self._redis is not None:
            self._n += 1
            key = f"bench:{self._n % 1000}"
            await self._redis.get(key)
            await self._redis.set(key, b"x" * 600)
        return pb.PingResponse()


async def main(port: int, redis_url: str | None) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    pb_grpc.add_GameServiceServicer_to_server(Baseline(redis_url), server)  # type: ignore[abstract]
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
    parser.add_argument("--redis")
    parser.add_argument("--event-loop", choices=["auto", "uvloop", "asyncio"], default="auto")
    args = parser.parse_args()
    run_async(main(args.port, args.redis), args.event_loop)
