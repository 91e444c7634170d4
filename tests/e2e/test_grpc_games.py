"""Whole games, racing writers, idempotent retries, resumable watches, health and
reflection, arranged decks: through real gRPC sockets, on both stores."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from clients.sdk import CallError, GlintwickClient, Seat, actions
from engine.game import GameState, arrange_deck
from engine.rulesets import PRESETS
from engine.shuffle import commitment, round_seed
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services.api import replay_events
from tests.e2e.support import (
    OPERATOR_TOKEN,
    Env,
    Mirror,
    event_data,
    health_status,
    play_game,
    race_writers,
    until,
    watching,
)


@pytest.mark.parametrize(("rules", "seats"), [("whiskertrail", 2), ("contract", 4)])
async def test_whole_game_by_random_clients(server: Env, rules: str, seats: int) -> None:
    seed = f"whole/{rules}/{server.store}".encode()
    game, joined = await server.new_game(rules, seats, seed)
    mirror = Mirror(PRESETS[rules], seats, seed)
    played = await play_game(game.game_id, [joined], mirror, random.Random(f"{rules}/{seats}"))

    final = await joined[0].view()
    assert final.game_over and final.phase == pb.PHASE_GAME_OVER
    assert final.version == mirror.version == len(played.submitted)
    assert final.seed == seed.hex()  # revealed once the game is over
    assert (await server.client.game(game.game_id)).finished

    replay = await server.client.replay(game.game_id)
    assert replay.seed == seed.hex()  # lowercase hex, as View.seed
    assert len(replay.steps) == final.version
    assert [s.version for s in replay.steps] == list(range(1, final.version + 1))
    assert [(s.seat, s.action) for s in replay.steps] == played.submitted
    assert not any(s.by_deadline for s in replay.steps)

    # the replay re-run by the engine from the revealed seed reproduces the game
    state = GameState.new_game(
        convert.rules_from_pb(replay.game.rule_set),
        replay.game.seats,
        bytes.fromhex(replay.seed),
        {d.round: list(d.cards) for d in replay.decks} or None,
    )
    for step in replay.steps:
        state, _ = state.apply_action(step.seat, convert.action_from_pb(step.action))
    assert state.is_terminal()
    assert list(state.scores) == list(replay.scores) == [p.score for p in final.players]
    assert list(state.winners()) == list(replay.winners) == list(final.winners)
    assert len(replay_events(replay)) == sum(len(r.events) for r in played.responses)

    # every deal the players saw was committed to by the round seed the replay reveals
    # (round 1 is dealt by CreateGame, and no event publishes that deal: rounds 2..)
    started = [
        e for r in played.responses for e in r.events if e.type == pb.EVENT_TYPE_ROUND_STARTED
    ]
    rounds = PRESETS[rules].rounds
    assert [event_data(e)["round"] for e in started] == list(range(2, rounds + 1))
    for event in started:
        data = event_data(event)
        assert data["commitment"] == commitment(
            round_seed(bytes.fromhex(replay.seed), data["round"])
        )
    ended = [e for r in played.responses for e in r.events if e.type == pb.EVENT_TYPE_ROUND_ENDED]
    assert [event_data(e)["round_seed"] for e in ended] == [
        round_seed(seed, r).hex() for r in range(1, rounds + 1)
    ]


async def _at_draw(env: Env, seats: int = 2) -> tuple[pb.Game, list[Seat], Seat]:
    game, joined = await env.new_game("whiskertrail", seats, b"race")
    view = await joined[0].view()
    return game, joined, joined[view.current]


async def test_racing_writers(server: Env) -> None:
    """Two submits at one expected_version: one lands, the other is ABORTED, the game
    advanced once; repeated over different and equal actions, on two connections."""
    game, joined, _ = await _at_draw(server)
    other = GlintwickClient(server.target)
    try:
        twins = [other.seat(game.game_id, s.seat, s.token) for s in joined]
        outcomes = await race_writers(joined, twins, attempts=16)
    finally:
        await other.close()
    assert outcomes["STALE_VERSION"] + outcomes["CONCURRENT_UPDATE"] == 16


async def test_idempotent_retries(server: Env) -> None:
    game, joined, actor = await _at_draw(server, seats=3)
    client = server.client

    async def submit(seat: Seat, request_id: str, action: pb.Action, version: int) -> bytes:
        request = pb.SubmitActionRequest(
            game_id=game.game_id, expected_version=version, request_id=request_id, action=action
        )
        response = await client.call(client.stub.SubmitAction, request, seat.token, retry_on=())
        return response.SerializeToString(deterministic=True)  # Struct maps: fixed order

    start = (await actor.view()).version
    first = await submit(actor, "retry-1", actions.draw(), start)
    again = await submit(actor, "retry-1", actions.draw(), start)
    assert first == again
    # a retry after the game moved on still gets the first answer, and nothing is applied
    hand = (await actor.view()).hand
    discarded = await submit(actor, "retry-2", actions.discard(hand[0].id), start + 1)
    assert await submit(actor, "retry-1", actions.draw(), start) == first
    assert await submit(actor, "retry-2", actions.discard(hand[0].id), start + 1) == discarded
    view = await actor.view()
    assert view.version == start + 2
    assert len(view.hand) == len(hand) - 1
    # concurrent duplicates: both get the one response, the game advances once
    nxt = joined[view.current]
    results = await asyncio.gather(
        *(submit(nxt, "retry-3", actions.draw(), view.version) for _ in range(4))
    )
    assert len(set(results)) == 1
    assert (await nxt.view()).version == view.version + 1
    # the same request id from another seat is its own request
    hand = (await nxt.view()).hand
    mine = await submit(nxt, "retry-1", actions.discard(hand[-1].id), view.version + 1)
    assert mine != first
    assert pb.SubmitActionResponse.FromString(mine).version == view.version + 2
    assert (await nxt.view()).version == view.version + 2
    assert (await joined[0].view()).action_count == view.version + 2


async def _collect(
    seat: Seat,
    from_version: int,
    wanted: int | None,
    into: list[pb.WatchGameResponse] | None = None,
) -> list[pb.WatchGameResponse]:
    """Read a seat's watch until ``wanted`` events arrived (then cancel) or the stream ends."""
    got: list[pb.WatchGameResponse] = [] if into is None else into
    async with watching(seat.watch(from_version)) as stream:
        async for item in stream:
            got.append(item)
            if wanted is not None and sum(1 for g in got if g.HasField("event")) >= wanted:
                break
    return got


def _events(items: list[pb.WatchGameResponse]) -> list[pb.Event]:
    assert all(i.HasField("event") for i in items)
    return [i.event for i in items]


async def test_reconnecting_watcher_misses_nothing(server: Env) -> None:
    seed = b"watch"
    game, joined = await server.new_game("whiskertrail", 4, seed)
    mirror = Mirror(PRESETS["whiskertrail"], 4, seed)
    watcher = 1
    rng = random.Random(4)

    # one watcher is never interrupted (its stream ends with the game); watcher A reads
    # the first moves as they happen, then goes away
    whole: list[pb.WatchGameResponse] = []
    whole_task = asyncio.create_task(_collect(joined[watcher], 0, None, whole))
    a_items: list[pb.WatchGameResponse] = []
    a_task = asyncio.create_task(_collect(joined[watcher], 0, None, a_items))
    await until(lambda: bool(whole and a_items), "the watchers' snapshots")
    played = [await play_game(game.game_id, [joined], mirror, rng, max_steps=30)]
    so_far = sum(len(mirror.events[v]) for v in range(0, mirror.version + 1))
    await until(lambda: len(a_items) == so_far + 1, "watcher A read everything so far")
    a_task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await a_task
    assert a_items[0].HasField("snapshot") and a_items[0].snapshot.version == 0
    a_events = _events(a_items[1:])
    last_seen = a_events[-1].version
    assert last_seen == mirror.version

    played.append(await play_game(game.game_id, [joined], mirror, rng, max_steps=70))
    resumed_task = asyncio.create_task(_collect(joined[watcher], last_seen, None))
    # watcher B is cut in the middle of a version: it resumes from the last complete one
    counts = {v: len(mirror.events[v]) for v in range(1, mirror.version + 1)}
    cut_after = next(n for n in range(so_far // 2, 10_000) if _mid_version(counts, 1, n))
    cut = _events(await _collect(joined[watcher], 1, cut_after))
    assert len(cut) == cut_after
    complete = cut[-1].version - 1
    assert len([e for e in cut if e.version == cut[-1].version]) < counts[cut[-1].version]
    kept = [e for e in cut if e.version <= complete]
    tail_task = asyncio.create_task(_collect(joined[watcher], complete, None))

    # finish the game so that every stream ends by itself
    played.append(await play_game(game.game_id, [joined], mirror, rng))
    await asyncio.wait_for(whole_task, 30)
    resumed = _events(await asyncio.wait_for(resumed_task, 30))
    tail = _events(await asyncio.wait_for(tail_task, 30))

    def expected(after: int) -> list[pb.Event]:
        return [
            e
            for v in range(after + 1, mirror.version + 1)
            for e in mirror.expected_events(watcher, v)
        ]

    assert whole[0].HasField("snapshot") and whole[0].snapshot.version == 0
    whole_events = _events(whole[1:])
    assert whole_events == expected(-1)  # from version 0: round 1's deal
    union = a_events + resumed
    assert union == expected(-1)
    assert kept + tail == expected(1)
    # versions never go back, and every action has its events
    for events in (whole_events, union):
        versions = [e.version for e in events]
        assert versions == sorted(versions)
        assert sorted(set(versions)) == list(range(0, mirror.version + 1))
    # the events in the seat's own SubmitAction responses are the same events
    own = [
        r
        for p in played
        for (seat, _), r in zip(p.submitted, p.responses, strict=True)
        if seat == watcher
    ]
    assert own
    for response in own:
        assert [e for e in whole_events if e.version == response.version] == list(response.events)


def _mid_version(counts: dict[int, int], after: int, n: int) -> bool:
    """Whether the n-th event after version ``after`` is not the last of its version."""
    total = 0
    for v in sorted(counts):
        if v <= after:
            continue
        total += counts[v]
        if total >= n:
            return total > n and counts[v] > 1
    return False


async def test_health_and_reflection(server: Env) -> None:
    channel = grpc.aio.insecure_channel(server.target)
    try:
        for name in ("", "glintwick.v1.GameService"):
            assert await health_status(channel, name) == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await health_status(channel, "no.such.Service")
        assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
    finally:
        await channel.close()

    def reflect() -> tuple[list[str], list[str], str]:
        # grpcio-reflection's own client is synchronous: run it off the server's loop
        with grpc.insecure_channel(server.target) as sync_channel:
            database = ProtoReflectionDescriptorDatabase(sync_channel)
            pool = descriptor_pool.DescriptorPool(database)
            services = list(database.get_services())
            service = pool.FindServiceByName("glintwick.v1.GameService")
            methods = [m.name for m in service.methods]
            submit = pool.FindMethodByName("glintwick.v1.GameService.SubmitAction")
            return services, methods, submit.input_type.full_name

    services, methods, submit_input = await asyncio.to_thread(reflect)
    assert "glintwick.v1.GameService" in services
    assert "grpc.health.v1.Health" in services
    expected = [m.name for m in pb.DESCRIPTOR.services_by_name["GameService"].methods]
    assert methods == expected
    assert {"CreateGame", "SubmitAction", "WatchGame", "GetReplay"} <= set(methods)
    assert submit_input == "glintwick.v1.SubmitActionRequest"


async def test_create_game_from_deck(server: Env) -> None:
    rules = PRESETS["whiskertrail"]
    hands = [
        ["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC"],
        ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD"],
    ]
    order = arrange_deck(rules, 2, 1, hands, upcard="KS", stock=["QH", "JK", "QH"])
    seed = b"arranged"
    game = await server.client.create_game_from_deck({1: order}, OPERATOR_TOKEN, seats=2, seed=seed)
    assert game.arranged
    joined = [await server.client.join(game.game_id, seat=s) for s in range(2)]
    for s, seat in enumerate(joined):
        view = await seat.view()
        assert [c.code for c in view.hand] == hands[s]
        assert [c.id for c in view.hand] == sorted(order[s::2][:10])
    view = await joined[0].view()
    assert view.discard_top.code == "KS" and view.discard_top.id == order[20]
    assert view.stock_size == rules.deck_size - 21
    # the stock is dealt exactly in the given order: seat 0 draws the first QH
    drew = await joined[0].act(actions.draw())
    drawn = [e for e in drew.events if e.type == pb.EVENT_TYPE_DREW]
    assert event_data(drawn[0])["card"] == {"id": order[21], "code": "QH"}
    mirror = Mirror(rules, 2, seed, {1: order})
    mirror.apply(0, convert.action_from_pb(actions.draw()))
    assert list(drew.events) == mirror.expected_events(0, 1)
    assert await joined[0].view() == mirror.expected_view(0, 1, game.game_id)

    # refused without the operator credential, and nothing is created
    for token in ("", "not-the-operator"):
        with pytest.raises(CallError) as refused:
            await server.client.create_game_from_deck({1: order}, token, seats=2)
        assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED
    # a deck that is not a permutation of the cards is malformed
    with pytest.raises(CallError) as bad:
        await server.client.create_game_from_deck(
            {1: [*order[:-1], order[0]]}, OPERATOR_TOKEN, seats=2
        )
    assert bad.value.code is grpc.StatusCode.INVALID_ARGUMENT


class _CutWatches(grpc.aio.UnaryStreamClientInterceptor):
    """Cuts the n-th watch stream after ``cuts[n]`` messages with UNAVAILABLE, as a
    dropped connection would."""

    def __init__(self, cuts: list[int]) -> None:
        self.cuts = list(cuts)
        self.streams = 0

    async def intercept_unary_stream(
        self,
        continuation: Any,
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        call = await continuation(client_call_details, request)
        method = client_call_details.method
        name = method.decode() if isinstance(method, bytes) else method
        if not name.endswith("/WatchGame"):
            return call
        self.streams += 1
        if not self.cuts:
            return call
        limit = self.cuts.pop(0)

        async def cut() -> AsyncIterator[pb.WatchGameResponse]:
            count = 0
            async for item in call:
                if count == limit:
                    call.cancel()
                    raise grpc.aio.AioRpcError(
                        grpc.StatusCode.UNAVAILABLE,
                        grpc.aio.Metadata(),
                        grpc.aio.Metadata(),
                        details="connection cut by the test",
                    )
                count += 1
                yield item

        return cut()


async def test_sdk_watch_resumes_after_a_cut_connection(server: Env) -> None:
    """The SDK's watch reconnects on UNAVAILABLE and resumes without losing or repeating
    an event, even when the connection drops between two events of one action."""
    seed = b"cut"
    game, joined = await server.new_game("whiskertrail", 2, seed)
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    await play_game(game.game_id, [joined], mirror, random.Random(9), max_steps=40)
    counts = {v: len(mirror.events[v]) for v in range(1, mirror.version + 1)}
    # cut points (messages per connection): mid-version where possible, then at a boundary
    cuts = [next(n for n in range(1, 200) if _mid_version(counts, 1, n)), 1, 2, 3]
    interceptor = _CutWatches(cuts)
    channel = grpc.aio.insecure_channel(server.target, interceptors=[interceptor])
    client = GlintwickClient(server.target, channel=channel)
    watcher = 1
    total = sum(counts.values())
    try:
        got: list[pb.Event] = []
        stream = client.watch(game.game_id, token=joined[watcher].token, from_version=1)
        async with asyncio.timeout(20), watching(stream):
            async for item in stream:
                assert item.HasField("event")
                got.append(item.event)
                if len(got) == total - counts[1]:
                    break
        expected = [
            e for v in range(2, mirror.version + 1) for e in mirror.expected_events(watcher, v)
        ]
        assert got == expected
        assert interceptor.streams >= len(cuts) + 1  # every cut was followed by a reconnect
    finally:
        await client.close()
