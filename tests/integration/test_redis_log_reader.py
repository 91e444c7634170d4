"""The Redis store's log readers, one per index shard with a waiter: every
``wait_log`` caller of a store is answered by its shard's one blocking ``XREAD`` on one
connection, however many wait.

Real redis-servers on free ports; a second RedisStore on the same Redis plays
another replica, whose commits must reach the first one's waiters at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from loadtests.processes.cluster import RedisCluster
from services.store.base import LogItem, StoreUnavailableError, Write
from services.store.redis import READ_BLOCK_MS, RedisStore, index_key, log_reader, shard_of
from tests.e2e.test_store_outage import redis as outage_redis

WAITERS = 300
# far below the reader's block time: an answer this fast did not wait for the block to end
PROMPTLY = READ_BLOCK_MS / 1000 / 2


@contextlib.asynccontextmanager
async def replicas(url: str, **options: Any) -> AsyncIterator[tuple[RedisStore, RedisStore]]:
    """Two stores on one Redis, as two server processes would have (the first one
    waits, the second one writes)."""
    waiting, writing = RedisStore(url, finished_ttl=60, **options), RedisStore(url, finished_ttl=60)
    try:
        yield waiting, writing
    finally:
        await waiting.close()
        await writing.close()


async def clients(url: str) -> dict[str, Any]:
    admin = aioredis.Redis.from_url(url)
    try:
        return dict(await admin.info("clients"))
    finally:
        await admin.aclose()


async def until(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


def waiting_on(store: RedisStore) -> int:
    return sum(len(f.waiters) for r in store._readers.values() for f in r.followed.values())


def reading(store: RedisStore) -> dict[str, int]:
    """Every game of the XREADs in flight: game id → the version read after."""
    return {g: v for r in store._readers.values() for g, v in (r.in_flight or {}).items()}


def idle(store: RedisStore) -> bool:
    """No game followed, no read in flight."""
    return all(not r.followed and r.in_flight is None for r in store._readers.values())


async def test_hundreds_of_waiters_share_one_connection_and_wake_on_another_replica(
    redis_url: str,
) -> None:
    """300 waiters on 300 games hold one blocked Redis client between them (a pool of
    4 connections for everything else: a connection per waiter would queue all but 4),
    and a commit made through the other replica answers each at once."""
    admin = aioredis.Redis.from_url(redis_url)
    await admin.flushdb()
    await admin.aclose()
    async with replicas(redis_url, max_connections=4) as (waiting, writing):
        games = [f"many-{n}" for n in range(WAITERS)]
        for game in games:
            await writing.create(game, Write(b"0"))
        before = await clients(redis_url)
        tasks = [asyncio.create_task(waiting.wait_log(g, 0, timeout=30)) for g in games]
        # (one reader on one Redis, issuing its read again as the waiters arrive)
        await until(lambda: waiting_on(waiting) == WAITERS and len(reading(waiting)) == WAITERS, 30)
        await asyncio.sleep(0.2)
        info = await clients(redis_url)
        shards = 1  # (one XREAD for every game: a cluster has one a shard, below)
        assert int(info["blocked_clients"]) == shards, info
        # the waiting store's own connections: its pool (≤ 4) and its reader
        assert int(info["connected_clients"]) - int(before["connected_clients"]) <= 4 + shards
        assert int(info["connected_clients"]) < 10 + shards, info
        assert not any(t.done() for t in tasks)

        started = time.monotonic()
        for n, game in enumerate(games):
            assert await writing.commit(game, 1, Write(b"1", entry=LogItem(1, f"e{n}".encode())))
        answers = await asyncio.gather(*tasks)
        assert time.monotonic() - started < PROMPTLY + 2
        assert [[(i.version, i.entry) for i in a] for a in answers] == [
            [(1, f"e{n}".encode())] for n in range(WAITERS)
        ]
        assert waiting_on(waiting) == 0


async def test_on_a_cluster_each_shard_has_one_read_on_its_node(
    fresh_cluster: RedisCluster,
) -> None:
    """On a Redis Cluster, waiters on games of every shard: one blocked client per
    shard, each on the primary serving that shard's slot; a commit through the other
    replica answers each at once."""
    async with replicas(fresh_cluster.url) as (waiting, writing):
        games = [f"spread-{n}" for n in range(100)]
        for game in games:
            await writing.create(game, Write(b"0"))
        tasks = [asyncio.create_task(waiting.wait_log(g, 0, timeout=30)) for g in games]
        await until(lambda: waiting_on(waiting) == 100 and len(reading(waiting)) == 100)
        expected = Counter(
            fresh_cluster.primary_of(index_key(shard, "active"))
            for shard in {shard_of(g) for g in games}
        )
        deadline = time.monotonic() + 10
        while True:  # (until every reader's XREAD has reached its node)
            blocked = {}
            for port in fresh_cluster.primaries():
                info = await clients(f"redis://127.0.0.1:{port}")
                blocked[port] = int(info["blocked_clients"])
            if blocked == {port: expected[port] for port in blocked}:
                break
            assert time.monotonic() < deadline, (blocked, expected)
            await asyncio.sleep(0.05)
        started = time.monotonic()
        for n, game in enumerate(games):
            assert await writing.commit(game, 1, Write(b"1", entry=LogItem(1, f"e{n}".encode())))
        answers = await asyncio.gather(*tasks)
        assert time.monotonic() - started < PROMPTLY
        assert [[i.entry for i in a] for a in answers] == [[f"e{n}".encode()] for n in range(100)]


async def test_a_waiter_registered_while_the_reader_blocks_is_woken_at_once(
    redis_store: RedisStore, redis_url: str
) -> None:
    """The reader is blocked on game a's log when a waiter on game b (of the same
    shard) arrives: the wake stream makes it read b's log too, at once; once b has
    been read, a waiter coming back to b finds it in the read (no wake), as a session
    does after each move."""
    a = "a"
    b = next(g for g in (f"b{n}" for n in itertools.count()) if shard_of(g) == shard_of(a))
    async with replicas(redis_url) as (_, writing):
        for game in (a, b):
            await writing.create(game, Write(b"0"))
        on_a = asyncio.create_task(redis_store.wait_log(a, 0, timeout=30))
        await until(lambda: a in reading(redis_store))
        await asyncio.sleep(0.3)  # blocked in its XREAD

        on_b = asyncio.create_task(redis_store.wait_log(b, 0, timeout=30))
        await until(lambda: waiting_on(redis_store) == 2)
        await asyncio.sleep(0.1)
        started = time.monotonic()
        assert await writing.commit(b, 1, Write(b"1", entry=LogItem(1, b"b1")))
        assert [i.entry for i in await on_b] == [b"b1"]
        assert time.monotonic() - started < PROMPTLY
        assert not on_a.done()

        # b stays in the read at version 1: coming back needs no wake
        await until(lambda: reading(redis_store).get(b) == 1)
        wake_key = redis_store._readers[redis_store._reader_shard(b)].wake_key
        wakes = await redis_store._redis.xrevrange(wake_key, count=1)
        again = asyncio.create_task(redis_store.wait_log(b, 1, timeout=30))
        await until(lambda: waiting_on(redis_store) == 2)
        started = time.monotonic()
        assert await writing.commit(b, 2, Write(b"2", entry=LogItem(2, b"b2")))
        assert [i.entry for i in await again] == [b"b2"]
        assert time.monotonic() - started < PROMPTLY
        assert await redis_store._redis.xrevrange(wake_key, count=1) == wakes
        # the wake stream expires by itself (a dead process leaves nothing behind)
        ttl = await redis_store._redis.pttl(wake_key)
        assert 0 < ttl <= log_reader.WAKE_TTL_MS

        assert await writing.commit(a, 1, Write(b"1", entry=LogItem(1, b"a1")))
        assert [i.entry for i in await on_a] == [b"a1"]


async def test_waiters_behind_the_read_get_every_entry_after_their_version(
    redis_store: RedisStore, redis_url: str
) -> None:
    """Waiters of one game at different versions each get exactly the entries after
    theirs (one that asks for a version the read in flight has passed is read again)."""
    async with replicas(redis_url) as (_, writing):
        await writing.create("g", Write(b"0"))
        for v in (1, 2):
            assert await writing.commit("g", v, Write(b"x", entry=LogItem(v, f"e{v}".encode())))
        ahead = asyncio.create_task(redis_store.wait_log("g", 5, timeout=30))
        await until(lambda: reading(redis_store).get("g") == 5)
        caught_up = asyncio.create_task(redis_store.wait_log("g", 2, timeout=30))
        await until(lambda: reading(redis_store).get("g") == 2)
        for v in range(3, 7):
            assert await writing.commit("g", v, Write(b"x", entry=LogItem(v, f"e{v}".encode())))
        assert (await caught_up)[0].version == 3  # (the first commit answers it)
        assert [i.version for i in await ahead] == [6]


async def test_cancelled_and_timed_out_waiters_leave_nothing_behind(
    redis_store: RedisStore, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_reader, "LINGER", 0.2)
    async with replicas(redis_url) as (_, writing):
        games = [f"c{n}" for n in range(50)]
        for game in games:
            await writing.create(game, Write(b"0"))
        tasks = [asyncio.create_task(redis_store.wait_log(g, 0, timeout=30)) for g in games]
        await until(lambda: waiting_on(redis_store) == 50)
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results), results
        assert await redis_store.wait_log("c0", 0, timeout=0.1) == []
        assert waiting_on(redis_store) == 0
        # idle past LINGER: out of the read, and the reader idles with no read at all
        await until(lambda: idle(redis_store), 10)
        assert (await clients(redis_url))["blocked_clients"] == 0
        # and it still answers
        waiter = asyncio.create_task(redis_store.wait_log("c7", 0, timeout=30))
        await until(lambda: waiting_on(redis_store) == 1)
        assert await writing.commit("c7", 1, Write(b"1", entry=LogItem(1, b"back")))
        assert [i.entry for i in await waiter] == [b"back"]


async def test_a_followed_game_stays_read_past_linger_and_leaves_with_its_last_session(
    redis_store: RedisStore, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game that sessions follow stays in the read between their waits however long
    (no wake needed when one comes back); after the last session's unfollow it leaves
    the read at once, not LINGER later (a game with no session is never read)."""
    monkeypatch.setattr(log_reader, "LINGER", 0.2)
    async with replicas(redis_url) as (_, writing):
        for game in ("f", "other"):
            await writing.create(game, Write(b"0"))
        redis_store.follow("f")
        redis_store.follow("f")  # (two seats' sessions)
        assert await redis_store.wait_log("f", 0, timeout=0.05) == []
        waiter = asyncio.create_task(redis_store.wait_log("other", 0, timeout=30))
        await until(lambda: set(reading(redis_store)) == {"f", "other"})
        await asyncio.sleep(0.5)  # past LINGER, nobody waiting on "f": still read
        assert await writing.commit("other", 1, Write(b"1", entry=LogItem(1, b"o1")))
        assert [i.entry for i in await waiter] == [b"o1"]
        waiter = asyncio.create_task(redis_store.wait_log("other", 1, timeout=30))
        await until(lambda: set(reading(redis_store)) == {"f", "other"})
        redis_store.unfollow("f")
        assert "f" in redis_store._readers[0].followed  # (one session left)
        redis_store.unfollow("f")
        assert "f" not in redis_store._readers[0].followed
        assert await writing.commit("other", 2, Write(b"2", entry=LogItem(2, b"o2")))
        assert [i.entry for i in await waiter] == [b"o2"]
        await until(lambda: "f" not in reading(redis_store) and bool(reading(redis_store)))


async def test_a_killed_redis_fails_the_waiters_and_the_reader_comes_back(
    tmp_path: Path,
) -> None:
    with outage_redis(tmp_path) as server:
        async with replicas(server.url) as (waiting, writing):
            for n in range(20):
                await writing.create(f"k{n}", Write(b"0"))
            tasks = [
                asyncio.create_task(waiting.wait_log(f"k{n}", 0, timeout=30)) for n in range(20)
            ]
            await until(lambda: len(reading(waiting)) == 20)
            started = time.monotonic()
            server.kill()
            for task in tasks:
                with pytest.raises(StoreUnavailableError):
                    await task
            assert time.monotonic() - started < PROMPTLY
            assert waiting_on(waiting) == 0
            with pytest.raises(StoreUnavailableError):
                await waiting.wait_log("k0", 0, timeout=1)

            server.start()  # (append-only file: the games are still there)
            deadline = time.monotonic() + 20
            while True:  # (until the store's pool has its connection back)
                with contextlib.suppress(StoreUnavailableError):
                    await waiting.read_log("k3", 0)
                    break
                assert time.monotonic() < deadline, "Redis did not come back"
                await asyncio.sleep(0.1)
            waiter = asyncio.create_task(waiting.wait_log("k3", 0, timeout=30))
            await until(lambda: reading(waiting).get("k3") == 0)
            assert await writing.commit("k3", 1, Write(b"1", entry=LogItem(1, b"after")))
            assert [i.entry for i in await waiter] == [b"after"]


async def test_close_stops_the_reader_and_fails_its_waiters(redis_url: str) -> None:
    store = RedisStore(redis_url)
    await store.create("closing", Write(b"0"))
    waiter = asyncio.create_task(store.wait_log("closing", 0, timeout=30))
    await until(lambda: "closing" in reading(store))
    reader = store._readers[store._reader_shard("closing")].task
    await store.close()
    assert reader is not None and reader.done()
    with pytest.raises(StoreUnavailableError):
        await waiter
