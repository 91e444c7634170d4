"""The Redis store's own promises, beyond the contract both stores keep."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
import redis.asyncio as aioredis

from glintwick.v1 import game_pb2 as pb
from loadtests.processes.cluster import RedisCluster
from loadtests.processes.redis import redis_server
from services.api import Caller, GameService, ServiceConfig
from services.store.base import LogItem, StoreUnavailableError, Write
from services.store.redis import SHARDS, RedisStore, game_keys, hold_key, rate_key, shard_of
from tests.support.store_connections import check_a_closed_transport_is_unreachable, on_loop


async def test_indexes_change_in_the_same_script_as_the_record(
    redis_store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating a game and committing a move are one script each, indexes included: a
    process that dies after the script leaves no game out of its indexes (a deadline
    never indexed would never fire).  Any second round trip fails the test here."""

    def no_second_round_trip(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an index written apart from the script")

    # (reads across shards are pipelined: a pipeline may read, never write an index)
    for name in ("sadd", "srem", "zadd", "zrem"):
        monkeypatch.setattr(redis_store._redis, name, no_second_round_trip)
        monkeypatch.setattr(aioredis.client.Pipeline, name, no_second_round_trip)
    await redis_store.create("g", Write(b"0"))
    assert await redis_store.games_in_play() == 1
    assert await redis_store.commit("g", 1, Write(b"1", deadline=100.0))
    assert await redis_store.due_deadlines(200.0) == ["g"]
    # the same deadline again: the index is left as it is
    assert await redis_store.commit("g", 2, Write(b"2", deadline=300.0, deadline_changed=False))
    assert await redis_store.due_deadlines(200.0) == ["g"]
    assert await redis_store.commit("g", 3, Write(b"3", deadline=None))
    assert await redis_store.due_deadlines(1e12) == []
    assert await redis_store.commit("g", 4, Write(b"4", entry=LogItem(1, b"e"), finished=True))
    assert await redis_store.games_in_play() == 0
    assert await redis_store.commit("h", 1, Write(b"x")) is False  # no such game: no write
    assert await redis_store.games_in_play() == 0


async def test_a_commit_after_redis_forgot_the_script_loads_it_again(
    redis_store: RedisStore,
) -> None:
    """The commit's EVALSHA, sent as a command of its own: a Redis that forgot its
    scripts (restarted, SCRIPT FLUSH) answers NOSCRIPT, the script is loaded and the
    commit sent again, once; it lands once."""
    await redis_store.create("g", Write(b"0"))
    await redis_store._redis.script_flush()
    assert await redis_store.commit("g", 1, Write(b"1", entry=LogItem(1, b"e1")))
    await redis_store._redis.script_flush()
    assert await redis_store.commit("g", 1, Write(b"x")) is False  # (the compare-and-set)
    assert await redis_store.commit("g", 2, Write(b"2", entry=LogItem(2, b"e2")))
    assert [item.version for item in await redis_store.read_log("g", 0)] == [1, 2]
    snapshot = await redis_store.load("g")
    assert snapshot is not None and (snapshot.revision, snapshot.record) == (3, b"2")


# Commands as redis-py's own asyncio connection packs them, and what hiredis's must
# pack the same: text (non-ASCII too), bytes, ints, floats, memoryviews, a command
# name carrying its subcommand, the store's own scripts' arguments.
_COMMANDS: list[tuple[Any, ...]] = [
    ("GET", "g:{abc}:rec"),
    ("CONFIG GET", "maxmemory"),
    (b"CONFIG GET", b"maxmemory"),
    ("HMGET", "g:{é☃}:rec", "rev", "rec"),
    ("ZADD", "glintwick:deadlines", 1764520000.123456, "g"),
    ("ZRANGEBYSCORE", "k", float("-inf"), 1e-05, "LIMIT", 0, 10),
    ("XADD", "g:{a}:log", "7-1", "e", memoryview(b"\x00\xffentry")),
    ("EVALSHA", "a" * 40, 7, "g:{abc}:rec", 5, b"x" * 7000, "", b"", 0, -3, 2**63 - 1),
]


@pytest.mark.parametrize("command", _COMMANDS)
def test_commands_pack_as_redis_py_packs_them(command: tuple[Any, ...]) -> None:
    import redis.asyncio as aioredis

    from services.store.redis.connections import hiredis_packing

    ours = hiredis_packing(aioredis.Connection)()
    theirs = aioredis.Connection()
    assert b"".join(ours.pack_command(*command)) == b"".join(
        bytes(chunk) for chunk in theirs.pack_command(*command)
    )


@pytest.mark.parametrize("value", [None, True, [1, 2], {"a": 1}, bytearray(b"x")])
def test_a_value_redis_cannot_take_is_a_data_error_as_in_redis_py(value: Any) -> None:
    import redis.asyncio as aioredis
    from redis.exceptions import DataError

    from services.store.redis.connections import hiredis_packing

    for connection in (hiredis_packing(aioredis.Connection)(), aioredis.Connection()):
        with pytest.raises(DataError):
            connection.pack_command("SET", "k", value)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("redis://127.0.0.1:6379/0", "Connection"),
        ("rediss://127.0.0.1:6380/0", "SSLConnection"),
        ("unix:///run/redis.sock?db=0", "UnixDomainSocketConnection"),
    ],
)
def test_every_url_scheme_keeps_its_connection_and_packs_by_hiredis(url: str, kind: str) -> None:
    import redis.asyncio as aioredis

    from services.store.redis import connection_pool
    from services.store.redis.connections import HiredisPacking

    made = connection_pool(url, max_connections=2).connection_class
    assert issubclass(made, HiredisPacking)
    assert issubclass(made, getattr(aioredis, kind))


def test_a_url_with_another_encoding_keeps_redis_py_packing() -> None:
    from services.store.redis import connection_pool
    from services.store.redis.connections import HiredisPacking

    made = connection_pool("redis://127.0.0.1:6379/0?encoding=latin-1", max_connections=2)
    assert not issubclass(made.connection_class, HiredisPacking)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_connection_closed_under_a_command_is_unreachable_on_one_redis(
    redis_url: str, loop: str
) -> None:
    """A transport closed under a command raises a RuntimeError on uvloop ("the
    handler is closed"), an AttributeError or TypeError on asyncio: the connections of
    one Redis answer it as a ConnectionError, as those of a cluster do.  CI met it in
    a log reader connecting to a Redis killed under the handshake, which logged the
    reader's traceback as a bug."""
    from services.store.redis import connection_pool

    async def send_on_a_closed_transport() -> None:
        pool = connection_pool(redis_url, max_connections=1)
        connection = pool.make_connection()  # type: ignore[no-untyped-call]
        try:
            await connection.connect()
            await check_a_closed_transport_is_unreachable(connection)
        finally:
            await connection.disconnect(nowait=True)
            await pool.aclose()

    on_loop(loop, send_on_a_closed_transport)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_pooled_connection_with_something_waiting_is_connected_again(
    redis_url: str, loop: str
) -> None:
    """A connection taken from the pool is checked before its command (here without
    a trip round the event loop): a reply left unread on it, or its close by the
    server, and the pool connects it again: each command gets its own answer."""
    from services.store.redis import connection_pool

    async def left_and_closed() -> None:
        client = aioredis.Redis(connection_pool=connection_pool(redis_url, max_connections=1))
        other = aioredis.Redis.from_url(redis_url)
        try:
            assert await client.echo("first") == b"first"
            (connection,) = client.connection_pool._available_connections
            await connection.send_command("ECHO", "left unread")
            await asyncio.sleep(0.1)  # (its reply arrives)
            assert await client.echo("second") == b"second"
            assert await other.client_kill_filter(_id=await client.client_id()) == 1
            await asyncio.sleep(0.1)  # (the close arrives)
            assert await client.echo("third") == b"third"
        finally:
            await client.aclose()
            await other.aclose()

    on_loop(loop, left_and_closed)


async def test_lobby_positions_are_unique_across_shards(redis_store: RedisStore) -> None:
    """A lobby position is microseconds of Redis's clock rounded up to its shard's
    residue modulo SHARDS: games of different shards never share one, whatever their
    clocks, and each shard's positions grow (its lobby clock)."""
    games = [f"lobby-{n}" for n in range(64)]
    for game in games:
        await redis_store.create(game, Write(b"0", open_seats=True, rule_set_hash="A"))
    listed = await redis_store.open_games(limit=100)
    assert sorted(g.game_id for g in listed) == sorted(games)
    assert all(g.position % SHARDS == shard_of(g.game_id) for g in listed)
    assert len({g.position for g in listed}) == len(games)
    by_shard: dict[int, list[str]] = {}
    for game in games:  # (in creation order)
        by_shard.setdefault(shard_of(game), []).append(game)
    order = [g.game_id for g in listed]
    for created in by_shard.values():
        assert sorted(created, key=order.index) == created
    assert len(by_shard) > 8  # (the games spread over the shards)


async def test_the_limits_keys_expire_and_each_is_its_own_slot(
    redis_store: RedisStore, redis_url: str
) -> None:
    """A rate cell lives until it is full again, a bounded set until its last lease
    ends: a flood of clients leaves nothing behind; each key's hash tag is its whole
    name (one Redis Cluster slot: the scripts touch that key alone)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        await redis_store.take("flood", 1.0, 10)
        ttl = await client.pttl(rate_key("flood"))
        assert 900 < ttl <= 1001  # one request's refill (1 s), rounded up
        await redis_store.hold("set", "m", 5, 30)
        assert 29_000 < await client.pttl(hold_key("set")) <= 30_001
        assert rate_key("x") == "glintwick:rate:{x}" and hold_key("x") == "glintwick:hold:{x}"
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    "setting", [("maxmemory", "1"), ("min-replicas-to-write", "1")], ids=["oom", "noreplicas"]
)
async def test_a_redis_that_refuses_writes_is_unavailable_and_the_limits_fail_open(
    setting: tuple[str, str],
) -> None:
    """A Redis that refuses every write by its own state (at its maxmemory with
    noeviction: OOM; short of its min-replicas-to-write: NOREPLICAS) is a store that
    cannot take a write now: StoreUnavailableError (UNAVAILABLE, retried), not
    redis-py's ResponseError (INTERNAL).  The rate-limit cell is a write too: it fails
    open, so a read (GetView) is still answered, as before the limits."""
    with redis_server() as url:
        store = RedisStore(url)
        admin = aioredis.Redis.from_url(url)
        try:
            service = GameService(store, ServiceConfig())
            game = await service.create_game(
                pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2), Caller(address="x")
            )
            await admin.config_set(*setting)
            for write in (
                store.create("other", Write(b"r0")),
                store.commit(game.game_id, 1, Write(b"r1", entry=LogItem(1, b"e1"))),
                store.take("cell", 1.0, 1),
            ):
                with pytest.raises(StoreUnavailableError):
                    await write
            view = await service.get_game(pb.GetGameRequest(game_id=game.game_id), Caller())
            assert view.game_id == game.game_id
        finally:
            await admin.config_set(setting[0], "0")
            await admin.aclose()
            await store.close()


class _ReplyDropper:
    """A TCP proxy before one Redis node that, once armed, lets the next EVALSHA
    through, swallows its answer and closes the client's connection: a script that
    ran, its answer lost with the connection (a real Redis, a lossy network)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.armed = False
        self.evalshas = 0  # those sent on to the node
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        swallow = asyncio.Event()

        async def upward() -> None:
            while data := await reader.read(65536):
                if b"EVALSHA" in data.upper():
                    self.evalshas += 1
                    if self.armed:
                        self.armed = False
                        swallow.set()
                up_writer.write(data)
                await up_writer.drain()
            up_writer.close()

        async def downward() -> None:
            while data := await up_reader.read(65536):
                if swallow.is_set():  # (the script's answer: lost, and the connection)
                    writer.transport.abort()
                    return
                writer.write(data)
                await writer.drain()
            writer.close()

        with contextlib.suppress(ConnectionError, OSError):
            await asyncio.gather(upward(), downward())
        up_writer.close()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()


async def test_a_cluster_write_whose_answer_is_lost_is_not_sent_again(
    fresh_cluster: RedisCluster,
) -> None:
    """A commit that ran on its primary but whose answer was lost with the connection
    has an unknown outcome: StoreUnavailableError(write=True), which a client retries
    with its request id (as on one Redis).  redis-py's cluster client would send the
    script again by itself, and that second compare-and-set answers False, "another
    writer got there first", for a write that landed (a move without a request id
    answered ABORTED, a created game answered as an id taken)."""
    primary = fresh_cluster.primary_of(game_keys("lossy")[0])
    dropper = _ReplyDropper(primary)
    proxy = await dropper.start()
    store = RedisStore(fresh_cluster.url, finished_ttl=60)
    assert store._cluster is not None
    store._cluster.nodes_manager.address_remap = lambda address: (
        ("127.0.0.1", proxy) if address[1] == primary else address
    )
    try:
        await store.create("lossy", Write(b"r0"))
        assert await store.commit("lossy", 1, Write(b"r1"))  # (the script is loaded)
        dropper.armed = True
        sent = dropper.evalshas
        with pytest.raises(StoreUnavailableError) as unknown:
            await store.commit("lossy", 2, Write(b"r2", entry=LogItem(1, b"e1")))
        assert unknown.value.write
        assert dropper.evalshas == sent + 1  # sent once
        snapshot = await store.load("lossy")
        assert snapshot is not None and snapshot.record == b"r2"  # (it had landed)
    finally:
        await store.close()
        await dropper.close()
