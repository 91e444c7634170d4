"""``--ack replica``: a write is answered only once a replica has it (Redis WAIT); a
replica that does not confirm in time makes it UNAVAILABLE with the reason
``REPLICA_ACK_TIMEOUT`` (never INTERNAL), and the same request retried is applied
once and answered once the replica has caught up.

Real processes: a redis-server primary and a replica (``--replicaof``) on free ports;
the replica is frozen with SIGSTOP to make its confirmation late.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Iterator

import grpc
import pytest
import redis.asyncio as aioredis

from clients.sdk import CallError, GlintwickClient, RetryPolicy
from glintwick.v1 import game_pb2 as pb
from loadtests.processes.redis import RedisProcess, redis_pair
from services.config import ServerOptions, add_arguments, options_from
from services.store.base import LogItem, StoreUnavailableError, Write
from services.store.redis import RedisStore, game_keys
from tests.e2e.support import open_env


@pytest.fixture
def pair() -> Iterator[tuple[RedisProcess, RedisProcess]]:
    with redis_pair() as both:
        yield both


async def _replica_has(replica: RedisProcess, key: str, field: str) -> bytes | None:
    client = aioredis.Redis.from_url(replica.url)
    try:
        value: bytes | None = await client.hget(key, field)
        return value
    finally:
        await client.aclose()


def test_the_flags_select_the_mode() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    local = options_from(parser.parse_args([]))
    assert (local.ack, local.replica_acks) == ("local", 0)
    strict = options_from(
        parser.parse_args(["--ack", "replica", "--ack-replicas", "2", "--ack-timeout-ms", "50"])
    )
    assert (strict.ack, strict.replica_acks, strict.ack_timeout_ms) == ("replica", 2, 50)
    with pytest.raises(SystemExit):
        parser.parse_args(["--ack", "quorum"])


async def test_an_acknowledged_write_is_on_the_replica(
    pair: tuple[RedisProcess, RedisProcess],
) -> None:
    primary, replica = pair
    store = RedisStore(primary.url, ack_replicas=1, ack_timeout=2.0)
    try:
        await store.create("g1", Write(record=b"r1"))
        # acknowledged: the replica has it now, not eventually
        assert await _replica_has(replica, game_keys("g1")[0], "rec") == b"r1"
        write = Write(b"r2", LogItem(1, b"e1"), idempotency_key="0:a", response=b"answer")
        assert await store.commit("g1", 1, write)
        assert await _replica_has(replica, game_keys("g1")[0], "rec") == b"r2"
        assert await store.idempotent_response("g1", "0:a") == b"answer"
        assert await store.idempotent_response("g1", "0:none") is None
    finally:
        await store.close()


async def test_a_frozen_replica_fails_the_ack_typed_and_a_retry_is_answered_later(
    pair: tuple[RedisProcess, RedisProcess],
) -> None:
    primary, replica = pair
    store = RedisStore(primary.url, ack_replicas=1, ack_timeout=0.2)
    try:
        await store.create("g2", Write(record=b"r1"))
        replica.freeze()
        write = Write(b"r2", LogItem(1, b"e1"), idempotency_key="0:a", response=b"answer")
        with pytest.raises(StoreUnavailableError) as caught:
            await store.commit("g2", 1, write)
        assert caught.value.reason == "REPLICA_ACK_TIMEOUT" and caught.value.write
        # applied on the primary (as the error says it may be) …
        snapshot = await store.load("g2")
        assert snapshot is not None and snapshot.record == b"r2"
        # … but never answered as a success before the replica has it
        with pytest.raises(StoreUnavailableError) as again:
            await store.idempotent_response("g2", "0:a")
        assert again.value.reason == "REPLICA_ACK_TIMEOUT"
        replica.thaw()
        assert await store.idempotent_response("g2", "0:a") == b"answer"
        assert await _replica_has(replica, game_keys("g2")[0], "rec") == b"r2"
    finally:
        replica.thaw()
        await store.close()


async def test_a_move_the_replica_does_not_confirm_is_unavailable_then_applied_once(
    pair: tuple[RedisProcess, RedisProcess],
) -> None:
    primary, replica = pair
    options = ServerOptions(store=primary.url, ack="replica", ack_timeout_ms=200)
    env = await open_env(options, "redis")
    once = GlintwickClient(env.target, retry=RetryPolicy(attempts=1, timeout=5))
    try:
        game, joined = await env.new_game(seed=b"replica-ack")
        to_act = (await joined[0].view()).to_act[0]
        seat = once.seat(game.game_id, to_act, joined[to_act].token)
        view = await seat.view()
        request_id = uuid.uuid4().hex
        replica.freeze()
        with pytest.raises(CallError) as caught:
            await seat.act(pb.Action(draw=pb.Draw()), request_id=request_id)
        assert caught.value.code is grpc.StatusCode.UNAVAILABLE
        assert caught.value.reason == "REPLICA_ACK_TIMEOUT"
        assert "may be lost" in caught.value.message
        # a retry while the replica is still behind: the same typed answer
        with pytest.raises(CallError) as again:
            await seat.act(pb.Action(draw=pb.Draw()), request_id=request_id)
        assert again.value.reason == "REPLICA_ACK_TIMEOUT"
        replica.thaw()
        answer = await seat.act(
            pb.Action(draw=pb.Draw()), request_id=request_id, expected_version=view.version
        )
        assert answer.version == view.version + 1
        assert (await seat.view()).version == view.version + 1  # applied once
    finally:
        replica.thaw()
        await once.close()
        await env.close()


async def test_the_memory_store_ignores_the_mode() -> None:
    env = await open_env(ServerOptions(store="memory", ack="replica"), "memory")
    try:
        _, joined = await env.new_game(seed=b"memory-ack")
        seat = joined[(await joined[0].view()).to_act[0]]
        view = await seat.view()
        assert (await seat.act(pb.Action(draw=pb.Draw()))).version == view.version + 1
    finally:
        await env.close()
