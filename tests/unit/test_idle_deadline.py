"""The idle deadline of a record (services/usecases/records.py): never before its whole
limit, at most a 64th of it later, the same across a busy game's moves (so its
deadline index entry is not rewritten on every move), and the earlier of it and a
running turn deadline is what the deadline index holds."""

from __future__ import annotations

from engine.game import GameState
from engine.rulesets import WHISKERTRAIL
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.usecases.records import (
    IDLE_STEPS,
    IdleLimits,
    Loaded,
    idle_deadline,
    indexed_deadline,
    store_write,
)

LIMITS = IdleLimits(abandon_after=3 * 3600.0, unjoined_after=1800.0)
NOW = 1_750_000_000.123


def record_of(state: GameState, joined: int, turn_seconds: int = 0) -> spb.StoredGame:
    return spb.StoredGame(
        game_id="g",
        state=codec.state_to_pb(state),
        seats=[spb.StoredSeat(joined=s < joined) for s in range(state.seats)],
        deadlines=pb.Deadlines(turn_seconds=turn_seconds),
    )


def test_never_before_the_limit_and_at_most_a_step_after() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"idle")
    for joined, limit in ((2, LIMITS.abandon_after), (1, LIMITS.unjoined_after)):
        record = record_of(state, joined)
        for now in (NOW, NOW + 0.5, NOW + 77.7, NOW + limit):
            deadline = idle_deadline(record, state, LIMITS, now)
            assert now + limit <= deadline < now + limit + limit / IDLE_STEPS + 1e-6


def test_over_or_zero_limits_have_none() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"idle")
    assert idle_deadline(record_of(state, 2), state, IdleLimits(0, 0), NOW) == 0.0
    over, _ = state.abandon()
    assert idle_deadline(record_of(over, 2), over, LIMITS, NOW) == 0.0


def test_a_busy_game_rewrites_its_index_entry_about_once_a_step() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"busy")
    record = record_of(state, 2)
    store_write(None, record, state, idle=LIMITS, now=NOW)
    before = Loaded(1, record, state)
    changed = 0
    moves = 2000  # one a second: 2000 s, under a fifth of the 3 hours
    for second in range(1, moves + 1):
        seat = state.to_act[0]
        after, _ = state.apply_action(seat, state.legal_actions(seat)[0])
        if after.is_terminal():
            break
        fresh = spb.StoredGame()
        fresh.CopyFrom(before.record)
        codec.update_state_pb(fresh.state, state, after)
        write = store_write(before, fresh, after, idle=LIMITS, now=NOW + second)
        changed += write.deadline_changed
        assert write.deadline == fresh.idle_deadline_unix
        before, state = Loaded(before.revision + 1, fresh, after), after
    step = LIMITS.abandon_after / IDLE_STEPS
    assert 0 < changed <= moves / step + 1


def test_the_index_holds_the_earlier_deadline() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"idle")
    record = record_of(state, 2, turn_seconds=30)
    record.deadline_unix = NOW + 30
    write = store_write(None, record, state, idle=LIMITS, now=NOW)
    assert write.deadline == NOW + 30 == indexed_deadline(record)
    assert record.idle_deadline_unix >= NOW + LIMITS.abandon_after
    record.deadline_unix = 0.0
    assert indexed_deadline(record) == record.idle_deadline_unix
    record.idle_deadline_unix = 0.0
    assert indexed_deadline(record) is None


def test_a_default_action_keeps_the_idle_deadline() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"idle")
    record = record_of(state, 2, turn_seconds=30)
    store_write(None, record, state, idle=LIMITS, now=NOW)
    stamped = record.idle_deadline_unix
    seat = state.to_act[0]
    after, _ = state.apply_action(seat, state.legal_actions(seat)[0])
    fresh = spb.StoredGame()
    fresh.CopyFrom(record)
    later = NOW + 3600
    store_write(Loaded(1, record, state), fresh, after, idle=LIMITS, now=later, by_deadline=True)
    assert fresh.idle_deadline_unix == stamped
    store_write(Loaded(1, record, state), fresh, after, idle=LIMITS, now=later)
    assert fresh.idle_deadline_unix >= later + LIMITS.abandon_after
