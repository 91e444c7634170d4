"""Play sessions over a store that answers late, lags or fails: an act sent between two
subscribes of its seat is applied through the second; a session whose log runs ahead of
the game's record prompts once the record is there; an act of a session the store ended
is answered UNAVAILABLE, not as an act of no session.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest

from bench.bench_play import play_table
from clients.botrunner import play_seats
from clients.bots.registry import make_bot
from clients.sdk import CallError, GlintwickClient, RetryPolicy
from glintwick.v1 import game_pb2 as pb
from glintwick_cli import start_server
from services.config import ServerOptions
from services.store.base import LogItem, Snapshot, StoreUnavailableError, Write
from services.store.memory import MemoryStore
from services.store.redis import RedisStore
from tests.e2e.play_support import DRAW, act, raw_play
from tests.e2e.support import until


class SlowLoads(MemoryStore):
    """A memory store whose loads take a while (a subscribe is not authenticated at once)."""

    async def load(self, game_id: str) -> Snapshot | None:
        await asyncio.sleep(0.2)
        return await super().load(game_id)


async def test_an_act_waiting_for_a_session_a_second_subscribe_replaced_is_applied() -> None:
    """A client subscribes a seat twice in a row (a resubscribe after an outage, and the
    stream's own) and sends an act between: the act waits for the session, which the
    second subscribe replaces, and is applied through the new one, not refused as an
    act of no session."""
    options = ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="")
    running = await start_server(options, SlowLoads())
    target = f"127.0.0.1:{running.grpc_port}"
    sdk = GlintwickClient(target, retry=RetryPolicy(attempts=1))
    try:
        game = await sdk.create_game("whiskertrail", seats=2, seed=b"play twice")
        seats = [await sdk.join(game.game_id, seat=s) for s in range(2)]
        actor = seats[(await seats[0].view()).to_act[0]]
        async with raw_play(target, actor.token) as stream:
            subscribe = pb.PlaySubscribe(game_id=game.game_id, seat=actor.seat)
            request = act(game.game_id, 0, "between", DRAW)
            request.act.seat = actor.seat
            stream.send(pb.PlayRequest(subscribe=subscribe))
            stream.send(request)
            stream.send(pb.PlayRequest(subscribe=subscribe))
            result = (await stream.next("result")).result
            assert not result.HasField("error") and result.version == 1, result
    finally:
        await sdk.close()
        await running.stop(grace=0.5)


class RecordLags(MemoryStore):
    """A memory store whose game records can lag behind their logs, as a Redis Cluster
    node's can: after ``lag()`` a load answers the record as it was then, while the log
    (and the sessions' waits on it) goes on, until ``catch_up()``."""

    def __init__(self) -> None:
        super().__init__()
        self.stale: dict[str, Snapshot | None] = {}

    async def lag(self, game_id: str) -> None:
        self.stale[game_id] = await super().load(game_id)

    def catch_up(self) -> None:
        self.stale.clear()

    async def load(self, game_id: str) -> Snapshot | None:
        if game_id in self.stale:
            return self.stale[game_id]
        return await super().load(game_id)


async def test_a_session_whose_log_runs_ahead_of_the_record_prompts_once_it_is_there() -> None:
    """A move reaches a process's sessions through the log before that process can load
    the record it made (a Redis Cluster primary resumed after its replica's promotion
    answers the log reader with a write queued on it, while the same move, retried,
    lands on the promoted node a moment later): the session prompts at the new version
    once the record is there, not never (both seats waited for that prompt: the fault
    campaign's Play game that stalled 58 s)."""
    store = RecordLags()
    options = ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="")
    mover_side = await start_server(options, store)
    session_side = await start_server(options, store)  # (no cache of the move's record)
    movers = GlintwickClient(f"127.0.0.1:{mover_side.grpc_port}", retry=RetryPolicy(attempts=1))
    players = GlintwickClient(f"127.0.0.1:{session_side.grpc_port}")
    try:
        game = await movers.create_game("whiskertrail", seats=2, seed=b"play lag")
        joined = [await movers.join(game.game_id, seat=s) for s in range(2)]
        session = players.play_session()
        for seat in joined:
            session.add(players.seat(game.game_id, seat.seat, seat.token))
        prompts = aiter(session)
        async with asyncio.timeout(10):
            first = await anext(prompts)
        assert first.version == 0
        await store.lag(game.game_id)  # loads answer version 0 from now on …
        mover = joined[first.seat.seat]
        await mover.act(first.legal_actions[0], expected_version=0, request_id="ahead")
        await asyncio.sleep(1.0)  # … while the session has the move's events
        store.catch_up()  # the record is there
        async with asyncio.timeout(3):
            second = await anext(prompts)
        assert second.version == 1
        await session.close()
    finally:
        await movers.close()
        await players.close()
        await mover_side.stop(grace=0.5)
        await session_side.stop(grace=0.5)


class LoadsFail(MemoryStore):
    """A memory store whose loads the test makes fail as an unreachable store's do."""

    down = False

    async def load(self, game_id: str) -> Snapshot | None:
        if self.down:
            raise StoreUnavailableError("Connection refused.")
        return await super().load(game_id)


async def test_an_act_of_a_session_the_store_ended_is_unavailable_not_invalid() -> None:
    """A seat's subscription fails because the store is unreachable (its session ends
    UNAVAILABLE, STORE_UNAVAILABLE): an act of that seat sent before it subscribes again
    is answered the same (UNAVAILABLE, retried), not INVALID_ARGUMENT as an act of no
    session; subscribed again, the act is applied."""
    store = LoadsFail()
    options = ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="")
    running = await start_server(options, store)
    target = f"127.0.0.1:{running.grpc_port}"
    sdk = GlintwickClient(target, retry=RetryPolicy(attempts=1))
    try:
        game = await sdk.create_game("whiskertrail", seats=2, seed=b"play outage")
        seats = [await sdk.join(game.game_id, seat=s) for s in range(2)]
        view = await seats[0].view()
        actor = seats[view.to_act[0]]
        gid = game.game_id
        async with raw_play(target, actor.token) as stream:
            subscribe = pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, seat=actor.seat))
            store.down = True
            stream.send(subscribe)
            closed = (await stream.next("closed")).closed
            assert (closed.error.code, closed.error.reason) == ("UNAVAILABLE", "STORE_UNAVAILABLE")
            request = act(gid, 0, "during-outage", DRAW)
            request.act.seat = actor.seat
            stream.send(request)
            result = (await stream.next("result")).result
            assert result.request_id == "during-outage"
            assert (result.error.code, result.error.reason) == ("UNAVAILABLE", "STORE_UNAVAILABLE")
            store.down = False
            await until(lambda: running.monitor.healthy, "the store judged up")
            stream.send(subscribe)
            assert (await stream.next("prompt")).prompt.version == 0
            stream.send(request)
            result = (await stream.next("result")).result
            assert not result.HasField("error") and result.version == 1, result
    finally:
        await sdk.close()
        await running.stop(grace=0.5)


class CommitsFail(MemoryStore):
    """A memory store whose commits the test makes fail as an unreachable store's do,
    while the sessions' log reads go on (no session ends: the outage is the act's)."""

    down = False
    refused = 0
    committed = 0
    outage_after: int | None = None  # commits, then ``down`` for 0.3 s

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        if self.committed == self.outage_after:
            self.outage_after = None
            self.down = True
            asyncio.get_running_loop().call_later(0.3, setattr, self, "down", False)
        if self.down:
            self.refused += 1
            raise StoreUnavailableError("Connection refused.")
        self.committed += 1
        return await super().commit(game_id, expected_revision, write)


async def test_a_session_prompts_again_after_an_act_refused_unavailable() -> None:
    """A client plays both seats of a game on one prompts-only session, as the guide
    does (act on each prompt; a refused act is logged and the loop goes on).  The store
    refuses the commits for a while in the middle of the game, each act answered
    UNAVAILABLE while the seat's session lives on: no new prompt would come, so the
    session yields the refused prompt again after a backoff, and the game goes on to
    its end.  (Without it the loop waits forever on a game nobody moves.)"""
    store = CommitsFail()
    options = ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="")
    running = await start_server(options, store)
    sdk = GlintwickClient(f"127.0.0.1:{running.grpc_port}", retry=RetryPolicy(backoff=0.01))
    refusals: list[grpc.StatusCode] = []
    versions: list[int] = []
    try:
        game = await sdk.create_game("whiskertrail", seats=2, seed=b"commits fail")
        seats = [await sdk.join(game.game_id, seat=s) for s in range(2)]
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(20), sdk.play_session(prompts_only=True) as session:
            for seat in seats:
                session.add(seat)
            async for prompt in session:
                if prompt.version == 6 and not store.refused:
                    store.down = True
                    loop.call_later(0.3, setattr, store, "down", False)
                try:
                    versions.append(await prompt.act(prompt.legal_actions[0]))
                except CallError as exc:
                    refusals.append(exc.code)
                if len(versions) >= 30:
                    break
        assert store.refused >= 2, "the outage refused more than one act (yielded again)"
        assert set(refusals) == {grpc.StatusCode.UNAVAILABLE}, refusals
        assert versions == list(range(1, 31)), "every version once, none lost or skipped"
        view = await seats[0].view()
        assert view.version == 30
    finally:
        await sdk.close()
        await running.stop(grace=0.5)


async def test_a_bot_runner_plays_on_after_the_store_was_unreachable_mid_game() -> None:
    """The bot runner (`glintwick play`'s, a tournament's over the API) plays both seats
    of a game while the store refuses the commits for 0.3 s in the middle of it: each
    refused act counted as an error, the seat not given up, and the game played to its
    end."""
    store = CommitsFail()
    store.outage_after = 20
    options = ServerOptions(store="memory", grpc_address="127.0.0.1:0", http_address="")
    running = await start_server(options, store)
    sdk = GlintwickClient(f"127.0.0.1:{running.grpc_port}", retry=RetryPolicy(backoff=0.01))
    try:
        game = await sdk.create_game("whiskertrail", seats=2, seed=b"runner outage")
        seats = [await sdk.join(game.game_id, seat=s) for s in range(2)]
        bots = [make_bot("expert", seed=s) for s in range(2)]
        rngs = [random.Random(s) for s in range(2)]
        async with asyncio.timeout(60):
            results = await play_seats(seats, bots, rngs)
        assert store.refused >= 2
        assert sum(result.errors for result in results) == store.refused
        assert not any(result.gave_up for result in results)
        assert all(r.final_view is not None and r.final_view.game_over for r in results)
    finally:
        await sdk.close()
        await running.stop(grace=0.5)


class CountsWaits(MemoryStore):
    """A memory store that counts the log waits answered (each wakes a session's task)."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = 0

    async def wait_log(self, *args: Any, **kwargs: Any) -> list[LogItem]:
        items = await super().wait_log(*args, **kwargs)
        self.answered += 1
        return items


class CountsRedisWaits(RedisStore):
    """The same on Redis."""

    answered = 0

    async def wait_log(self, *args: Any, **kwargs: Any) -> list[LogItem]:
        items = await super().wait_log(*args, **kwargs)
        self.answered += 1
        return items


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_move_on_a_stream_of_its_game_wakes_no_session_task(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """Both seats of a game on one stream, prompts only: the act's own task prompts the
    seat to act after its move (the sessions' log waits move on past it, unanswered),
    so a move wakes neither session's task, and the game still plays to its end."""
    store: CountsWaits | CountsRedisWaits
    if kind == "redis":
        store = CountsRedisWaits(request.getfixturevalue("redis_url"))
    else:
        store = CountsWaits()
    options = ServerOptions(store=kind, grpc_address="127.0.0.1:0", http_address="")
    running = await start_server(options, store)
    target = f"127.0.0.1:{running.grpc_port}"
    sdk = GlintwickClient(target)
    try:
        game = await sdk.create_game("whiskertrail", seats=2, seed=b"driven")
        seats = [await sdk.join(game.game_id, seat=s) for s in range(2)]
        await play_table(sdk, seats, "driven", prompts_only=True)
        moves = len((await sdk.replay(game.game_id)).steps)
        final = await sdk.game(game.game_id)
        assert final.finished and moves > 100, (final.finished, moves)
        # (before: each move answered both sessions' waits, two a move)
        assert store.answered < moves / 10, (store.answered, moves)
    finally:
        await sdk.close()
        await running.stop(grace=0.5)
