"""An abandoned game (docs/DECISIONS.md, "Abandoned games"): over where it stands, the
round in play unscored, no winner, one event, in every stored form and view."""

from __future__ import annotations

import dataclasses
import random

import pytest
from google.protobuf import json_format

from engine.actions import Draw
from engine.errors import IllegalActionError, InvalidActionError, Reason
from engine.events import GAME_ENDINGS, EventType
from engine.game import GameState, Phase
from engine.rulesets import CONTRACT, WHISKERTRAIL
from engine.views import build_seat_view, seat_view, spectator_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services import codec
from tests.support.wire import event_plain

# rounds of four turns: a random game soon has scores
QUICK = dataclasses.replace(CONTRACT, turn_cap=4)


def _play(state: GameState, until_round: int, rng: random.Random) -> GameState:
    """Random legal moves until round ``until_round`` (or the game's end)."""
    for _ in range(10_000):
        if state.is_terminal() or state.round_number >= until_round:
            return state
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    raise AssertionError("no end")


def _mid_game() -> GameState:
    """A game in its second round, with the first round's scores."""
    final = _play(GameState.new_game(QUICK, 4, b"abandon-me"), 2, random.Random(5))
    assert final.round_number == 2 and any(final.scores) and not final.is_terminal()
    return final


def test_abandon_ends_the_game_where_it_stands_without_a_winner() -> None:
    state = _mid_game()
    final, events = state.abandon()
    assert final.phase is Phase.GAME_OVER and final.is_terminal() and final.abandoned
    assert final.to_act == () and final.winners() == ()
    assert final.action_count == state.action_count + 1
    # the round in play is not scored: the hands, stock and table stay as they were
    assert final.scores == state.scores and final.hands == state.hands
    assert final.round_number == state.round_number and final.table == state.table
    assert [e.type for e in events] == [EventType.GAME_ABANDONED]
    assert events[0].type in GAME_ENDINGS and events[0].seat is None
    assert events[0].public == {
        "round": 2,
        "scores": list(state.scores),
        "seed": state.seed.hex(),
    }
    assert not state.abandoned  # (immutable)


def test_an_abandoned_game_takes_no_move_and_is_not_abandoned_twice() -> None:
    final, _ = GameState.new_game(WHISKERTRAIL, 2, b"x").abandon()
    with pytest.raises(IllegalActionError) as refused:
        final.apply_action(final.current, Draw())
    assert refused.value.reason is Reason.GAME_OVER
    with pytest.raises(IllegalActionError) as again:
        final.abandon()
    assert again.value.reason is Reason.GAME_OVER
    assert final.legal_actions(0) == []


def test_a_game_over_by_its_last_round_cannot_be_abandoned() -> None:
    over = _play(GameState.new_game(QUICK, 4, b"whole"), 99, random.Random(1))
    assert over.is_terminal() and not over.abandoned and over.winners()
    with pytest.raises(IllegalActionError):
        over.abandon()


def test_views_show_the_abandoned_end() -> None:
    final, _ = _mid_game().abandon()
    for view in (spectator_view(final), seat_view(final, 1)):
        assert view["game_over"] and view["abandoned"] and view["winners"] == []
        assert view["phase"] == "game_over" and view["seed"] == final.seed.hex()
        assert view["to_act"] == []
    message = convert.view_to_pb(build_seat_view(final, 1), "g", final.action_count, 0.0)
    assert message.abandoned and message.game_over and list(message.winners) == []
    as_json = json_format.MessageToDict(message, preserving_proto_field_name=True)
    assert as_json["abandoned"] is True
    playing = spectator_view(_mid_game())
    assert playing["abandoned"] is False and not playing["game_over"]


def test_the_stored_forms_keep_the_abandoned_end() -> None:
    state = _mid_game()
    final, _ = state.abandon()
    assert GameState.from_dict(final.to_dict()) == final
    assert codec.state_from_pb(codec.state_to_pb(final)) == final
    message = codec.state_to_pb(state)
    codec.update_state_pb(message, state, final)  # a move's rewrite of the stored state
    assert message == codec.state_to_pb(final) and message.abandoned
    # a record stored before the field existed reads as not abandoned
    old = final.to_dict()
    del old["abandoned"]
    assert not GameState.from_dict(old).abandoned


def test_only_a_game_over_may_be_stored_abandoned() -> None:
    data = dataclasses.replace(_mid_game(), abandoned=True).to_dict()
    with pytest.raises(InvalidActionError, match="abandoned"):
        GameState.from_dict(data)


def test_the_event_has_its_payload_message() -> None:
    _, events = _mid_game().abandon()
    message = convert.event_to_pb(events[0], None, 9)
    assert message.WhichOneof("payload") == "game_abandoned" == message.type
    assert not message.HasField("seat")
    assert list(message.game_abandoned.scores) == list(events[0].public["scores"])
    assert event_plain(message, None) == events[0].for_seat(None)
    assert isinstance(message.game_abandoned, pb.GameAbandonedEvent)
