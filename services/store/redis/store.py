"""The Redis store: one Lua compare-and-set per write, each in one Redis Cluster slot.

It runs on one Redis (``redis://``, ``rediss://``, ``unix://``) or on a Redis Cluster
(``redis+cluster://host:port``, ``rediss+cluster://`` with TLS: any node, the client
learns the others), with the same keys (:mod:`.keys`) and scripts (:mod:`.scripts`).

A read across games (due deadlines, bot turns, a lobby page, the games in play) reads
every shard in one pipeline (one round trip; on a cluster, one per node) and merges:
by deadline, by waiting time, by position (a lobby page takes the ``limit`` lowest
positions after its cursor of all shards: exact, as one index would be).  A leased
bot-turn claim claims in each shard's script as many as the merge chose there.
Positions of different shards follow their nodes' clocks: a game listed while
someone pages may land before that reader's cursor when two nodes' clocks differ
(the next listing shows it).

Finished games expire after a configurable time.  Waiting for a log is the shards'
log readers' (:mod:`.log_reader`).

Every call has a deadline (``command_timeout``, and a blocking read its wait plus
that): a Redis that is down, or frozen, answers :class:`StoreUnavailableError`
within it instead of an error of the client library, or a hang.  On a cluster the
client follows ``MOVED`` and ``ASK`` and, after a failover, learns the new primary
(redis-py's cluster client); what it cannot serve (a slot whose primary is down and
not yet replaced) is :class:`StoreUnavailableError` too.

Acknowledged by replicas (``ack_replicas`` > 0, ``serve --ack replica``;
docs/OPERATIONS.md, "Durability"): each game write (create, commit) is sent with
``WAIT ack_replicas ack_timeout`` in one pipeline, on one connection (WAIT counts the
replicas that have every write of its own connection so far), and answered only
once that many replicas confirmed it.  Fewer in time: the write stays applied on the
primary, and the call raises :class:`StoreUnavailableError` with the reason
``REPLICA_ACK_TIMEOUT`` (``write``: a retry with the same idempotency key is safe).
A retry meets its stored idempotent response: that answer is given only after a
WAIT too, behind a rewrite of the same response (``CONFIRM``: a read alone would
leave nothing for WAIT to wait for), so a move is never answered with success before
a replica has it, however it was retried.  The log reader delivers what it read only
once a replica has it too (:mod:`.log_reader`), so no session or watch gets a move
that a failover could still take back (a primary frozen past the node timeout runs
the writes queued on it when resumed, until it learns its replica was promoted).
The house-bot lease (``bot_turns``) and the log reader's wake are not game data:
they never wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import AskError, MovedError, NoScriptError, RedisClusterException, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.store.base import (
    WHOLE,
    Admission,
    GameExistsError,
    GameStore,
    LogCursor,
    LogItem,
    OpenGame,
    RateRefusedError,
    Snapshot,
    StoreUnavailableError,
    Write,
    answer_later,
)

from .connections import ClusterClient
from .errors import UNREACHABLE, reachable
from .keys import (
    SHARDS,
    game_keys,
    game_rate_key,
    hold_key,
    index_key,
    lobby_key,
    rate_key,
    shard_of,
)
from .link import RedisLink
from .log_reader import ShardReader, cancel_if_asked
from .replies import awaited, log_items, merged
from .scripts import BOT_TURNS, COMMIT, CONFIRM, CREATE, HELD, HOLD, TAKE, index_args, index_keys

#: rounds of a leased bot_turns claim (another worker may take what this one saw)
CLAIM_ROUNDS = 8


class RedisStore(GameStore):
    """The store on one Redis or a Redis Cluster (``url``, see the module's docstring)."""

    def __init__(
        self,
        url: str,
        finished_ttl: int = 24 * 3600,
        max_connections: int = 64,
        command_timeout: float = 2.0,
        ack_replicas: int = 0,
        ack_timeout: float = 0.5,
    ) -> None:
        self._link = link = RedisLink(
            url, max_connections, command_timeout, ack_replicas, ack_timeout
        )
        # (the link's clients, by the names every method here uses)
        self._redis = link.redis
        self._probe = link.probe
        self._cluster = link.cluster
        self._probe_down: set[str] = set()  # the primaries the last probe found down
        # a shard's log reader, made with its first waiter
        self._readers: dict[int, ShardReader] = {}
        self._closed = False
        # (redis-py types register_script for its standalone client; the script object
        # only calls evalsha and script_load, which the cluster client routes by key)
        scripts = cast(aioredis.Redis, self._redis)
        self._create = scripts.register_script(CREATE)
        self._commit = scripts.register_script(COMMIT)
        self._bot_turns = scripts.register_script(BOT_TURNS)
        self._confirm = scripts.register_script(CONFIRM)
        self._take = scripts.register_script(TAKE)
        self._hold = scripts.register_script(HOLD)
        self._held = scripts.register_script(HELD)
        self._ttl = finished_ttl

    async def _write(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """``script``'s answer; with replica acks, only once enough replicas have it."""
        if not self._link.ack_replicas:
            with reachable(write=True):
                if self._cluster is not None:
                    return await self._write_once(self._cluster, script, keys, args)
                return await self._evalsha(script, keys, args)
        with reachable(write=True):
            # one pipeline, one connection: WAIT counts the replicas that have its
            # connection's writes.  (EVALSHA by hand: a pipeline's own script
            # handling asks SCRIPT EXISTS first, a round trip more per write.)
            for _ in range(2):
                try:
                    answer, confirmed = await self._write_and_wait(script.sha, keys, args)
                    break
                except NoScriptError:  # (nothing ran: load it, send again)
                    await self._redis.script_load(script.script)
            else:
                raise StoreUnavailableError("Redis lost the script as it was loaded", write=True)
        if int(confirmed) < self._link.ack_replicas:
            raise StoreUnavailableError(
                f"{confirmed} of {self._link.ack_replicas} replica(s) confirmed the write"
                f" within {self._link.ack_timeout_ms} ms",
                write=True,
                reason="REPLICA_ACK_TIMEOUT",
            )
        return answer

    async def _evalsha(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """``script`` on one Redis; not known there: loaded, sent again (as redis-py's
        script object does)."""
        try:
            return await self._send_evalsha(script.sha, keys, args)
        except NoScriptError:
            script.sha = await cast(aioredis.Redis, self._redis).script_load(script.script)
            return await self._send_evalsha(script.sha, keys, args)

    async def _send_evalsha(self, sha: str, keys: list[str], args: list[Any]) -> Any:
        """One EVALSHA on a connection of the pool, as the client's ``execute_command``
        sends it (its connections retry nothing: a connection or timeout error closes
        the connection and is raised), without its layers: the script object's tuples
        and import, the retry's closures, the reply's callbacks (about 25 k instructions
        a commit: BENCHMARKS.md, "The same move, counted").  (In lower case, as the
        reader's XREAD: see there.)"""
        pool = cast(aioredis.Redis, self._redis).connection_pool
        connection = await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            await connection.send_packed_command(
                connection.pack_command("evalsha", sha, len(keys), *keys, *args)
            )
            return await connection.read_response()
        except (RedisConnectionError, RedisTimeoutError):
            await connection.disconnect()
            raise
        finally:
            await pool.release(connection)

    async def _write_once(
        self, cluster: RedisCluster, script: AsyncScript, keys: list[str], args: list[Any]
    ) -> Any:
        """``script`` on a cluster, sent once.  redis-py's cluster client sends a command
        again by itself after a connection error or a timeout, and a write whose first
        send had run then meets its own compare-and-set: False, "another writer got
        there first", for a write that landed.  Sent to its slot's node by name it is
        not sent again (MOVED and ASK, where nothing ran, are still followed), and its
        failure is the store unreachable, the outcome unknown (as on one Redis)."""
        await cluster.initialize()  # (learns the slots on first use; then a no-op)
        for _ in range(2):
            node = cluster.get_node_from_key(keys[0])
            if node is None:
                raise StoreUnavailableError("no primary serves the game's slot now", write=False)
            try:
                # (in lower case, as the reader's XREAD: see there)
                command = ("evalsha", script.sha, len(keys), *keys, *args)
                return await cluster.execute_command(*command, target_nodes=node)
            except NoScriptError:  # (nothing ran: load it, send again)
                await cluster.script_load(script.script)
        raise StoreUnavailableError("Redis lost the script as it was loaded", write=True)

    async def _write_and_wait(self, sha: str, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """EVALSHA then WAIT on one connection: the script's answer and the replicas
        that confirmed it.  On a cluster, that connection is one to the primary of the
        keys' slot (a cluster pipeline would send the keyless WAIT to any node)."""
        if self._cluster is None:
            pipe = self._redis.pipeline(transaction=False)
            pipe.evalsha(sha, len(keys), *keys, *args)
            pipe.wait(self._link.ack_replicas, self._link.ack_timeout_ms)
            answer, confirmed = await pipe.execute()
            return answer, int(confirmed)
        await self._cluster.initialize()  # (learns the slots on first use; then a no-op)
        for _ in range(3):
            node = self._cluster.get_node_from_key(keys[0])
            if node is None:
                raise StoreUnavailableError("no primary serves the game's slot now", write=False)
            connection = node.acquire_connection()
            try:
                # (in lower case, as the reader's XREAD: see there)
                await connection.send_packed_command(
                    connection.pack_commands(
                        [
                            ("evalsha", sha, len(keys), *keys, *args),
                            ("wait", self._link.ack_replicas, self._link.ack_timeout_ms),
                        ]
                    )
                )
                answer = await node.parse_response(connection, "evalsha")
                confirmed = await node.parse_response(connection, "wait")
                break
            except MovedError as exc:
                # (the slot has another primary now, the script ran nowhere: learn
                # the new owner, as the cluster client does, and send it there)
                await connection.disconnect()
                self._cluster.nodes_manager.update_moved_exception(exc)  # type: ignore[no-untyped-call]
            except AskError as exc:
                # (the slot is being moved to another primary, resharding, and these
                # keys are not all here: the script ran nowhere.  Not followed there:
                # a script of several keys is answered TRYAGAIN there until every
                # one has moved.  Unreachable for now, as TRYAGAIN is, not a
                # ResponseError: a client's retry meets the slot moved.)
                await connection.disconnect()
                raise StoreUnavailableError(
                    f"the game's slot is moving to {exc.host}:{exc.port}", write=False
                ) from exc
            except BaseException as exc:
                # (what the connection still holds of the two answers is unknown)
                await connection.disconnect()
                if isinstance(exc, UNREACHABLE):
                    # (the node may be down and its slots served by another now: learn
                    # them again, as the cluster client does after its own commands'
                    # failures; nothing else may ask, and this path would go on
                    # sending to the dead node for good)
                    self._link.relearn_later()
                raise
            finally:
                node.release(connection)
        else:
            raise StoreUnavailableError("the cluster kept moving the game's slot", write=True)
        return answer, int(confirmed)

    async def create(self, game_id: str, write: Write) -> None:
        keys = [game_keys(game_id)[0], *index_keys(game_id, write)]
        args: list[Any] = [write.record, game_id, *index_args(game_id, write)]
        created = await self._write(self._create, keys, args)
        if not created:
            raise GameExistsError(game_id)

    async def load(self, game_id: str) -> Snapshot | None:
        with reachable():
            rev, record = await awaited(self._redis.hmget(game_keys(game_id)[0], ["rev", "rec"]))
        if rev is None or record is None:
            return None
        return Snapshot(int(rev), bytes(record))

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        # The indexes (bot turns, deadlines, active games, the lobby) change in the same script
        # as the record: a crash between two writes could leave a deadline unindexed,
        # and the game would wait for it for ever.
        entry = write.entry
        args: list[Any] = [
            expected_revision,
            write.record,
            str(entry.version) if entry else "",
            entry.entry if entry else b"",
            write.idempotency_key or "",
            write.response or b"",
            self._ttl if write.finished else 0,
            game_id,
            *index_args(game_id, write),
        ]
        keys = [*game_keys(game_id), *index_keys(game_id, write)]
        if write.take is not None:
            cell = write.take
            keys.append(game_rate_key(game_id, cell.name))
            args += [repr(1_000_000 / cell.rate), cell.burst]
        reader = None if entry is None else self._readers.get(self._reader_shard(game_id))
        if reader is None:
            answer = int(await self._write(self._commit, keys, args))
        else:
            assert entry is not None
            reader.committing(game_id, entry.version)
            answer = 0
            try:
                answer = int(await self._write(self._commit, keys, args))
            finally:
                # (landed: its waiters get it now, without a read)
                reader.commit_answered(game_id, entry, answer == 1)
        if answer < 0:
            raise RateRefusedError((-answer - 1) / 1_000_000)
        return answer == 1

    async def idempotent_response(self, game_id: str, key: str) -> bytes | None:
        if self._link.ack_replicas:  # (answered as a success: confirmed as a write is)
            return cast(
                bytes | None, await self._write(self._confirm, [game_keys(game_id)[2]], [key])
            )
        with reachable():
            return await cast(Awaitable[bytes | None], self._redis.hget(game_keys(game_id)[2], key))

    async def read_log(self, game_id: str, after_version: int, limit: int = 1000) -> list[LogItem]:
        with reachable():
            rows = await self._redis.xrange(
                game_keys(game_id)[1], min=f"{after_version + 1}-0", max="+", count=limit
            )
        return log_items(rows)

    def _reader_shard(self, game_id: str) -> int:
        """The shard whose reader follows the game's log: its own on a Redis Cluster (an
        XREAD names keys of one slot), the first for every game on one Redis (one XREAD
        then answers the moves of every game at once, not one a game)."""
        return shard_of(game_id) if self._cluster is not None else 0

    def _reader(self, game_id: str) -> ShardReader:
        shard = self._reader_shard(game_id)
        reader = self._readers.get(shard)
        if reader is None:
            reader = self._readers[shard] = ShardReader(self._link, shard)
        return reader

    def follow(self, game_id: str) -> None:
        self._reader(game_id).follow(game_id)

    def unfollow(self, game_id: str) -> None:
        self._reader(game_id).unfollow(game_id)

    async def wait_log(
        self, game_id: str, after_version: int, timeout: float, cursor: LogCursor | None = None
    ) -> list[LogItem]:
        if self._closed:
            raise StoreUnavailableError("the store is closed")
        reader = self._reader(game_id)
        # registered before the read: an entry committed after the read is the reader's
        waiter = reader.register(game_id, after_version, cursor)
        try:
            # (the read in flight names the game at this version or before: it answers
            # any entry after it, committed before it or since, so no read of our own)
            if not waiter.covered:
                items = await self.read_log(game_id, after_version)
                if items:
                    return items
                cancel_if_asked()
            timer = answer_later(waiter.future, timeout, [])
            try:
                return await waiter.future
            finally:
                timer.cancel()
        finally:
            reader.unregister(game_id, waiter)

    # ------------------------------------------------------------------ across shards

    async def _each_shard(self, read: Callable[[Any, int], object]) -> list[Any]:
        """``read(pipeline, shard)`` of every shard, in one pipeline: one round trip on
        one Redis, one per node on a cluster (redis-py's cluster pipeline groups the
        commands by slot); the answers in shard order.  A script's first call on a
        node (or after a failover: a promoted replica has none) loads it."""
        for attempt in (1, 2):
            pipe = self._redis.pipeline(transaction=False)
            for shard in range(SHARDS):
                read(pipe, shard)
            try:
                with reachable():
                    return list(await pipe.execute())
            except NoScriptError:
                if attempt == 2:
                    raise
                with reachable():
                    await self._redis.script_load(BOT_TURNS)
        raise AssertionError("unreachable")  # (the loop returns or raises)

    async def due_deadlines(self, now: float, limit: int = 100) -> list[str]:
        if limit <= 0:
            return []

        def due(pipe: Any, shard: int) -> None:
            key = index_key(shard, "deadlines")
            pipe.zrangebyscore(key, "-inf", now, start=0, num=limit, withscores=True)

        return [game for _, game, _ in merged(await self._each_shard(due), limit)]

    async def bot_turns(self, limit: int = 100, lease: float = 0.0) -> list[str]:
        """Every shard's due turns, longest waiting first; with a lease, the shards of
        the first ``limit`` claim as many in their scripts (the turns due first in
        each shard by then: another worker's claim may have taken some of those
        seen), again until ``limit`` are claimed or none is due."""
        if limit <= 0:
            return []
        # (a write: it claims the turns, but claiming twice is harmless)
        claimed: list[tuple[float, str, int]] = []
        for _ in range(CLAIM_ROUNDS if lease > 0 else 1):
            wanted = limit - len(claimed)
            seen = merged(await self._turns(Counter(), wanted), wanted)
            if lease <= 0:
                return [game for _, game, _ in seen]
            if not seen:
                break
            counts = Counter(shard for _, _, shard in seen)
            claimed.extend(merged(await self._turns(counts, 0, lease), wanted))
            if len(claimed) >= limit:
                break
        return [game for _, game, _ in sorted(claimed)]

    async def _turns(
        self, counts: Counter[int], limit: int, lease: float = 0.0
    ) -> list[list[tuple[Any, Any]]]:
        """Every shard's due turns (claimed for ``lease`` seconds if above 0): up to
        ``counts[shard]``, or else ``limit``; (id, when listed from) pairs."""

        def read(pipe: Any, shard: int) -> None:
            key = index_key(shard, "botturns")
            wanted = counts[shard] or limit  # (0: none, and the answers keep shard order)
            # (as a raw command: redis-py's cluster pipeline refuses its ``evalsha``
            # method, for the loading of scripts that _each_shard does itself; in
            # lower case, as the reader's XREAD: see there)
            pipe.execute_command("evalsha", self._bot_turns.sha, 1, key, wanted, repr(float(lease)))

        answers = await self._each_shard(read)
        return [list(zip(flat[::2], flat[1::2], strict=True)) for flat in answers]

    async def open_games(
        self, rule_set_hash: str = "", after: int = 0, limit: int = 50
    ) -> list[OpenGame]:
        if limit <= 0:
            return []

        def page(pipe: Any, shard: int) -> None:
            key = lobby_key(shard, rule_set_hash)
            pipe.zrangebyscore(key, f"({after}", "+inf", start=0, num=limit, withscores=True)

        listed = merged(await self._each_shard(page), limit)
        return [OpenGame(game, int(position)) for position, game, _ in listed]

    async def games_in_play(self) -> int:
        def active(pipe: Any, shard: int) -> None:
            pipe.scard(index_key(shard, "active"))

        return sum(await self._each_shard(active))

    async def unfinished(self, game_ids: list[str]) -> set[str]:
        if not game_ids:
            return set()
        # (each game's shard's active set; a cluster pipeline groups them by node)
        pipe = self._redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.sismember(index_key(shard_of(game_id), "active"), game_id)
        with reachable():
            found = await pipe.execute()
        return {g for g, there in zip(game_ids, found, strict=True) if there}

    async def take(
        self, key: str, rate: float, burst: int, cost: int = 1, game_id: str | None = None
    ) -> Admission:
        args: list[Any] = [repr(1_000_000 / rate), burst, cost]
        cell = rate_key(key) if game_id is None else game_rate_key(game_id, key)
        with reachable():
            allowed, wait = await self._take(keys=[cell], args=args)
        return Admission(bool(allowed), int(wait) / 1_000_000)

    async def hold(self, key: str, member: str, limit: int, seconds: float) -> bool:
        args: list[Any] = [member, limit, repr(seconds * 1_000_000)]
        with reachable():
            return bool(await self._hold(keys=[hold_key(key)], args=args))

    async def release(self, key: str, *members: str) -> None:
        if members:
            with reachable():
                await awaited(self._redis.zrem(hold_key(key), *members))

    async def held(self, key: str) -> list[str]:
        with reachable():
            ids = await self._held(keys=[hold_key(key)])
        return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]

    async def ping(self) -> bool:
        with reachable():
            try:
                async with asyncio.timeout(self._link.command_timeout):
                    if isinstance(self._probe, RedisCluster):
                        # (every primary: each serves a part of the games)
                        targets = RedisCluster.PRIMARIES
                        return bool(await self._probe.ping(target_nodes=targets))
                    return bool(await self._probe.ping())
            except TimeoutError:
                raise StoreUnavailableError(
                    f"no answer to PING within {self._link.command_timeout:g} s"
                ) from None

    async def ping_parts(self) -> dict[str, str]:
        """On a cluster: each primary pinged on its own (its name, ``host:port``, when
        down), so that one primary down (until its replica is promoted) refuses only
        the calls that need it.  After a round that found one down, the probe's map of
        the slots is asked again first (of the other nodes): it learns the promoted
        replica.  Every primary down, or no map at all: the whole store."""
        if not isinstance(self._probe, RedisCluster):
            return await super().ping_parts()
        probe = self._probe
        try:
            async with asyncio.timeout(self._link.command_timeout * 2):
                if self._probe_down:
                    for name in self._probe_down:  # (asked last: they may be frozen)
                        probe.nodes_manager.startup_nodes.pop(name, None)
                    with contextlib.suppress(*UNREACHABLE, RedisError):
                        await probe.nodes_manager.initialize()
                with reachable():
                    await probe.initialize()  # (learns the slots on first use; then a no-op)
        except TimeoutError:
            pass  # (the map it has)
        except StoreUnavailableError as exc:
            return {WHOLE: exc.error}
        primaries = probe.get_primaries()
        if not primaries:
            return {WHOLE: "the cluster has no primary"}
        answers = await asyncio.gather(*(self._ping_node(node) for node in primaries))
        down = {node.name: why for node, why in zip(primaries, answers, strict=True) if why}
        self._probe_down = set(down)
        for client in (self._redis, probe):
            if isinstance(client, ClusterClient):
                client.down = frozenset(down)
        if len(down) == len(primaries):
            return {WHOLE: "no primary answers: " + "; ".join(f"{n}: {w}" for n, w in down.items())}
        return down

    async def _ping_node(self, node: Any) -> str:
        """Why ``node`` did not answer PING ("": it did).  (The node's own command, not
        the cluster client's: its failure would close every node's connections.)"""
        try:
            async with asyncio.timeout(self._link.command_timeout):
                answered = await node.execute_command("PING")
        except TimeoutError:
            with contextlib.suppress(Exception):
                await node.disconnect()
            return f"no answer to PING within {self._link.command_timeout:g} s"
        except (*UNREACHABLE, RedisError) as exc:
            with contextlib.suppress(Exception):
                await node.disconnect()
            return str(exc) or type(exc).__name__
        return "" if answered else "the node did not answer PING"

    def part_of_game(self, game_id: str) -> str:
        return self._part_of(game_keys(game_id)[0])

    def part_of_key(self, kind: str, name: str) -> str:
        return self._part_of(hold_key(name) if kind == "hold" else rate_key(name))

    def _part_of(self, key: str) -> str:
        """The primary that serves ``key``'s slot, as the health probe last learnt the
        slots (``WHOLE``: one Redis, or a slot it does not know)."""
        if not isinstance(self._probe, RedisCluster):
            return WHOLE
        with contextlib.suppress(RedisError, RedisClusterException, KeyError, IndexError):
            manager = self._probe.nodes_manager
            return str(manager.get_node_from_slot(self._probe.keyslot(key)).name)
        return WHOLE

    async def close(self) -> None:
        self._closed = True
        for reader in self._readers.values():
            await reader.close()
        await self._link.aclose()
