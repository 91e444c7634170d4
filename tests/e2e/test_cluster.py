"""The Redis store on a real Redis Cluster (six nodes, three primaries with a replica
each, the session's: tests/conftest.py): games go on through a primary's failover.

The rest of the cluster's coverage reuses the suites by their store parameter: the
store contract (tests/integration/test_store_contract.py), replicas and server
processes (``shared_store`` in test_replicas.py, test_play.py, test_house_bots.py),
watches, deadlines, house bots and the lobby (``server`` with "cluster").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import time

import grpc
import pytest
import redis.asyncio as aioredis

from clients.sdk import CallError, GlintwickClient, RetryPolicy, Seat
from engine.rulesets import PRESETS
from glintwick.storage.v1 import storage_pb2 as spb
from loadtests.processes.cluster import RedisCluster
from services.store.base import StoreUnavailableError
from services.store.redis import (
    SHARDS,
    RedisStore,
    cluster_client,
    cluster_url,
    game_keys,
    index_key,
)
from tests.e2e.conftest import StartServer
from tests.e2e.support import Mirror, Played, health_status, play_game, until
from tests.e2e.test_store_outage import SERVING, assert_store_unavailable, http_get, play_one_move
from tests.support.store_connections import check_a_closed_transport_is_unreachable, on_loop

GAMES = 8
MOVES = 120  # per game: a few dozen before the failover, the rest through and after it
# retries that outlast a failover (a second of silence before the replica is elected,
# plus the election): 0.05 s doubled, about 25 s in all
PATIENT = RetryPolicy(attempts=10, backoff=0.05, timeout=10)


async def test_every_script_touches_one_slot(
    start_server: StartServer, fresh_cluster: RedisCluster
) -> None:
    """A game's keys and its shard's indexes share one slot (the cluster would refuse
    the scripts otherwise: CROSSSLOT), and the shards spread over every primary."""
    env = await start_server("cluster")
    game, _ = await env.new_game("whiskertrail", 2, b"slots")
    admin = aioredis.Redis(port=fresh_cluster.primary_of(game_keys(game.game_id)[0]))
    try:
        slots = {int(await admin.cluster("KEYSLOT", key)) for key in game_keys(game.game_id)}
    finally:
        await admin.aclose()
    assert len(slots) == 1
    primaries = {fresh_cluster.primary_of(index_key(s, "active")) for s in range(SHARDS)}
    assert primaries == set(fresh_cluster.primaries())


async def test_a_primary_failover_mid_play_loses_no_acknowledged_move(
    start_server: StartServer, fresh_cluster: RedisCluster
) -> None:
    """Eight games through two replicas; mid-play the primary serving the first
    game's slot is killed (SIGKILL) and its replica promoted.  Clients retry through
    the outage (UNAVAILABLE, the same request id); every game goes on (to its 120th
    move), and its log is every acknowledged move, each once, in order.

    (The games pause while the replicas catch up before the kill: Redis replicates a
    write after answering it, so a write acknowledged in the last moment before a
    primary's death may be lost with it unless acknowledgements wait for a replica,
    the durability mode of issue 18.)"""
    first = await start_server("cluster")
    second = await start_server("cluster")
    clients = [GlintwickClient(env.target, retry=PATIENT) for env in (first, second)]
    rules = PRESETS["whiskertrail"]
    games = [
        await first.new_game("whiskertrail", 2, f"failover {n}".encode()) for n in range(GAMES)
    ]
    victim = fresh_cluster.primary_of(game_keys(games[0][0].game_id)[0])
    on_victim = [g for g, _ in games if fresh_cluster.primary_of(game_keys(g.game_id)[0]) == victim]

    running = asyncio.Event()
    running.set()
    parked: set[str] = set()

    async def gate(played: Played, seat: int) -> None:
        if not running.is_set():
            parked.add(played.game_id)
            await running.wait()
            parked.discard(played.game_id)

    async def play(n: int) -> Played:
        game, joined = games[n]
        handles: list[list[Seat]] = [
            [c.seat(game.game_id, s.seat, s.token) for s in joined] for c in clients
        ]
        mirror = Mirror(rules, 2, f"failover {n}".encode())
        return await play_game(
            game.game_id, handles, mirror, random.Random(n), max_steps=MOVES, after_step=gate
        )

    try:
        players = [asyncio.create_task(play(n)) for n in range(GAMES)]
        # mid-play: some moves made in every game, none over
        first_game = games[0][0].game_id
        while not any(p.done() for p in players):
            if len(await first.running.service.store.read_log(first_game, 0)) >= 8:
                break
            await asyncio.sleep(0.05)
        running.clear()  # every game between two moves, the replicas caught up
        while len(parked) < sum(1 for p in players if not p.done()):
            await asyncio.sleep(0.01)
        await asyncio.to_thread(fresh_cluster.wait_replicated)
        failover = asyncio.create_task(asyncio.to_thread(fresh_cluster.kill_primary, victim))
        await asyncio.sleep(0.05)
        running.set()  # the games go on through the outage
        await failover
        # its replica serves the slot now
        assert fresh_cluster.primary_of(game_keys(games[0][0].game_id)[0]) != victim
        async with asyncio.timeout(180):
            results = await asyncio.gather(*players)
        for played in results:
            assert played.mirror.version == MOVES or played.mirror.state.is_terminal()
            items = await second.running.service.store.read_log(played.game_id, 0)
            logged = [spb.LogEntry.FromString(item.entry) for item in items]
            # every acknowledged move, once, in order (and nothing else)
            assert [(e.seat, e.action) for e in logged] == played.submitted
            assert [r.version for r in played.responses] == [e.version for e in logged]
        assert on_victim  # (the first game's, at least: moves on the killed primary)
    finally:
        for client in clients:
            await client.close()


def _command(*args: bytes) -> bytes:
    """A command as Redis reads it off a socket (RESP)."""
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


async def test_the_log_reader_delivers_no_write_a_replaced_primary_ran_after_its_freeze(
    fresh_cluster: RedisCluster,
) -> None:
    """A primary frozen past the node timeout, its replica promoted meanwhile, runs the
    writes queued on its sockets when resumed, before it learns it was replaced (none
    acknowledged: their WAIT finds no replica; its resync discards them).  The log
    reader's XREAD, blocked on it, must not deliver such an entry to the sessions and
    watches (the fault campaign's Play game that stalled 58 s: its session had a
    move's events from there, then no prompt, the move retried on the promoted node
    lying behind its cursor): with replica acks a read is delivered once a replica
    has it, and here it fails as unreachable, to be read again on the promoted node."""
    url = fresh_cluster.url
    store = RedisStore(url, ack_replicas=1)
    game_id = "replaced0000001"
    log = game_keys(game_id)[1]
    primary = fresh_cluster.primary_of(log)
    before = set(fresh_cluster.primaries())
    waiting = asyncio.create_task(store.wait_log(game_id, 0, timeout=60))
    sock: socket.socket | None = None
    try:
        await asyncio.sleep(0.5)  # (the reader's XREAD blocks on the primary)
        sock = socket.create_connection(("127.0.0.1", primary))
        fresh_cluster.freeze(primary)
        # a write queued on the frozen primary's socket, as a server's commit would be
        sock.sendall(_command(b"XADD", log.encode(), b"1-1", b"e", b"never acknowledged"))
        async with asyncio.timeout(60):
            while not (set(await asyncio.to_thread(fresh_cluster.primaries)) - before - {primary}):
                await asyncio.sleep(0.2)
        fresh_cluster.thaw(primary)
        try:
            async with asyncio.timeout(5):
                delivered = await asyncio.shield(waiting)
        except StoreUnavailableError:
            delivered = []  # (the read failed: issued again on the promoted node)
        except TimeoutError:
            delivered = []
        assert delivered == [], "an entry of the replaced primary's was delivered"
        await asyncio.to_thread(fresh_cluster.wait_ok, 60)
        assert await store.read_log(game_id, 0) == []  # (the promoted node never had it)
    finally:
        if sock is not None:
            sock.close()
        with contextlib.suppress(Exception):
            fresh_cluster.thaw(primary)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError, StoreUnavailableError):
            await waiting
        await store.close()


# (slow: it failed in full default runs on the session's cluster, right after the
# failover test, and passed alone; until that is understood it runs in make test-cluster)
@pytest.mark.slow
@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_connection_closed_under_a_command_is_unreachable(
    fresh_cluster: RedisCluster, loop: str
) -> None:
    """redis-py's cluster client closes every connection when one of them fails, so
    another task's command can find its transport closed under it.  On uvloop (the
    server's loop) that write raises a RuntimeError ("the handler is closed"), which
    came out of a GetView as INTERNAL in the fault campaign while a primary was
    frozen; the store's cluster connections answer it as a ConnectionError (which
    the client retries and the store answers UNAVAILABLE)."""

    async def send_on_a_closed_transport() -> None:
        url = cluster_url(fresh_cluster.url)  # (whole again: the failover test kills one)
        assert url is not None
        client = cluster_client(url)
        try:
            await client.initialize()
            node = client.get_node_from_key("g:{s00}:closed:rec")
            assert node is not None
            connection = node.acquire_connection()
            await check_a_closed_transport_is_unreachable(connection)
            node.release(connection)
        finally:
            await client.aclose()

    on_loop(loop, send_on_a_closed_transport)


def _failover(cluster: RedisCluster, allowed: bool) -> None:
    """Let the replicas take over a failed primary (Redis's default), or not: the
    test holds a primary down as long as it needs."""
    for port, role in cluster.roles().items():
        if role != "master":
            with cluster.client(port) as client:
                client.config_set("cluster-replica-no-failover", "no" if allowed else "yes")


@pytest.mark.parametrize("fault", ["SIGSTOP", "SIGKILL"])
async def test_one_primary_down_refuses_only_the_games_it_serves(
    start_server: StartServer, fresh_cluster: RedisCluster, fault: str
) -> None:
    """One primary frozen (SIGSTOP) or killed (SIGKILL), held down (its replica may
    not take over until the test lets it): a move in a game it serves is UNAVAILABLE
    STORE_UNAVAILABLE within the call's deadline, while a game of another primary
    goes on, move after move, and the server stays SERVING (``/healthz`` names the
    primary down); after SIGCONT (or the replica's promotion) both games go on, and
    health is whole again."""
    env = await start_server("cluster")
    once = GlintwickClient(env.target, retry=RetryPolicy(attempts=1, timeout=5))
    # (a retry, at once: redis-py's cluster client closes every node's connections
    # when one node fails, so a write in flight to another may be cut: outcome
    # unknown, UNAVAILABLE, retried with its request id.  docs/OPERATIONS.md)
    retrying = GlintwickClient(env.target, retry=RetryPolicy(attempts=3, backoff=0.01, timeout=5))
    games: dict[int, tuple[str, list[Seat]]] = {}  # a game and its seats, by its primary
    for n in range(30):
        game, joined = await env.new_game("whiskertrail", 2, f"part {n}".encode())
        primary = fresh_cluster.primary_of(game_keys(game.game_id)[0])
        games.setdefault(primary, (game.game_id, joined))
        if len(games) == 2:
            break
    (victim, (down_id, joined_down)), (_, (up_id, joined_up)) = games.items()
    down_seats = [once.seat(down_id, s.seat, s.token) for s in joined_down]
    up_seats = [retrying.seat(up_id, s.seat, s.token) for s in joined_up]
    for seats in (down_seats, up_seats):
        await play_one_move(seats)
    monitor = env.running.monitor
    up_moves = 0

    async def go_on() -> None:
        # the other primary's game, move after move (none refused)
        nonlocal up_moves
        while True:
            await play_one_move(up_seats)
            up_moves += 1
            await asyncio.sleep(0.02)

    await asyncio.to_thread(fresh_cluster.wait_replicated)
    _failover(fresh_cluster, allowed=False)
    playing = asyncio.create_task(go_on())
    try:
        if fault == "SIGSTOP":
            fresh_cluster.freeze(victim)
        else:
            os.kill(fresh_cluster.pids[victim], signal.SIGKILL)
        # the first call of its game meets it down (or frozen: within the deadline)
        started = time.monotonic()
        with pytest.raises(CallError) as refused:
            await once.game(down_id)
        assert_store_unavailable(refused.value)
        assert time.monotonic() - started < 5.5
        await until(lambda: not monitor.healthy, "the primary judged down")
        async with grpc.aio.insecure_channel(env.target) as channel:
            assert await health_status(channel) == SERVING
        status, body = await http_get(f"{env.http}/healthz")
        assert status == 200 and body["status"] == "SERVING", body
        assert [n.rsplit(":", 1)[1] for n in body["storeNodesDown"]] == [str(victim)], body
        # judged down: its game's calls refused at once, the other game's going on
        started = time.monotonic()
        with pytest.raises(CallError) as refused:
            await play_one_move(down_seats)
        assert_store_unavailable(refused.value)
        assert time.monotonic() - started < 1.0
        moved = up_moves
        async with asyncio.timeout(5):
            while up_moves < moved + 3:
                assert not playing.done(), playing
                await asyncio.sleep(0.01)
        assert not monitor.healthy
    finally:
        if fault == "SIGSTOP":
            fresh_cluster.thaw(victim)
        _failover(fresh_cluster, allowed=True)  # (a killed primary's replica takes over)
        if playing.done():
            playing.result()  # (a move of the other game failed: its error)
    await asyncio.to_thread(fresh_cluster.wait_ok, 30)
    async with asyncio.timeout(20):  # the first game goes on (on the promoted replica)
        while True:
            try:
                await play_one_move(down_seats)
                break
            except CallError as error:
                assert_store_unavailable(error)
                await asyncio.sleep(0.2)
    await until(lambda: monitor.healthy, "every primary answering", timeout=10)
    moved = up_moves
    await until(lambda: up_moves > moved or playing.done(), "the other game going on", 5)
    playing.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await playing
    status, body = await http_get(f"{env.http}/healthz")
    assert (status, body) == (200, {"status": "SERVING"})
    await once.close()
    await retrying.close()
