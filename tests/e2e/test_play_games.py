"""Whole games through play sessions (the Play stream and the SDK's PlaySession) end to
end: every seat of a game on one session (both rule sets, both stores, a house-bot seat
beside people's), every message checked against the engine (tests/e2e/support.py:
Mirror) and for secrecy; a seat's ``play()`` against the server's house-bot pool; a
finished session leaves no task behind.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from clients.sdk import CallError, Prompt, Seat
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.conftest import StartServer
from tests.e2e.play_support import all_events, choose, mirror_from_log
from tests.e2e.support import OPERATOR_TOKEN, Env, Mirror, check_clean, check_events, until
from tests.e2e.test_house_bots import in_process_pool


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
    # every move of a person answered a prompt of its seat at its version (a claim
    # answer: at a version since its window opened, the seat prompted once a window)
    prompted = {(p.seat.seat, p.version) for p in prompts}
    for version, (seat, _) in enumerate(mirror.actions):
        if seat < seats - 1:
            opened = version - mirror.states[version].claim_answers_given
            answered = any((seat, v) in prompted for v in range(opened, version + 1))
            assert answered, f"v{version + 1} without a prompt of seat {seat}"
    per_move = session.sent / mirror.version
    print(f"{rules}: {session.sent} messages sent, {session.received} received for "
          f"{mirror.version} moves: {per_move:.2f} sent per move")  # fmt: skip
    assert per_move <= 1.5, per_move


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
