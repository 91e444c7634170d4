"""glintwick.convert's fast view conversion agrees with protobuf's own JSON mapping."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import build_seat_view, build_spectator_view, seat_view, spectator_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb


def reference(view: dict[str, Any], game_id: str, version: int, deadline: float) -> pb.View:
    """The conversion by json_format.ParseDict, as it was done before ``fill``."""
    message = pb.View(game_id=game_id, version=version, deadline_unix=deadline)
    data = convert._kinds_to_pb(dict(view))
    claim = data.get("claim")
    if claim:
        for answer in claim.get("answers", []):
            answer.setdefault("answer", "")
    json_format.ParseDict(data, message)
    return message


@pytest.mark.parametrize(("rules", "seats"), [(WHISKERTRAIL, 3), (CONTRACT, 4)])
def test_views_convert_like_parse_dict(rules: RuleSet, seats: int) -> None:
    rng = random.Random(7)
    state = GameState.new_game(rules, seats, b"convert")
    checked = 0
    while not state.is_terminal() and checked < 400:
        views = [seat_view(state, s) for s in range(seats)] + [spectator_view(state)]
        for view in views:
            fast = convert.view_to_pb(view, "g1", state.action_count, 12.5)
            assert fast == reference(view, "g1", state.action_count, 12.5)
            assert convert.view_from_pb(fast) == convert.view_from_pb(
                reference(view, "g1", state.action_count, 12.5)
            )
            checked += 1
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert checked >= 100


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
    """The service converts the typed view; clients and tests the plain one: one message,
    on whole games (claim windows, melds on the table, the game's end)."""
    rng = random.Random(11)
    state = GameState.new_game(rules, seats, b"typed")
    seen = set()
    while True:
        typed = [build_seat_view(state, s) for s in range(seats)] + [build_spectator_view(state)]
        for view in typed:
            plain = view.to_dict()
            message = convert.view_to_pb(view, "g1", state.action_count, 3.5)
            assert message == convert.view_to_pb(plain, "g1", state.action_count, 3.5)
        seen.add(state.phase.value)
        if state.is_terminal():
            break
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert seen == phases


def test_fill_rejects_unknown_fields_and_takes_enum_names() -> None:
    message = pb.Meld()
    convert.fill(message, {"kind": "MELD_KIND_RUN", "rank": 3, "cards": [{"id": 5}]})
    assert message.kind == pb.MELD_KIND_RUN and message.cards[0].id == 5
    with pytest.raises(KeyError):
        convert.fill(pb.Meld(), {"no_such_field": 1})


def test_message_to_plain_is_message_to_dict() -> None:
    rng = random.Random(3)
    state = GameState.new_game(CONTRACT, 4, b"plain")
    messages: list[Any] = [convert.rules_to_pb(CONTRACT), convert.rules_to_pb(WHISKERTRAIL)]
    messages.append(pb.CreateGameRequest(seats=4, bots={1: "greedy", 3: "strong"}))
    for _ in range(120):
        messages.append(convert.view_to_pb(seat_view(state, 0), "g", state.action_count, 0.0))
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    for message in messages:
        expected = json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        assert convert.message_to_plain(message) == expected


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
            stored = codec.stored_event(event)
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


@pytest.mark.parametrize(("rules", "seats"), [(WHISKERTRAIL, 2), (CONTRACT, 4)])
def test_view_from_pb_is_message_to_dict_with_the_engines_kind_names(
    rules: RuleSet, seats: int
) -> None:
    """One pass (enum names replaced as read) gives what MessageToDict followed by a
    renaming pass gave, on views with melds on the table."""
    rng = random.Random(7)
    with_melds = 0
    for game in range(6):
        state = GameState.new_game(rules, seats, f"kinds/{game}".encode())
        while not state.is_terminal() and with_melds < 40:
            message = convert.view_to_pb(seat_view(state, 0), "g", state.action_count, 0.0)
            expected = convert._kinds_from_pb(
                json_format.MessageToDict(
                    message,
                    preserving_proto_field_name=True,
                    always_print_fields_with_no_presence=True,
                )
            )
            assert convert.view_from_pb(message) == expected
            with_melds += bool(state.table)
            seat = state.to_act[0]
            state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert with_melds >= 40  # the kinds were renamed on real melds
