"""services.codec: a move rewrites only what it changed of the stored state, and
the result is the message a whole rewrite gives (hypothesis over random games)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.game import GameState
from engine.melds import meld_to_dict
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from services import codec
from services.api import GameService
from services.store.base import Write
from services.store.memory import MemoryStore
from tests.support import CUSTOM_MAYI, CUSTOM_MIX
from tests.support.wire import event_from_stored, event_plain

ALL_RULES = (WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(ALL_RULES),
    data=st.data(),
    rng_seed=st.integers(0, 2**32 - 1),
    arranged=st.booleans(),
)
def test_updating_the_stored_state_move_by_move_equals_writing_it_whole(
    rules: RuleSet, data: st.DataObject, rng_seed: int, arranged: bool
) -> None:
    seats = data.draw(st.integers(rules.min_players, rules.max_players))
    rng = random.Random(rng_seed)
    orders = None
    if arranged:  # an explicit deck for round 1 (CreateGameFromDeck)
        deck = list(range(rules.deck_size))
        rng.shuffle(deck)
        orders = {1: deck}
    state = GameState.new_game(rules, seats, b"codec", stock_orders=orders)
    rules_message = convert.rules_to_pb(state.rules)
    # one message carried through the game, as the service carries its record
    carried = codec.state_to_pb(state, rules_message)
    for _ in range(data.draw(st.integers(1, 400))):
        if state.is_terminal():
            break
        seat = state.to_act[0]
        after, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        # from a fresh copy of the whole message, and along the carried one
        fresh = spb.EngineState()
        fresh.CopyFrom(codec.state_to_pb(state, rules_message))
        codec.update_state_pb(fresh, state, after)
        codec.update_state_pb(carried, state, after)
        whole = codec.state_to_pb(after, rules_message)
        assert fresh == whole
        assert carried == whole
        assert codec.state_from_pb(carried, state.rules) == after
        state = after


def test_the_field_table_is_the_stored_message_and_the_state_s_plain_form() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"codec")
    assert set(spb.EngineState.DESCRIPTOR.fields_by_name) == codec.STATE_FIELDS
    assert set(state.to_dict()) == codec.STATE_FIELDS


def test_a_moves_rewrite_is_compiled_from_every_field_of_the_table() -> None:
    """update_state_pb is written from _FIELDS: it names every field of the message."""
    names = set(codec.update_state_pb.__code__.co_names)
    assert names >= codec.STATE_FIELDS


def test_an_unchanged_field_is_not_rewritten_and_a_changed_one_is() -> None:
    """The rewrite follows the engine's sharing: a field whose value is the same
    object is left alone (a stale message shows it), any other field is written."""
    state = GameState.new_game(WHISKERTRAIL, 2, b"codec")
    seat = state.to_act[0]
    after, _ = state.apply_action(seat, state.legal_actions(seat)[0])
    assert after.discards is state.discards or after.stock is state.stock
    message = codec.state_to_pb(state, convert.rules_to_pb(WHISKERTRAIL))
    del message.discards[:]  # a stale field the update has no reason to touch
    del message.stock[:]
    codec.update_state_pb(message, state, after)
    changed_stock = after.stock is not state.stock
    assert list(message.stock) == ([c.id for c in after.stock] if changed_stock else [])
    changed_discards = after.discards is not state.discards
    assert list(message.discards) == ([c.id for c in after.discards] if changed_discards else [])


# Records and log entries the code of 6eeb4ba (before the service's renovation) stored:
# random games of every kind of rule set, some from explicit decks, with deadlines
# and a house bot, each record at a few versions and the log up to the last.
STORED = Path(__file__).parents[1] / "data" / "stored-games-6eeb4ba.jsonl"


def stored_games() -> list[dict[str, Any]]:
    return [json.loads(line) for line in STORED.read_text().splitlines()]


@pytest.mark.parametrize("game", stored_games(), ids=lambda g: g["records"][0]["record"][:12])
async def test_what_the_old_code_stored_loads_and_is_written_byte_for_byte_alike(
    game: dict[str, Any],
) -> None:
    records = [spb.StoredGame.FromString(bytes.fromhex(r["record"])) for r in game["records"]]
    entries = [spb.LogEntry.FromString(bytes.fromhex(e)) for e in game["log"]]
    assert [e.version for e in entries] == list(range(1, len(entries) + 1))
    seats = len(records[-1].seats)
    for entry in entries:
        for stored in entry.events:
            event = event_from_stored(stored)  # every stored event still reads
            for viewer in [*range(seats), None]:  # and is sent as its typed message
                sent = codec.stored_event_to_pb(stored, viewer, entry.version)
                assert event_plain(sent, viewer) == event.for_seat(viewer)
    states = []
    for record, item in zip(records, game["records"], strict=True):
        state = codec.state_from_pb(record.state)
        assert state == GameState.from_dict({**item["state"], "rules": state.rules})
        # a whole write of that state is the stored message, byte for byte
        written = codec.state_to_pb(state, record.state.rules)
        assert written.SerializeToString() == record.state.SerializeToString()
        states.append(state)
    # and the moves of the log, written move by move, end in the next stored message
    for (record, state), later in zip(zip(records, states, strict=True), records[1:], strict=False):
        carried = spb.EngineState()
        carried.CopyFrom(record.state)
        for entry in entries[state.action_count : codec.state_from_pb(later.state).action_count]:
            after, _ = state.apply_action(entry.seat, convert.action_from_pb(entry.action))
            codec.update_state_pb(carried, state, after)
            state = after
        assert carried.SerializeToString() == later.state.SerializeToString()
    # the service loads the newest record and plays on from it
    store = MemoryStore()
    newest = records[-1]
    await store.create(newest.game_id, Write(record=newest.SerializeToString()))
    service = GameService(store)
    loaded = await service.load(newest.game_id)
    assert loaded.state == states[-1]
    assert [s.bot for s in loaded.record.seats] == [s.bot for s in newest.seats]


@pytest.mark.parametrize("rules", [WHISKERTRAIL, CONTRACT])
def test_a_stored_meld_reads_back_as_the_engines_stored_form(rules: RuleSet) -> None:
    """One stored meld form: write_meld's message reads back as meld_to_dict wrote it."""
    rng = random.Random(2)
    seen = 0
    for game in range(8):
        state = GameState.new_game(rules, rules.min_players, f"melds/{game}".encode())
        while not state.is_terminal() and seen < 60:
            for meld in state.table:
                message = spb.StoredMeld()
                codec.write_meld(message, meld)
                assert codec.read_meld(message) == meld_to_dict(meld)
                seen += 1
            seat = state.to_act[0]
            state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert seen >= 60
