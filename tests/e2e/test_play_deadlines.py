"""A turn deadline fires while the play sessions are idle: the default actions reach
every session (events, then a prompt for the seat whose turn comes next), on every store.
"""

from __future__ import annotations

import asyncio

import pytest

from clients.sdk import Prompt
from engine.rulesets import PRESETS
from glintwick.v1 import game_pb2 as pb
from tests.e2e.play_support import mirror_from_log
from tests.e2e.support import Env, Mirror


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
