"""Play sessions (the Play stream, its SSE + POST face, the SDK's PlaySession) end to end.

Whole games are played through sessions only (both rule sets, both stores, house-bot
seats beside people's), every message checked against the engine (tests/e2e/support.py:
Mirror) and for secrecy; sessions cut at random messages, also inside a version and
between an act and its result, resume on another server process over one Redis with
every event received exactly once and no act applied twice; refused and malformed
messages are answered on the stream, which stays usable; a deadline fires while the
sessions are idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
import redis.asyncio as aioredis
from google.protobuf import json_format

from clients.bots.greedy import GreedyBot
from clients.sdk import CallError, GlintwickClient, Prompt, RetryPolicy, Seat
from clients.turn import wire_choice
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from glintwick_cli import start_server
from services.config import ServerOptions
from services.store.base import Snapshot, StoreUnavailableError
from services.store.memory import MemoryStore
from services.store.redis import SHARDS
from tests.e2e.conftest import SHARED_STORES_CLUSTER_SLOW, StartServer
from tests.e2e.support import (
    OPERATOR_TOKEN,
    Env,
    Mirror,
    check_clean,
    check_events,
    read_sse,
    until,
)
from tests.e2e.test_house_bots import in_process_pool
from tests.e2e.test_replicas import serve_process, wait_serving


def choose(view: pb.View, actions: list[pb.Action], rng: random.Random) -> pb.Action:
    """The greedy house bot's choice (games of a few hundred moves, not thousands)."""
    return wire_choice(GreedyBot(), view, actions, rng)


async def mirror_from_log(env_store: object, game_id: str, mirror: Mirror) -> list[spb.LogEntry]:
    """Replay the store's action log into ``mirror``; the entries."""
    from services.store.base import GameStore

    assert isinstance(env_store, GameStore)
    entries: list[spb.LogEntry] = []
    while items := await env_store.read_log(game_id, len(entries)):
        entries.extend(spb.LogEntry.FromString(i.entry) for i in items)
    assert [e.version for e in entries] == list(range(1, len(entries) + 1)), "a gap in the log"
    for entry in entries:
        mirror.apply(entry.seat, convert.action_from_pb(entry.action))
    return entries


def all_events(mirror: Mirror, seat: int) -> list[pb.Event]:
    return [e for v in range(mirror.version + 1) for e in mirror.expected_events(seat, v)]


# --------------------------------------------------------------------------- whole games


@pytest.mark.parametrize(
    ("rules", "seats", "store"),
    # (a contract game is some 3000 moves: on one store, to keep the suite quick)
    [("whiskertrail", 2, "memory"), ("whiskertrail", 2, "redis"), ("contract", 4, "redis")],
)
async def test_whole_games_through_one_play_session(
    start_server: StartServer, rules: str, seats: int, store: str
) -> None:
    """Every seat of a game (the last a house bot, played with the operator credential)
    on one PlaySession: the game is played to its end through prompts only; every seat
    gets the engine's events exactly once, every prompt is the engine's view and legal
    actions at its version, nothing shows what its seat may not know, and the client
    sends at most 1.5 messages per move."""
    server = await start_server(store)
    seed = f"play/{rules}/{server.store}".encode()
    client = server.client
    game = await client.create_game(rules, seats=seats, seed=seed, bots={seats - 1: "greedy"})
    people = [await client.join(game.game_id, seat=s, name=f"p{s}") for s in range(seats - 1)]
    handles: list[Seat] = [*people, client.house_seat(game.game_id, seats - 1, OPERATOR_TOKEN)]
    events: dict[int, list[pb.Event]] = {s: [] for s in range(seats)}
    prompts: list[Prompt] = []
    rng = random.Random(seed)
    session = client.play_session(on_event=lambda seat, e: events[seat.seat].append(e))
    refused: list[CallError] = []
    async with session, asyncio.timeout(120):
        for handle in handles:
            session.add(handle)
        async for prompt in session:
            prompts.append(prompt)
            try:
                await prompt.act(choose(prompt.view, prompt.legal_actions, rng))
            except CallError as exc:  # the game moved on (a claim window, the bot pool)
                refused.append(exc)
    assert not session.errors
    for refusal in refused:
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
    mirror = Mirror(PRESETS[rules], seats, seed)
    await mirror_from_log(server.running.service.store, game.game_id, mirror)
    assert mirror.state.is_terminal(), "the session ended before the game did"
    for seat in range(seats):
        assert events[seat] == all_events(mirror, seat), f"seat {seat}'s events"
        check_events(mirror, seat, events[seat], f"seat {seat}'s events")
    for number, prompt in enumerate(prompts):
        seat, version = prompt.seat.seat, prompt.version
        state = mirror.states[version]
        assert seat in state.to_act, f"v{version}: a prompt for seat {seat}, which may not act"
        legal = [convert.action_from_pb(a) for a in prompt.legal_actions]
        assert legal == state.legal_actions(seat), f"v{version}: not the engine's legal actions"
        if number % 4 == 0:  # (the expected view is slow to build: one prompt in four)
            deadline = prompt.view.deadline_unix
            expected = mirror.expected_view(seat, version, game.game_id, deadline)
            assert prompt.view == expected, f"v{version}: seat {seat}'s prompt view"
        check_clean(mirror.rules, prompt.view, mirror.view_rules(seat, version), "a prompt")
        for action in prompt.legal_actions:
            check_clean(mirror.rules, action, mirror.view_rules(seat, version), "a legal action")
    # every move of a person answered a prompt of its seat at its version
    prompted = {(p.seat.seat, p.version) for p in prompts}
    for version, (seat, _) in enumerate(mirror.actions):
        if seat < seats - 1:
            assert (seat, version) in prompted, f"v{version + 1} without a prompt of seat {seat}"
    per_move = session.sent / mirror.version
    print(f"{rules}: {session.sent} messages sent, {session.received} received for "
          f"{mirror.version} moves: {per_move:.2f} sent per move")  # fmt: skip
    assert per_move <= 1.5, per_move


# --------------------------------------------------------------------------- errors


class RawPlay:
    """A raw Play stream: send messages (or bytes), read the answers one by one."""

    def __init__(self, channel: grpc.aio.Channel, token: str | None = None) -> None:
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        call = channel.stream_stream(
            "/glintwick.v1.GameService/Play",
            request_serializer=lambda data: data,
            response_deserializer=pb.PlayResponse.FromString,
        )
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.call = call(self._requests(), metadata=metadata)

    async def _requests(self) -> AsyncIterator[bytes]:
        while True:
            data = await self._queue.get()
            if data is None:
                return
            yield data

    def send(self, message: pb.PlayRequest | bytes) -> None:
        data = message if isinstance(message, bytes) else message.SerializeToString()
        self._queue.put_nowait(data)

    async def next(self, kind: str | None = None) -> pb.PlayResponse:
        """The next message (of ``kind``, skipping others) within 10 s."""
        async with asyncio.timeout(10):
            while True:
                message = await self.call.read()
                assert isinstance(message, pb.PlayResponse), "the stream ended"
                if kind is None or message.WhichOneof("kind") == kind:
                    return message

    def cancel(self) -> None:
        self.call.cancel()


@contextlib.asynccontextmanager
async def raw_play(target: str, token: str | None = None) -> AsyncIterator[RawPlay]:
    async with grpc.aio.insecure_channel(target) as channel:
        stream = RawPlay(channel, token)
        try:
            yield stream
        finally:
            stream.cancel()


def act(game_id: str, version: int, request_id: str, action: pb.Action) -> pb.PlayRequest:
    return pb.PlayRequest(
        act=pb.PlayAct(
            game_id=game_id, expected_version=version, request_id=request_id, action=action
        )
    )


DRAW = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))


async def test_refused_and_malformed_messages_leave_the_stream_usable(server: Env) -> None:
    """Bytes that are no PlayRequest, an empty one, an act of no session, an illegal, a
    malformed and a stale act, a subscribe with a bad token: each is answered on the
    stream with the unary calls' code and reason; then a legal act is applied, once
    though it is sent twice."""
    game, joined = await server.new_game("whiskertrail", 2, b"play errors")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play errors")
    actor = joined[mirror.state.current]
    gid = game.game_id
    async with raw_play(server.target, actor.token) as stream:
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid)))
        snapshot = await stream.next()
        assert snapshot.WhichOneof("kind") == "snapshot" and snapshot.seat == actor.seat
        prompt = (await stream.next("prompt")).prompt
        assert prompt.version == 0

        def refusal(message: pb.PlayResponse) -> tuple[str, str]:
            kind = message.WhichOneof("kind")
            error = message.error if kind == "error" else message.result.error
            assert error.message, message
            return error.code, error.reason

        stream.send(b"\xff\xff\xff")
        assert refusal(await stream.next("error")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        stream.send(pb.PlayRequest())
        assert refusal(await stream.next("error")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        stream.send(act("no-such-game", 0, "r0", DRAW))
        assert refusal(await stream.next("result")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        discard = pb.Action(discard=pb.Discard(card=prompt.view.hand[0].id))
        stream.send(act(gid, 0, "r1", discard))  # no discard before the draw
        code, reason = refusal(await stream.next("result"))
        assert code == "FAILED_PRECONDITION" and reason not in ("", "INTERNAL"), reason
        stream.send(act(gid, 0, "r2", pb.Action()))
        assert refusal(await stream.next("result")) == ("INVALID_ARGUMENT", "MALFORMED_ACTION")
        stream.send(act(gid, 5, "r3", DRAW))
        assert refusal(await stream.next("result")) == ("ABORTED", "STALE_VERSION")
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, token="nope")))
        closed = await stream.next("closed")
        assert (closed.closed.error.code, closed.closed.error.reason) == (
            "UNAUTHENTICATED",
            "BAD_TOKEN",
        )
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, seat=9)))
        closed = await stream.next("closed")
        assert closed.closed.error.reason == "NO_SUCH_SEAT"
        # the stream still plays: the draw lands once, though sent twice
        stream.send(act(gid, 0, "draw-1", DRAW))
        stream.send(act(gid, 0, "draw-1", DRAW))
        results: list[pb.PlayResult] = []
        events: list[pb.Event] = []
        prompts: list[pb.PlayPrompt] = []
        while len(results) < 2 or not prompts:
            message = await stream.next()
            kind = message.WhichOneof("kind")
            if kind == "result":
                results.append(message.result)
            elif kind == "event":
                events.append(message.event)
            elif kind == "prompt":
                prompts.append(message.prompt)
        assert results[0] == results[1] == pb.PlayResult(request_id="draw-1", version=1)
        assert [(e.version, e.type) for e in events] == [(1, pb.EVENT_TYPE_DREW)]
        assert [p.version for p in prompts] == [1]
        for subscribe, reason in [
            (pb.PlaySubscribe(game_id="no-such-game"), "GAME_NOT_FOUND"),
            (pb.PlaySubscribe(game_id=gid, after_cursor="9.9"), "INVALID_ARGUMENT"),
        ]:
            stream.send(pb.PlayRequest(subscribe=subscribe))
            assert (await stream.next("closed")).closed.error.reason == reason
        # a second subscribe of the seat replaces the first: a snapshot, one prompt
        again_subscribe = pb.PlaySubscribe(game_id=gid, seat=actor.seat)
        stream.send(pb.PlayRequest(subscribe=again_subscribe))
        assert (await stream.next()).snapshot.version == 1
        assert (await stream.next()).prompt.version == 1
        stream.send(pb.PlayRequest(unsubscribe=pb.PlayUnsubscribe(game_id=gid)))
        closed = await stream.next()
        assert closed.HasField("closed") and not closed.closed.HasField("error")
        stream.send(act(gid, 1, "after", DRAW))  # no session any more
        assert refusal(await stream.next("result")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        # the server stopping ends the stream: UNAVAILABLE, SHUTTING_DOWN
        server.running.service.end_watches()
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await stream.next()
        assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
    view = await actor.view()
    assert view.version == 1


@pytest.mark.parametrize("server", ["memory"], indirect=True)
async def test_an_act_on_an_ended_session_fails_at_once(server: Env) -> None:
    """Once a session's stream has ended (here: its one seat refused), an act on it
    has nothing to carry it: CallError at once, not a wait for its whole timeout (a
    client that resends a given-up act there would otherwise wait for nothing)."""
    game, joined = await server.new_game("whiskertrail", 2, b"play ended")
    seat = Seat(server.client, game.game_id, joined[0].seat, "not-a-token")
    session = server.client.play_session()
    session.add(seat)
    assert [p async for p in session] == []
    assert session.ended and session.errors[(game.game_id, seat.seat)].reason == "BAD_TOKEN"
    started = asyncio.get_running_loop().time()
    with pytest.raises(CallError) as refused:
        await session.act(seat, DRAW, 0, timeout=5)
    assert refused.value.code is grpc.StatusCode.CANCELLED
    assert asyncio.get_running_loop().time() - started < 1.0
    await session.close()


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


# --------------------------------------------------------------------------- deadlines


@pytest.mark.parametrize("server", ["memory", "redis", "cluster"], indirect=True)
async def test_a_deadline_fires_while_the_sessions_are_idle(server: Env) -> None:
    """Two seats subscribed, neither acting: the turn deadline's default actions reach
    both sessions (events, then a prompt for the seat whose turn comes next)."""
    game, joined = await server.new_game("whiskertrail", 2, b"play idle", turn_seconds=1)
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play idle")
    first = mirror.state.current
    events: dict[int, list[pb.Event]] = {0: [], 1: []}
    session = server.client.play_session(on_event=lambda s, e: events[s.seat].append(e))
    got: list[Prompt] = []
    async with session, asyncio.timeout(15):
        for handle in joined:
            session.add(handle)
        async for prompt in session:
            got.append(prompt)
            if prompt.seat.seat != first:
                break  # the first seat's turn was played for it
    assert got[0].seat.seat == first and got[0].version == 0 and got[0].deadline_unix > 0
    last = got[-1]
    assert last.seat.seat == 1 - first and last.version >= 2
    entries = await mirror_from_log(server.running.service.store, game.game_id, mirror)
    assert entries[0].by_deadline and entries[1].by_deadline
    for seat in (0, 1):
        expected = [e for v in range(last.version + 1) for e in mirror.expected_events(seat, v)]
        if seat == last.seat.seat:  # its prompt came after every event up to it
            assert events[seat] == expected
        else:  # (the other session may still be on its way)
            assert events[seat] == expected[: len(events[seat])]
            assert len(events[seat]) >= len(mirror.expected_events(seat, 0)) + 1


# --------------------------------------------------------------------------- random cuts


async def play_with_cuts(
    targets: list[str],
    game_id: str,
    seat: int,
    token: str,
    rng: random.Random,
    received: list[pb.Event],
    stats: dict[str, int],
) -> None:
    """One seat's session over raw streams, cut after a random number of messages (1 to
    6: inside versions too) or right after an act (before its result), each time
    resumed on the other server after the last cursor received, the unanswered act
    sent again with its request id."""
    cursor = ""
    pending: pb.PlayAct | None = None
    streams = 0
    while True:
        streams += 1
        async with raw_play(targets[streams % 2]) as stream:
            subscribe = pb.PlaySubscribe(game_id=game_id, seat=seat, token=token)
            subscribe.after_cursor = cursor
            stream.send(pb.PlayRequest(subscribe=subscribe))
            if pending is not None:
                stats["resent"] += 1
                stream.send(pb.PlayRequest(act=pending))
            quota = rng.randint(1, 6)
            while quota > 0:
                message = await stream.next()
                quota -= 1
                kind = message.WhichOneof("kind")
                if kind == "snapshot":
                    assert streams == 1, "a resumed session sends no snapshot"
                elif kind == "event":
                    received.append(message.event)
                    cursor = message.event.cursor
                elif kind == "prompt":
                    version = message.prompt.version
                    if pending is None or pending.expected_version < version:
                        action = choose(
                            message.prompt.view, list(message.prompt.legal_actions), rng
                        )
                        pending = pb.PlayAct(
                            game_id=game_id,
                            seat=seat,
                            expected_version=version,
                            request_id=f"{seat}:{version}",
                            action=action,
                        )
                        stream.send(pb.PlayRequest(act=pending))
                        if rng.random() < 0.3:
                            stats["cut_after_act"] += 1
                            break  # cut before the result comes
                elif kind == "result":
                    error = message.result.error
                    if message.result.HasField("error"):
                        assert (error.code, error.reason) == ("ABORTED", "STALE_VERSION"), error
                    if pending is not None and message.result.request_id == pending.request_id:
                        pending = None
                elif kind == "closed":
                    assert not message.closed.HasField("error"), message
                    stats["streams"] += streams
                    return
                else:
                    raise AssertionError(f"unexpected {message}")


# (their Redis Cluster runs take tens of seconds each: `make test-cluster`, not `make test`)
@pytest.mark.parametrize("shared_store", SHARED_STORES_CLUSTER_SLOW, indirect=True)
async def test_sessions_cut_at_random_resume_on_another_process(
    shared_url: str, tmp_path: Path
) -> None:
    """Two ``glintwick serve`` processes over one Redis; each seat's session is cut
    again and again and resumed on the other process: each seat receives every event
    of the game exactly once, in order, and no act is applied twice."""
    seed = b"play cuts"
    with (
        serve_process(shared_url, tmp_path / "a.log") as (proc_a, port_a),
        serve_process(shared_url, tmp_path / "b.log") as (proc_b, port_b),
    ):
        await asyncio.gather(
            wait_serving(port_a, proc_a, tmp_path / "a.log"),
            wait_serving(port_b, proc_b, tmp_path / "b.log"),
        )
        targets = [f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"]
        async with grpc.aio.insecure_channel(targets[0]) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            game = await stub.CreateGame(
                pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2, seed=seed.hex())
            )
            tokens = [
                (await stub.JoinGame(pb.JoinGameRequest(game_id=game.game_id, seat=s))).token
                for s in range(2)
            ]
            received: dict[int, list[pb.Event]] = {0: [], 1: []}
            stats = {"resent": 0, "cut_after_act": 0, "streams": 0}
            async with asyncio.timeout(240):
                await asyncio.gather(
                    *(
                        play_with_cuts(
                            targets,
                            game.game_id,
                            s,
                            tokens[s],
                            random.Random(f"cuts{s}"),
                            received[s],
                            stats,
                        )
                        for s in range(2)
                    )
                )
            replay = await stub.GetReplay(pb.GetReplayRequest(game_id=game.game_id))
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    for step in replay.steps:
        mirror.apply(step.seat, convert.action_from_pb(step.action))
    assert mirror.state.is_terminal()
    assert list(replay.scores) == list(mirror.state.scores)
    for seat in (0, 1):
        assert received[seat] == all_events(mirror, seat), f"seat {seat}'s events"
        check_events(mirror, seat, received[seat], f"seat {seat}'s resumed events")
    assert stats["streams"] > 50 and stats["cut_after_act"] > 5 and stats["resent"] > 5, stats
    # no act applied twice: every step answers a different prompt (seat, version)
    assert [s.version for s in replay.steps] == list(range(1, len(replay.steps) + 1))


# --------------------------------------------------------------------------- HTTP


async def test_http_play_session_sse_down_post_up(server: Env) -> None:
    """The HTTP face: GET :play streams the seat's session as SSE (snapshot, events with
    their cursors as ids, prompts), POST :play acts (its PlayResult, or the usual
    error body), and a session resumed with Last-Event-ID misses nothing."""
    game, joined = await server.new_game("whiskertrail", 2, b"play http")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play http")
    seat = joined[mirror.state.current]
    auth = {"Authorization": f"Bearer {seat.token}"}
    path = f"/v1/games/{game.game_id}:play"
    seen: list[tuple[str, str, dict[str, object]]] = []
    async with aiohttp.ClientSession(server.http) as http:
        async with http.get(path, params={"after": "x"}, headers=auth) as refused:
            assert refused.status == 400
            assert set(await refused.json()) == {"code", "reason", "message"}
        async with http.get(path) as refused:
            assert refused.status == 401
        other = 1 - seat.seat
        async with http.get(path, params={"seat": str(other)}, headers=auth) as refused:
            assert refused.status == 403
            assert (await refused.json())["reason"] == "NOT_YOUR_SEAT"
        async with asyncio.timeout(20), http.get(path, headers=auth) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/event-stream")
            async for kind, ident, data in read_sse(response):
                seen.append((kind, ident, data))
                if kind != "prompt":
                    continue
                prompt = data["prompt"]
                assert isinstance(prompt, dict)
                version = int(prompt["version"])
                if version >= 2:
                    break
                legal = [convert.action_from_pb(pbify(a)) for a in prompt["legalActions"]]
                assert legal == mirror.state.legal_actions(seat.seat)
                view = json_format.ParseDict(prompt["view"], pb.View())
                legal_pb = [pbify(a) for a in prompt["legalActions"]]
                choice = choose(view, legal_pb, random.Random(1))
                body = {
                    "expectedVersion": str(version),
                    "requestId": f"http-{version}",
                    "action": json.loads(json_text(choice)),
                }
                async with http.post(path, json=body, headers=auth) as answer:
                    assert answer.status == 200, await answer.text()
                    result = await answer.json()
                    assert result["requestId"] == f"http-{version}"
                    assert int(result["version"]) == version + 1
                mirror.apply(seat.seat, convert.action_from_pb(choice))
                async with http.post(path, json=body | {"requestId": "late"}, headers=auth) as late:
                    assert late.status == 409
                    assert (await late.json())["reason"] == "STALE_VERSION"
        kinds = [k for k, _, _ in seen]
        assert kinds[0] == "snapshot" and seen[0][1] == "0"
        events = [(ident, data) for kind, ident, data in seen if kind == "event"]
        expected = [e for v in range(3) for e in mirror.expected_events(seat.seat, v)]
        assert [ident for ident, _ in events] == [e.cursor for e in expected]
        # resumed after the first event: the rest again, exactly
        got: list[str] = []
        async with (
            asyncio.timeout(10),
            http.get(path, headers={**auth, "Last-Event-ID": expected[0].cursor}) as again,
        ):
            async for kind, ident, _ in read_sse(again):
                if kind == "event":
                    got.append(ident)
                if len(got) == len(expected) - 1:
                    break
        assert got == [e.cursor for e in expected[1:]]


def pbify(data: Any) -> pb.Action:
    return json_format.ParseDict(data, pb.Action())


def json_text(action: pb.Action) -> str:
    return json_format.MessageToJson(action)


# --------------------------------------------------------------------------- SDK resume


async def test_the_sdk_session_resumes_a_stream_the_server_ended(server: Env) -> None:
    """The server ends every play stream now and then (what stopping does: UNAVAILABLE,
    SHUTTING_DOWN) while a game is played through one SDK session: the SDK reconnects,
    resumes each seat after its last event and resends the unanswered acts; the game
    ends with every event received exactly once and no refusal but stale prompts."""
    seed = b"play sdk resume"
    game, joined = await server.new_game("whiskertrail", 2, seed)
    events: dict[int, list[pb.Event]] = {0: [], 1: []}
    session = server.client.play_session(on_event=lambda s, e: events[s.seat].append(e))
    service = server.running.service
    rng = random.Random(seed)
    prompts = 0
    async with session, asyncio.timeout(120):
        for handle in joined:
            session.add(handle)
        async for prompt in session:
            prompts += 1
            move = prompt.act(choose(prompt.view, prompt.legal_actions, rng))
            acting = asyncio.ensure_future(move)
            if prompts % 25 == 0:  # cut the stream, maybe between the act and its result
                service.end_watches()
                await asyncio.sleep(0.01)
                service._ctx.stopping.clear()  # (the server goes on serving)
            try:
                await acting
            except CallError as exc:
                assert (exc.code, exc.reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
    assert not session.errors
    assert session.streams > 5, session.streams
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    await mirror_from_log(service.store, game.game_id, mirror)
    assert mirror.state.is_terminal()
    for seat in (0, 1):
        assert events[seat] == all_events(mirror, seat), f"seat {seat}'s events"


async def test_acts_past_the_rate_limit_are_refused_on_the_stream(
    start_server: StartServer,
) -> None:
    """The seat's rate limit holds on the stream: with a burst of 2 and a slow refill,
    the third act at once is RESOURCE_EXHAUSTED / RATE_LIMITED, answered on the stream,
    which goes on playing once the bucket refills."""
    env = await start_server("memory", rate_per_second=5.0, rate_burst=2)
    game, joined = await env.new_game("whiskertrail", 2, b"play rate")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play rate")
    actor = joined[mirror.state.current]
    gid = game.game_id
    async with raw_play(env.target, actor.token) as stream:
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid)))
        await stream.next("prompt")
        for n in range(3):  # stale, so nothing changes, but each takes a token
            stream.send(act(gid, 7, f"r{n}", DRAW))
        reasons = [(await stream.next("result")).result.error.reason for _ in range(3)]
        assert sorted(reasons) == ["RATE_LIMITED", "STALE_VERSION", "STALE_VERSION"], reasons
        await asyncio.sleep(0.5)  # the bucket refills
        stream.send(act(gid, 0, "draw", DRAW))
        result = (await stream.next("result")).result
        assert not result.HasField("error") and result.version == 1


async def test_seat_play_against_the_house_bot_pool(start_server: StartServer) -> None:
    """``async for prompt in seat.play()``: a person's seat plays round 1 against a
    house bot the server's own pool plays (the pool polls: a whole game would be
    slow), one prompt per move of the seat, at its version, and leaves the loop."""
    env = await start_server("memory")
    seed = b"play vs pool"
    game = await env.client.create_game("whiskertrail", seats=2, seed=seed, bots={1: "greedy"})
    seat = await env.client.join(game.game_id, seat=0, name="ann")
    rng = random.Random(seed)
    versions: list[int] = []
    async with in_process_pool(env), asyncio.timeout(60):
        async for prompt in seat.play():
            if prompt.view.round > 1:
                break
            versions.append(prompt.version)
            await prompt.act(choose(prompt.view, prompt.legal_actions, rng))
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    entries = await mirror_from_log(env.running.service.store, game.game_id, mirror)
    assert mirror.state.round_number > 1
    assert {e.seat for e in entries} == {0, 1}
    mine = [e.version - 1 for e in entries if e.seat == 0]
    assert versions == mine, "one prompt per move of the seat, at its version"


def queue_waits() -> list[asyncio.Task[object]]:
    """Tasks still waiting on an asyncio queue (a stream's outbox, a request iterator)."""
    return [t for t in asyncio.all_tasks() if not t.done() and "Queue.get" in repr(t.get_coro())]


async def test_a_finished_session_leaves_no_task_waiting(server: Env) -> None:
    """Once a game is played out on a session (both seats, prompts only) and the session
    is closed, neither the client's request iterator nor the server's stream is left
    waiting on its queue (they were, and were destroyed pending at the loop's close)."""
    _, joined = await server.new_game("whiskertrail", 2, b"no task left")
    before = set(queue_waits())
    rng = random.Random(3)
    async with asyncio.timeout(120):
        session = server.client.play_session(prompts_only=True)
        async with session:
            for seat in joined:
                session.add(seat)
            async for prompt in session:
                await prompt.act(choose(prompt.view, prompt.legal_actions, rng))
        await until(lambda: not (set(queue_waits()) - before), "the queues' waiters to end")


# --------------------------------------------------------------------------- many sessions

MANY_GAMES = 150  # two seats each: 300 sessions on one stream


async def test_one_stream_holds_hundreds_of_sessions_woken_from_another_replica(
    start_server: StartServer, fresh_redis: str
) -> None:
    """300 seats of 150 games on one Play stream of replica A: every move, made through
    replica B, reaches every session of its game on A, while the sessions hold one
    blocking Redis read per index shard between them (A's log readers), not one each."""
    a = await start_server("redis")
    b = await start_server("redis")
    seats: dict[tuple[str, int], Seat] = {}
    for n in range(MANY_GAMES):
        game, joined = await a.new_game("whiskertrail", 2, f"many {n}".encode())
        for handle in joined:
            seats[(game.game_id, handle.seat)] = handle
    async with raw_play(a.target) as stream, asyncio.timeout(120):
        for (gid, _), handle in seats.items():
            stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, token=handle.token)))
        snapshots: set[tuple[str, int]] = set()
        to_act: dict[str, int] = {}  # game → the seat prompted at version 0
        while len(snapshots) < len(seats) or len(to_act) < MANY_GAMES:
            message = await stream.next()
            kind = message.WhichOneof("kind")
            assert kind in ("snapshot", "event", "prompt"), message
            if kind == "snapshot":
                snapshots.add((message.game_id, message.seat))
            elif kind == "prompt":
                assert message.prompt.version == 0
                to_act[message.game_id] = message.seat
        await asyncio.sleep(0.5)  # every session waiting for version 1
        admin = aioredis.Redis.from_url(fresh_redis)
        try:
            info = await admin.info("clients")
        finally:
            await admin.aclose()
        # A's readers, one per index shard (and B's, if any)
        assert int(info["blocked_clients"]) <= 2 * SHARDS, info

        async with grpc.aio.insecure_channel(b.target) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            for gid, seat in to_act.items():
                token = seats[(gid, seat)].token
                request = pb.SubmitActionRequest(
                    game_id=gid, expected_version=0, request_id=f"many-{gid}", action=DRAW
                )
                answer = await stub.SubmitAction(
                    request, metadata=(("authorization", f"Bearer {token}"),), timeout=10
                )
                assert answer.version == 1
        moved: set[tuple[str, int]] = set()
        while len(moved) < len(seats):
            message = await stream.next()
            if message.WhichOneof("kind") == "event" and message.event.version == 1:
                moved.add((message.game_id, message.seat))
    assert moved == set(seats)
