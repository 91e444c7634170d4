"""SubmitAction's two paths give the same answers.

A move whose expected version matches the newest game this process has seen is
applied to the cached game and committed without a load (one store round trip);
everything else takes the full path.  Two GameService objects on one (real,
in-memory) store play two replicas: the second one's cache goes stale behind the
first one's writes, and every answer must still be the full path's.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from engine.actions import Action
from engine.game import GameState
from engine.rulesets import WHISKERTRAIL
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services.api import Caller, GameService
from services.errors import ServiceError
from services.store.memory import MemoryStore

SEED = b"submit-paths"


class CountingStore(MemoryStore):
    """The embedded store, counting loads (a pure unit test may count calls)."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    async def load(self, game_id: str):  # type: ignore[no-untyped-def]
        self.loads += 1
        return await super().load(game_id)


async def new_game(service: GameService) -> tuple[str, list[Caller], GameState]:
    game = await service.create_game(
        pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2, seed=SEED.hex()), Caller()
    )
    callers = []
    for _ in range(2):
        joined = await service.join_game(pb.JoinGameRequest(game_id=game.game_id), Caller())
        callers.append(Caller(token=joined.token))
    return game.game_id, callers, GameState.new_game(WHISKERTRAIL, 2, SEED)


def submit(game_id: str, version: int, action: Action, request_id: str) -> pb.SubmitActionRequest:
    return pb.SubmitActionRequest(
        game_id=game_id,
        expected_version=version,
        request_id=request_id,
        action=convert.action_to_pb(action),
    )


async def play(
    service: GameService, game_id: str, callers: list[Caller], state: GameState, moves: int
) -> GameState:
    for n in range(moves):
        seat = state.to_act[0]
        action = state.legal_actions(seat)[0]
        request = submit(game_id, state.action_count, action, f"m{state.action_count}-{n}")
        await service.submit_action(request, callers[seat])
        state, _ = state.apply_action(seat, action)
    return state


async def test_a_move_at_the_cached_version_needs_no_load() -> None:
    store = CountingStore()
    service = GameService(store)
    game_id, callers, state = await new_game(service)
    await service.get_view(pb.GetViewRequest(game_id=game_id), callers[0])  # caches the game
    before = store.loads
    state = await play(service, game_id, callers, state, 6)
    assert store.loads == before  # six moves, no load
    items = await store.read_log(game_id, 0)
    assert [i.version for i in items] == list(range(1, 7))
    snapshot = await store.load(game_id)
    assert snapshot is not None
    view = await service.get_view(pb.GetViewRequest(game_id=game_id), callers[0])
    assert view.version == state.action_count == 6


async def test_a_stale_cache_answers_aborted_and_changes_nothing() -> None:
    store = MemoryStore()
    first, second = GameService(store), GameService(store)
    game_id, callers, state = await new_game(first)
    await second.get_view(pb.GetViewRequest(game_id=game_id), callers[0])  # second caches v0
    moved = await play(first, game_id, callers, state, 1)  # the game moves on elsewhere
    # a client that still believes in version 0 sends the (then legal) first move to
    # the replica whose cache is at version 0 too: stale, whatever the cache says
    seat = state.to_act[0]
    action = state.legal_actions(seat)[0]
    with pytest.raises(ServiceError) as caught:
        await second.submit_action(submit(game_id, 0, action, "late"), callers[seat])
    assert caught.value.code == grpc.StatusCode.ABORTED
    assert [i.version for i in await store.read_log(game_id, 0)] == [1]
    # and the up-to-date client goes through the same replica
    await play(second, game_id, callers, moved, 2)
    assert [i.version for i in await store.read_log(game_id, 0)] == [1, 2, 3]


async def test_an_illegal_move_on_a_stale_cache_is_stale_not_illegal() -> None:
    store = MemoryStore()
    first, second = GameService(store), GameService(store)
    game_id, callers, state = await new_game(first)
    await second.get_view(pb.GetViewRequest(game_id=game_id), callers[0])
    await play(first, game_id, callers, state, 1)
    other = 1 - state.to_act[0]  # not this seat's turn at version 0
    action = state.legal_actions(state.to_act[0])[0]
    with pytest.raises(ServiceError) as caught:
        await second.submit_action(submit(game_id, 0, action, "x"), callers[other])
    assert caught.value.reason == "STALE_VERSION"


async def test_a_repeated_request_id_returns_the_original_and_refuses_another_request() -> None:
    store = MemoryStore()
    service = GameService(store)
    game_id, callers, state = await new_game(service)
    seat = state.to_act[0]
    action = state.legal_actions(seat)[0]
    original = await service.submit_action(submit(game_id, 0, action, "once"), callers[seat])
    # the same request again (the game at a newer version now): the first answer
    repeated = await service.submit_action(submit(game_id, 0, action, "once"), callers[seat])
    assert repeated == original
    after, _ = state.apply_action(seat, action)
    assert after.to_act[0] == seat  # whiskertrail: the same seat plays on after drawing
    other_action = after.legal_actions(seat)[0]
    # another request under that id: refused, nothing applied
    with pytest.raises(ServiceError) as caught:
        await service.submit_action(submit(game_id, 1, other_action, "once"), callers[seat])
    assert caught.value.reason == "REQUEST_ID_REUSED"
    assert [i.version for i in await store.read_log(game_id, 0)] == [1]


async def test_an_answer_kept_without_events_is_repeated_with_the_events_of_the_log() -> None:
    """A Play act's answer (its result carries the version alone) is kept without the
    mover's events; a repeat of its request id, on any path, gets the answer a
    SubmitAction would have had, the events read back from the log entry."""
    from services.usecases.moves import submit_action

    answers = []
    for events in (True, False):
        store = MemoryStore()
        service = GameService(store)
        game_id, callers, state = await new_game(service)
        seat = state.to_act[0]
        action = state.legal_actions(seat)[0]
        request = submit(game_id, 0, action, "kept")
        first = await submit_action(service._ctx, request, callers[seat], events=events)
        assert bool(first.events) == events and first.version == 1
        repeated = await service.submit_action(request, callers[seat])
        answers.append(repeated)
        if events:
            assert repeated == first
    assert answers[0].events and answers[1] == answers[0]


async def test_a_token_from_another_game_is_refused_on_the_fast_path() -> None:
    store = MemoryStore()
    service = GameService(store)
    game_id, callers, state = await new_game(service)
    _, strangers, _ = await new_game(service)
    await service.get_view(pb.GetViewRequest(game_id=game_id), callers[0])
    seat = state.to_act[0]
    action = state.legal_actions(seat)[0]
    with pytest.raises(ServiceError) as caught:
        await service.submit_action(submit(game_id, 0, action, "s"), strangers[seat])
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert await store.read_log(game_id, 0) == []


async def test_naming_another_seat_is_refused_on_the_fast_path() -> None:
    store = MemoryStore()
    service = GameService(store)
    game_id, callers, state = await new_game(service)
    await service.get_view(pb.GetViewRequest(game_id=game_id), callers[0])
    seat = state.to_act[0]
    action = state.legal_actions(seat)[0]
    request = submit(game_id, 0, action, "n")
    request.seat = 1 - seat  # the mover's own token, naming the other seat
    with pytest.raises(ServiceError) as caught:
        await service.submit_action(request, callers[seat])
    assert caught.value.reason == "NOT_YOUR_SEAT"
    assert await store.read_log(game_id, 0) == []


def test_decoded_states_keep_the_rule_set_object_they_are_given() -> None:
    from services import codec

    state = GameState.new_game(WHISKERTRAIL, 2, SEED)
    message = codec.state_to_pb(state, codec.stored_rules(WHISKERTRAIL))
    decoded = codec.state_from_pb(message, WHISKERTRAIL)
    assert decoded.rules is WHISKERTRAIL
    assert decoded == state
    assert codec.state_from_pb(message) == state  # and without: from the message's own


async def test_a_retry_of_a_landed_move_gets_its_answer_even_over_the_rate_limit() -> None:
    from services.api import ServiceConfig

    store = MemoryStore()
    first = GameService(store)
    # a replica whose buckets are empty: every new move it is sent is over the limit
    second = GameService(store, ServiceConfig(rate_per_second=0.001, rate_burst=0))
    game_id, callers, state = await new_game(first)
    await second.get_view(pb.GetViewRequest(game_id=game_id), callers[0])  # second: v0
    seat = state.to_act[0]
    action = state.legal_actions(seat)[0]
    original = await first.submit_action(submit(game_id, 0, action, "r"), callers[seat])
    # the retry reaches the replica whose cache is stale (its fast path applies)
    again = await second.submit_action(submit(game_id, 0, action, "r"), callers[seat])
    assert again == original
    after, _ = state.apply_action(seat, action)
    with pytest.raises(ServiceError) as limited:  # a new move is limited, as before
        await second.submit_action(
            submit(game_id, 1, after.legal_actions(seat)[0], "new"), callers[seat]
        )
    assert limited.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_load_at_the_remembered_revision_reuses_it_and_a_newer_one_decodes() -> None:
    """Each process remembers the newest revision of a game: a load that finds the
    store there returns it as it is; one that finds another replica's newer write
    decodes that, and a move on it is then the remembered one."""
    store = MemoryStore()
    first, second = GameService(store), GameService(store)
    game_id, callers, state = await new_game(first)
    remembered = await second.load(game_id)
    assert await second.load(game_id) is remembered  # the store has not moved
    state = await play(first, game_id, callers, state, 3)  # another replica moves
    fresh = await second.load(game_id)
    assert fresh is not remembered
    assert fresh.revision > remembered.revision
    assert fresh.state == state
    assert await second.load(game_id) is fresh
    state = await play(second, game_id, callers, state, 1)  # this one's own move
    after_move = await second.load(game_id)
    assert after_move.revision == fresh.revision + 1
    assert after_move.state == state
    assert await second.load(game_id) is after_move


class CallCountingStore(MemoryStore):
    """The embedded store, counting its calls by name."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {}

    def __getattribute__(self, name: str):  # type: ignore[no-untyped-def]
        if name in ("load", "commit", "take", "idempotent_response"):
            calls = object.__getattribute__(self, "calls")
            calls[name] = calls.get(name, 0) + 1
        return object.__getattribute__(self, name)


async def test_a_limited_move_on_the_cache_is_one_store_call_and_refused_changes_nothing() -> None:
    """On the cached game a move's act cell (its seat's) is taken by its commit itself:
    one store call per move, as without the limit.  Past the seat's burst the commit is
    refused by the cell, writes nothing, and the move is judged on a fresh load:
    RATE_LIMITED, as ever."""
    from services.api import ServiceConfig

    store = CallCountingStore()
    service = GameService(store, ServiceConfig(rate_per_second=0.001, rate_burst=1))
    game_id, callers, state = await new_game(service)
    await service.get_view(pb.GetViewRequest(game_id=game_id), callers[0])  # caches the game
    moved: set[int] = set()
    while state.to_act[0] not in moved:  # each seat's first move: admitted
        seat = state.to_act[0]
        store.calls.clear()
        state = await play(service, game_id, callers, state, 1)
        assert store.calls == {"commit": 1}
        moved.add(seat)
    seat = state.to_act[0]  # its second move: over its burst
    logged = await store.read_log(game_id, 0)
    with pytest.raises(ServiceError) as limited:
        await play(service, game_id, callers, state, 1)
    assert limited.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert limited.value.reason == "RATE_LIMITED" and limited.value.retry_after
    assert await store.read_log(game_id, 0) == logged
    snapshot = await store.load(game_id)
    assert snapshot is not None and snapshot.revision == 3 + len(logged)  # (create, 2 joins)


class GatedStore(MemoryStore):
    """The embedded store whose loads wait for ``gate`` and commits for
    ``commit_gate``, counting the loads (a pure unit test may hold a fake's calls back)."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0
        self.gate = asyncio.Event()
        self.gate.set()
        self.commit_gate = asyncio.Event()
        self.commit_gate.set()

    async def load(self, game_id: str):  # type: ignore[no-untyped-def]
        self.loads += 1
        await self.gate.wait()
        return await super().load(game_id)

    async def commit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        await self.commit_gate.wait()
        return await super().commit(*args, **kwargs)


async def test_sessions_woken_for_one_committed_version_share_one_store_read() -> None:
    """Every session of a table wakes for the same log entry: those whose process did
    not write it share one read of the store, and the answer is the game at that
    version or later; a later version is read anew."""
    store = GatedStore()
    writer, reader = GameService(store), GameService(store)
    game_id, callers, state = await new_game(writer)
    state = await play(writer, game_id, callers, state, 2)
    ctx = reader._ctx
    store.loads, store.gate = 0, asyncio.Event()
    waiting = [asyncio.ensure_future(ctx.load_committed(game_id, 2)) for _ in range(4)]
    await asyncio.sleep(0)
    waiting[0].cancel()  # (a session ended meanwhile: the others' read goes on)
    store.gate.set()
    results = await asyncio.gather(*waiting[1:])
    assert store.loads == 1
    assert all(r is results[0] for r in results) and results[0].state == state
    state = await play(writer, game_id, callers, state, 1)
    assert (await ctx.load_committed(game_id, 3)).state == state
    assert store.loads == 2


async def test_a_session_of_the_process_that_commits_waits_for_its_answer_not_the_store() -> None:
    """The log reader often has a move's entry before its commit's answer is back: a
    session of that process waits for the answer (and the game it remembers then)
    instead of reading the store; a commit that wrote nothing leaves it to the store."""
    store = GatedStore()
    service = GameService(store)
    game_id, callers, state = await new_game(service)
    ctx = service._ctx
    await service.get_view(pb.GetViewRequest(game_id=game_id), callers[0])  # cached
    store.loads = 0
    store.commit_gate.clear()
    seat = state.to_act[0]
    action = state.legal_actions(seat)[0]
    move = asyncio.ensure_future(
        service.submit_action(submit(game_id, 0, action, "m0"), callers[seat])
    )
    for _ in range(20):  # until the commit is in flight
        await asyncio.sleep(0)
    session = asyncio.ensure_future(ctx.load_committed(game_id, 1))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not session.done()  # waiting for the commit's answer, not reading
    store.commit_gate.set()
    assert (await move).version == 1
    assert (await session).version == 1 and store.loads == 0
    with ctx.committing(game_id):  # (a commit that wrote nothing)
        session = asyncio.ensure_future(ctx.load_committed(game_id, 2))
        await asyncio.sleep(0)
        assert not session.done()
    assert (await session).version == 1 and store.loads == 1
