"""The fault campaign's checks (loadtests/faults/) catch what they are there to catch: a
lost acknowledged move, a move applied twice or never answered, a stream that missed
or repeated an event."""

from __future__ import annotations

import grpc

from clients.sdk import GlintwickClient
from engine.game import GameState
from glintwick.storage.v1 import storage_pb2 as spb
from loadtests.faults.campaign import RULES, Clients
from loadtests.faults.checks import Verdict, check_game, check_stream
from loadtests.faults.figures import Game, recovery_seconds
from services.codec import state_to_pb
from services.store.base import LogItem, Write
from services.store.memory import MemoryStore


def test_a_stream_must_get_every_event_after_its_first_once() -> None:
    expected = [(1, 0), (1, 1), (2, 0), (3, 0)]
    assert check_stream([(1, 1), (2, 0), (3, 0)], expected)
    assert check_stream([(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (3, 0)], expected)
    assert not check_stream([(1, 0), (2, 0), (3, 0)], expected)  # missed one
    assert not check_stream([(1, 0), (1, 1), (1, 1), (2, 0), (3, 0)], expected)  # twice
    assert not check_stream([(1, 0), (1, 1), (2, 0)], expected)  # not to the end
    assert not check_stream([], expected)


def test_recovery_is_when_the_rate_is_back_to_half() -> None:
    before = [i / 10 for i in range(50)]  # 10 a second until 5 s
    after = [8 + i / 10 for i in range(20)]  # nothing from 5 s to 8 s
    assert recovery_seconds(before + after, 5.0, 10.0) == 3.0
    assert recovery_seconds(before, 5.0, 10.0) is None


async def _game(store: MemoryStore, request_ids: list[str]) -> None:
    state = GameState.new_game(RULES, 2, b"checks")
    record = spb.StoredGame(game_id="g", state=state_to_pb(state))
    await store.create("g", Write(record.SerializeToString()))
    for version, request_id in enumerate(request_ids, start=1):
        entry = spb.LogEntry(version=version, seat=0, request_id=request_id)
        write = Write(record.SerializeToString(), LogItem(version, entry.SerializeToString()))
        assert await store.commit("g", version, write)


async def test_the_game_check_counts_lost_doubled_and_unanswered_moves() -> None:
    store = MemoryStore()
    await _game(store, ["0:a", "0:b", "0:b", "0:d"])
    game = Game("g", ["t0", "t1"], by_play=False, acked={1: "0:a", 2: "0:b", 5: "0:e"})
    verdict = Verdict()
    client = GlintwickClient("127.0.0.1:1")  # (never called: the game is not over)
    try:
        await check_game(store, client, game, verdict)
    finally:
        await client.close()
    assert (verdict.lost, verdict.duplicated, verdict.unacknowledged) == (1, 1, 2)
    assert verdict.unfinished == 1 and not verdict.ok


async def test_only_the_core_s_internal_on_a_channel_the_drop_step_closed_is_its_own() -> None:
    """grpc-python's own INTERNAL on a call whose channel the campaign closed is the
    campaign's doing (retried as CHANNEL_CLOSED); any other INTERNAL still fails it."""
    clients = Clients(["127.0.0.1:1"], 2)
    try:
        kept = clients.of(1)
        closed = clients.of(0)
        await clients.replace(0)
        internal = grpc.StatusCode.INTERNAL
        assert clients.closed_under(closed, internal, "Internal error from Core")
        assert not clients.closed_under(kept, internal, "Internal error from Core")
        assert not clients.closed_under(None, internal, "Internal error from Core")
        assert not clients.closed_under(closed, internal, "internal error; it has been logged")
        assert not clients.closed_under(closed, grpc.StatusCode.UNKNOWN, "Internal error from Core")
    finally:
        await clients.close()
