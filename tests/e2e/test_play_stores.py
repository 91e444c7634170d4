"""Play sessions over a store that answers late, lags or fails: an act sent between two
subscribes of its seat is applied through the second; a session whose log runs ahead of
the game's record prompts once the record is there; an act of a session the store ended
is answered UNAVAILABLE, not as an act of no session.
"""

from __future__ import annotations

import asyncio

from clients.sdk import GlintwickClient, RetryPolicy
from glintwick.v1 import game_pb2 as pb
from glintwick_cli import start_server
from services.config import ServerOptions
from services.store.base import Snapshot, StoreUnavailableError
from services.store.memory import MemoryStore
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
