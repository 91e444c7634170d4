"""glintwick.convert: views and events written from the engine's values are the messages
protobuf's own JSON mapping gives for the engine's plain forms, and read back unchanged."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from hypothesis import assume, given
from hypothesis import strategies as st

from clients.bots.base import Situation
from clients.bots.greedy import GreedyBot
from clients.bots.random_bot import RandomBot
from engine.actions import Draw, DrawSource
from engine.events import Event, EventType
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import build_seat_view, build_spectator_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.support import CUSTOM_MAYI, CUSTOM_MIX
from tests.support.wire import (
    ABSENT_WHEN_NONE,
    SECRET_FIELDS,
    event_plain,
    stored_event,
    view_message,
)


@pytest.mark.parametrize(
    ("rules", "seats", "phases"),
    [
        (WHISKERTRAIL, 3, {"draw", "play", "game_over"}),
        (CONTRACT, 4, {"draw", "play", "claim", "game_over"}),
    ],
)
def test_a_typed_view_converts_to_its_plain_forms_message(
    rules: RuleSet, seats: int, phases: set[str]
) -> None:
    """The service writes the typed view field by field: the message protobuf's JSON
    mapping gives for its plain form, on whole games (claim windows, melds on the
    table, the game's end), for every seat and a spectator."""
    rng = random.Random(11)
    state = GameState.new_game(rules, seats, b"typed")
    seen = set()
    checked = 0
    while True:
        typed = [build_seat_view(state, s) for s in range(seats)] + [build_spectator_view(state)]
        for view in typed:
            message = convert.view_to_pb(view, "g1", state.action_count, 3.5)
            assert message == view_message(view.to_dict(), "g1", state.action_count, 3.5)
            checked += 1
        seen.add(state.phase.value)
        if state.is_terminal():
            break
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert seen == phases
    assert checked >= 100


@pytest.mark.parametrize(("rules", "seats"), [(WHISKERTRAIL, 2), (CONTRACT, 4)])
def test_events_from_the_log_equal_events_made_fresh(rules: RuleSet, seats: int) -> None:
    """A move's response is built from its stored events: each seat's (and a
    spectator's) redaction must be what converting the engine event gives."""
    from services import codec

    rng = random.Random(11)
    state = GameState.new_game(rules, seats, b"events")
    compared = 0
    while not state.is_terminal() and compared < 3000:
        seat = state.to_act[0]
        state, events = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        for event in events:
            stored = stored_event(event)
            for viewer in [*range(seats), None]:
                fresh = convert.event_to_pb(event, viewer, state.action_count)
                assert codec.stored_event_to_pb(stored, viewer, state.action_count) == fresh
                compared += 1
    assert compared > 500


# JSON-shaped payloads as the engine's events hold them: seat-keyed mappings, tuples
_SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=6)
_PAYLOADS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5) | st.integers(0, 5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _library_struct(values: dict[Any, Any]) -> Struct:
    """What fill_struct replaced: keys made strings and tuples lists, then update()."""

    def jsonable(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): jsonable(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [jsonable(v) for v in value]
        return value

    struct = Struct()
    struct.update(jsonable(values))
    return struct


@given(st.dictionaries(st.text(max_size=5) | st.integers(0, 5), _PAYLOADS, max_size=5))
def test_fill_struct_is_the_librarys_update(values: dict[Any, Any]) -> None:
    # 1 and "1" name one field: which wins is not a property of either
    assume(len({str(k) for k in values}) == len(values))
    struct = Struct()
    convert.fill_struct(struct, values)
    assert struct == _library_struct(values)
    assert struct.SerializeToString(deterministic=True) == _library_struct(
        values
    ).SerializeToString(deterministic=True)


def test_fill_struct_refuses_what_a_struct_cannot_hold() -> None:
    with pytest.raises(TypeError, match="set"):
        convert.fill_struct(Struct(), {"cards": {1, 2}})


# ------------------------------------------------------------------ typed events


def test_every_event_type_has_its_payload_case_with_the_keys_the_engine_writes() -> None:
    """Event.payload has one case per EventType, named as the type, whose message has
    exactly the keys the engine's events of that type have (public and secret); the
    secret keys and the public ones left out when they have no value are those the
    tests read messages back by (tests/support/wire.py)."""
    assert set(convert.EVENT_CASES) == {str(t) for t in EventType}
    public: dict[str, set[str]] = defaultdict(set)
    always: dict[str, set[str]] = {}
    secret: dict[str, set[str]] = defaultdict(set)
    for event, _, _ in _played_events():
        public[event.type] |= set(event.public)
        always[event.type] = always.get(event.type, set(event.public)) & set(event.public)
        for part in event.secret.values():
            secret[event.type] |= set(part)
    assert set(public) == set(convert.EVENT_CASES)
    for kind, case in convert.EVENT_CASES.items():
        message = case.message_type
        assert message is not None
        assert {f.name for f in message.fields} == public[kind] | secret[kind], kind
        assert secret[kind] == SECRET_FIELDS.get(kind, set()), kind
        assert public[kind] - always[kind] == ABSENT_WHEN_NONE.get(kind, set()), kind


def _played_events() -> Iterator[tuple[Event, int, int]]:
    """Every event of whole games (random and greedy play, presets and custom rule
    sets with claims and joker swaps), with the version it has and the seat count;
    and the end of each game abandoned at its 20th version instead."""
    for rules in (WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI):
        for game, player in enumerate((RandomBot(1), GreedyBot(1))):
            rng = random.Random(game)
            seats = rules.max_players if game % 2 else rules.min_players
            state, events = GameState.new_game_with_events(rules, seats, f"pb/{game}".encode())
            player.setup(rules, 0)
            abandoned: list[Event] = []
            while True:
                for event in events:
                    yield event, state.action_count, seats
                if state.is_terminal():
                    break
                if state.action_count == 20:
                    abandoned = state.abandon()[1]
                seat = state.to_act[0]
                action = player.choose(
                    Situation.from_state(state, seat), state.legal_actions(seat), rng
                )
                state, events = state.apply_action(seat, action)
            for event in abandoned:
                yield event, 21, seats


def test_every_played_payload_round_trips_through_its_typed_message() -> None:
    """Every event a game produces, as each seat and a spectator see it, goes into its
    typed message and comes back as the engine shows it (Event.for_seat), through the
    stored form too, and through protobuf's JSON mapping (what HTTP clients get)."""
    from services import codec

    seen: set[str] = set()
    for event, version, seats in _played_events():
        stored = stored_event(event)
        for viewer in [*range(seats), None]:
            message = convert.event_to_pb(event, viewer, version)
            assert message.WhichOneof("payload") == message.type == event.type
            assert event_plain(message, viewer) == event.for_seat(viewer)
            assert codec.stored_event_to_pb(stored, viewer, version) == message
            if viewer == event.seat or viewer is None:  # (the slow part: not for all)
                as_json = json_format.MessageToJson(message)
                assert json_format.Parse(as_json, pb.Event()) == message
        seen.add(event.type)
    assert seen == {str(t) for t in EventType}


def test_a_secret_is_only_in_its_seats_message() -> None:
    state, events = GameState.new_game_with_events(CONTRACT, 4, b"secret")
    dealt = events[0]
    assert dealt.type == EventType.ROUND_STARTED
    for seat in range(4):
        hand = convert.event_to_pb(dealt, seat, 0).round_started.hand
        assert [c.id for c in hand] == [c.id for c in state.hands[seat]]
    assert not convert.event_to_pb(dealt, None, 0).round_started.hand
    seat = state.to_act[0]
    after, drew = state.apply_action(seat, Draw(DrawSource.STOCK))
    mine = convert.event_to_pb(drew[0], seat, 1).drew
    drawn = {c.id for c in after.hands[seat]} - {c.id for c in state.hands[seat]}
    assert mine.HasField("card") and {mine.card.id} == drawn
    assert mine.source == pb.DRAW_SOURCE_STOCK and mine.stock_size == len(after.stock)
    for viewer in (None, (seat + 1) % 4):
        assert not convert.event_to_pb(drew[0], viewer, 1).drew.HasField("card")


@pytest.mark.parametrize(
    ("text", "seed"), [("", b""), ("00ff", b"\x00\xff"), ("ab" * 64, b"\xab" * 64)]
)
def test_a_hex_seed_reads_as_its_bytes(text: str, seed: bytes) -> None:
    assert convert.seed_from_hex(text) == seed
    assert convert.seed_to_hex(seed) == text == convert.seed_to_hex(text)


@pytest.mark.parametrize("text", ["ab" * 65, "abc", "ABCD", "0x12", "zz", "ab cd", "é1"])
def test_a_seed_that_is_not_lowercase_hex_of_whole_bytes_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="seed"):
        convert.seed_from_hex(text)
