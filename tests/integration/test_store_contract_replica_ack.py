"""The store contract (test_store_contract.py) again, on a Redis store that acknowledges
each write only once a replica has it (``ack_replicas=1``, ``serve --ack replica``):
the same semantics, every write through WAIT (a real primary and replica, and a real
Redis Cluster, where each write's WAIT goes to the primary of the game's slot)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from loadtests.processes.cluster import RedisCluster
from loadtests.processes.redis import RedisProcess, redis_pair
from services.store.base import GameStore, LogItem, StoreUnavailableError, Write
from services.store.redis import RedisStore, game_keys
from tests.integration.test_store_contract import *  # noqa: F403 (the contract's tests)


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[RedisProcess, RedisProcess]]:
    with redis_pair() as both:
        yield both


@pytest.fixture(params=["primary-and-replica", "cluster"])
async def store(
    request: pytest.FixtureRequest, pair: tuple[RedisProcess, RedisProcess]
) -> AsyncIterator[GameStore]:
    if request.param == "cluster":
        cluster: RedisCluster = request.getfixturevalue("fresh_cluster")
        url = cluster.url
    else:
        primary, _ = pair
        client = aioredis.Redis.from_url(primary.url)
        await client.flushdb()
        await client.aclose()
        url = primary.url
    replicated = RedisStore(url, finished_ttl=60, ack_replicas=1, ack_timeout=2.0)
    try:
        yield replicated
    finally:
        await replicated.close()


async def test_a_frozen_replica_fails_the_ack_on_a_cluster_too(fresh_cluster: RedisCluster) -> None:
    """WAIT reaches the primary of the game's slot: with that primary's replica frozen,
    a write is answered REPLICA_ACK_TIMEOUT (and applied: a retry finds it)."""
    store = RedisStore(fresh_cluster.url, finished_ttl=60, ack_replicas=1, ack_timeout=0.3)
    try:
        await store.create("frozen", Write(b"r0"))
        primary = fresh_cluster.primary_of(game_keys("frozen")[0])
        with fresh_cluster.client(primary) as client:
            replicas = [int(port) for _, port, _ in client.execute_command("ROLE")[2]]
        assert replicas, "the cluster gives every primary a replica"
        for port in replicas:
            os.kill(fresh_cluster.pids[port], signal.SIGSTOP)
        try:
            with pytest.raises(StoreUnavailableError) as refused:
                await store.commit("frozen", 1, Write(b"r1", entry=LogItem(1, b"e1")))
            assert refused.value.reason == "REPLICA_ACK_TIMEOUT"
            assert refused.value.write
        finally:
            for port in replicas:
                os.kill(fresh_cluster.pids[port], signal.SIGCONT)
        snapshot = await store.load("frozen")
        assert snapshot is not None and snapshot.record == b"r1"  # applied on the primary
    finally:
        await store.close()


async def test_a_write_learns_the_new_primary_after_a_failover_by_itself(
    fresh_cluster: RedisCluster,
) -> None:
    """With replica acks a game write goes to its slot's primary by hand (EVALSHA and
    WAIT on one of its connections): after that primary dies and its replica takes
    over, the writes themselves must make the store learn the new primary (here no
    other command of the store runs that would make redis-py's cluster client learn
    it).  The promoted replica has no replica of its own yet: a write that reaches it
    is applied there and answered REPLICA_ACK_TIMEOUT."""
    store = RedisStore(fresh_cluster.url, finished_ttl=60, ack_replicas=1, ack_timeout=0.2)
    try:
        await store.create("moved", Write(b"r0"))
        await asyncio.to_thread(fresh_cluster.wait_replicated)
        victim = fresh_cluster.primary_of(game_keys("moved")[0])
        await asyncio.to_thread(fresh_cluster.kill_primary, victim)
        reasons: list[str] = []
        for _ in range(6):
            try:
                await store.commit("moved", 1, Write(b"r1"))
                break
            except StoreUnavailableError as exc:
                reasons.append(exc.reason)
                if exc.reason == "REPLICA_ACK_TIMEOUT":
                    break
            await asyncio.sleep(1.1)  # (past the store's once-a-second relearning)
        assert reasons[-1:] == ["REPLICA_ACK_TIMEOUT"], reasons
        with fresh_cluster.client(fresh_cluster.primary_of(game_keys("moved")[0])) as client:
            assert client.hget(game_keys("moved")[0], "rec") == b"r1"
    finally:
        await store.close()


async def test_a_write_to_a_slot_being_migrated_is_unavailable_not_an_error(
    fresh_cluster: RedisCluster,
) -> None:
    """While an operator moves a game's slot to another primary (resharding), a key
    not on the slot's old primary is answered ASK there: the acknowledged write
    (EVALSHA and WAIT by hand) answers that as the store unreachable (a client's retry
    meets the slot moved), not as redis-py's AskError (an INTERNAL error to the
    client).  Nothing is written anywhere."""
    store = RedisStore(fresh_cluster.url, finished_ttl=60, ack_replicas=1, ack_timeout=2.0)
    key = game_keys("asked")[0]
    source = fresh_cluster.primary_of(key)
    target = next(p for p in fresh_cluster.primaries() if p != source)
    with fresh_cluster.client(source) as old, fresh_cluster.client(target) as new:
        slot = int(old.cluster("KEYSLOT", key))
        old_id, new_id = old.execute_command("CLUSTER MYID"), new.execute_command("CLUSTER MYID")
        new.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", old_id)
        old.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", new_id)
        try:
            with pytest.raises(StoreUnavailableError) as refused:
                await store.create("asked", Write(b"r0"))
            assert not refused.value.write  # (the script ran nowhere)
            asked = new.pipeline(transaction=False)
            asked.execute_command("ASKING")  # (the new primary answers for the slot so)
            asked.exists(key)
            assert asked.execute()[1] == 0
        finally:
            old.execute_command("CLUSTER SETSLOT", slot, "STABLE")
            new.execute_command("CLUSTER SETSLOT", slot, "STABLE")
            await store.close()
