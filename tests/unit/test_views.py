"""Seat and spectator views (engine/views.py) and event redaction (engine/events.py).

A seat sees its own hand and public information only: never another hand, the
stock's order or the seed while the game runs.  Events carry secrets per seat.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from clients.bots.base import Situation
from clients.bots.greedy import GreedyBot
from clients.bots.random_bot import RandomBot
from engine.actions import Claim, Discard, Draw, DrawSource, PassClaim
from engine.cards import Card, cards_from_codes
from engine.errors import InvalidActionError
from engine.events import Event, EventType
from engine.game import GameState, Phase, arrange_deck, claims
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.shuffle import commitment, round_seed
from engine.views import (
    PublicView,
    SeatView,
    build_seat_view,
    build_spectator_view,
    seat_view,
    spectator_view,
)
from glintwick import convert
from tests.support import CUSTOM_MAYI, CUSTOM_MIX
from tests.support.wire import event_plain

SEED = b"views-seed"


def card_ids(node: Any) -> list[int]:
    """Every card id rendered ({"id", "code"}) anywhere in a JSON-like tree."""
    found: list[int] = []
    if isinstance(node, Mapping):
        if "id" in node and "code" in node:
            found.append(int(node["id"]))
        for value in node.values():
            found.extend(card_ids(value))
    elif isinstance(node, list | tuple):
        for item in node:
            found.extend(card_ids(item))
    return found


def ids(cards: Iterable[Card]) -> set[int]:
    return {c.id for c in cards}


def secrets_of(state: GameState) -> list[str]:
    return [state.seed.hex(), round_seed(state.seed, state.round_number).hex()]


def assert_no_leak(payload: Any, allowed: set[int], state: GameState) -> None:
    text = json.dumps(payload)  # also: the payload is JSON-able
    leaked = set(card_ids(payload)) - allowed
    assert not leaked, f"leaks {sorted(leaked)}"
    if not state.is_terminal():
        for secret in secrets_of(state):
            assert secret not in text


def public_ids(state: GameState) -> set[int]:
    shown = {c.id for m in state.table for c in m.cards}
    if state.discards:
        shown.add(state.discards[-1].id)
    if state.taken_from_discard is not None:
        shown.add(state.taken_from_discard)
    return shown


def test_seat_view_shows_own_hand_only() -> None:
    state = GameState.new_game(WHISKERTRAIL, 3, SEED)
    for seat in range(3):
        view = seat_view(state, seat)
        assert [c["id"] for c in view["hand"]] == [c.id for c in state.hands[seat]]
        assert [c["code"] for c in view["hand"]] == [c.code for c in state.hands[seat]]
        assert_no_leak(view, public_ids(state) | ids(state.hands[seat]), state)
        others = set().union(*(ids(state.hands[s]) for s in range(3) if s != seat))
        assert not others & set(card_ids(view))
        assert not ids(state.stock) & set(card_ids(view))
        assert view["seat"] == seat and view["may_act"] == (seat == 0)
        assert [p["hand_size"] for p in view["players"]] == [10, 10, 10]
        assert view["stock_size"] == len(state.stock) and view["discard_size"] == 1
        assert view["discard_top"] == {"id": state.discards[-1].id, "code": state.discards[-1].code}
        assert view["phase"] == "draw" and view["current"] == 0 and view["to_act"] == [0]
        assert view["contract"]["name"] == "Lantern Gate"


def test_spectator_view_shows_no_hand() -> None:
    state = GameState.new_game(CONTRACT, 4, SEED)
    view = spectator_view(state)
    assert "hand" not in view
    assert card_ids(view) == []  # contract: no upcard, empty table
    assert_no_leak(view, set(), state)
    assert [p["hand_size"] for p in view["players"]] == [10] * 4


def test_views_reject_unknown_seats() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, SEED)
    with pytest.raises(InvalidActionError):
        seat_view(state, 2)


def test_views_show_the_claim_window_and_public_answers() -> None:
    hands = [["9D", "2C", "3C"], ["3H"], ["4H"], ["5H"]]
    codes = [c for h in hands for c in h]
    chosen = cards_from_codes(codes, 2, 3)
    state = GameState.new_game(CONTRACT, 4, SEED)
    data = state.to_dict()
    rest = [i for i in range(107) if i not in {c.id for c in chosen}]
    data["hands"] = [[c.id for c in chosen[0:3]], [chosen[3].id], [chosen[4].id], [chosen[5].id]]
    data["stock"] = rest
    data["discards"] = []
    data["phase"] = "play"
    state = GameState.from_dict(data)
    state = state.apply_action(0, Discard(chosen[0].id))[0]
    state = state.apply_action(2, Claim())[0]
    view = seat_view(state, 3)
    assert view["claim"]["card"]["code"] == "9D" and view["claim"]["discarder"] == 0
    assert view["claim"]["answers"] == [
        {"seat": 1, "answer": None},
        {"seat": 2, "answer": "claim"},
        {"seat": 3, "answer": None},
    ]
    assert view["to_act"] == [1, 3] and view["phase"] == "claim"
    typed = build_seat_view(state, 3).claim
    assert typed is not None and typed.card == chosen[0]
    assert [(a.seat, a.answer) for a in typed.answers] == [(1, None), (2, True), (3, None)]


@pytest.mark.parametrize(("rules", "seats"), [(WHISKERTRAIL, 2), (CONTRACT, 4)])
def test_typed_views_hold_the_engines_values(rules: RuleSet, seats: int) -> None:
    """The typed view holds the state's own values; its plain form is what the views
    always showed (the claim window as engine.game.claims renders it)."""
    rng = random.Random(4)
    state = GameState.new_game(rules, seats, SEED)
    while True:
        spectator = build_spectator_view(state)
        public = spectator_view(state)
        assert type(spectator) is PublicView and spectator.to_dict() == public
        assert spectator.table is state.table
        assert spectator.contract is rules.contracts[state.round_number - 1]
        claim = spectator.claim
        assert (claim.to_dict() if claim is not None else None) == claims.view(state)
        assert spectator.game_over is state.is_terminal()
        assert (spectator.seed is not None) is state.is_terminal()
        for seat in range(seats):
            view = build_seat_view(state, seat)
            assert isinstance(view, SeatView) and view.hand is state.hands[seat]
            plain = view.to_dict()
            assert plain == seat_view(state, seat)
            assert {k: v for k, v in plain.items() if k in public} == public
        if state.is_terminal():
            break
        seat = state.to_act[0]
        state, _ = state.apply_action(seat, rng.choice(state.legal_actions(seat)))


def test_round_started_gives_each_seat_its_own_hand() -> None:
    state, events = GameState.new_game_with_events(WHISKERTRAIL, 3, SEED)
    started = events[0]
    assert started.type == EventType.ROUND_STARTED
    assert started.public["commitment"] == commitment(round_seed(SEED, 1))
    for seat in range(3):
        mine = started.for_seat(seat)
        assert [c["id"] for c in mine["hand"]] == [c.id for c in state.hands[seat]]
        assert_no_leak(mine, ids(state.hands[seat]) | public_ids(state), state)
    spectator = started.for_seat(None)
    assert "hand" not in spectator
    assert set(card_ids(spectator)) == {state.discards[-1].id}  # the upcard


def test_drawn_card_is_secret_to_the_drawer() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, SEED)
    top = state.stock[0]
    nxt, events = state.apply_action(0, Draw(DrawSource.STOCK))
    drew = events[0]
    assert drew.for_seat(0)["card"] == {"id": top.id, "code": top.code}
    for viewer in (1, None):
        shown = drew.for_seat(viewer)
        assert "card" not in shown and top.id not in card_ids(shown)
    assert drew.for_seat(1)["stock_size"] == len(nxt.stock)
    # a card taken from the discard pile is public
    pile, events = state.apply_action(0, Draw(DrawSource.DISCARD))
    assert events[0].for_seat(None)["card"]["id"] == state.discards[-1].id
    assert spectator_view(pile)["taken_from_discard"]["id"] == state.discards[-1].id


def test_every_event_payload_has_its_typed_messages_shape() -> None:
    """The API's payload messages are the payloads' shape: every payload of whole games
    (random and greedy play, every rule set), as each seat and a spectator see it, goes
    into its type's message and reads back unchanged."""
    seen: set[str] = set()
    for rules in (WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI):
        for game, player in enumerate((RandomBot(1), GreedyBot(1), RandomBot(2))):
            rng = random.Random(game)
            seats = rules.max_players if game % 2 else rules.min_players
            seed = f"payloads/{game}".encode()
            state, events = GameState.new_game_with_events(rules, seats, seed)
            player.setup(rules, 0)
            while True:
                for event in events:
                    _check_payloads(event, seats)
                    seen.add(event.type)
                if state.is_terminal():
                    break
                if state.action_count == 20:  # (the game abandoned there instead)
                    for event in state.abandon()[1]:
                        _check_payloads(event, seats)
                        seen.add(event.type)
                seat = state.to_act[0]
                situation = Situation.from_state(state, seat)
                action = player.choose(situation, state.legal_actions(seat), rng)
                state, events = state.apply_action(seat, action)
    assert seen == {str(t) for t in EventType}


def _check_payloads(event: Event, seats: int) -> None:
    for viewer in [*range(seats), None]:
        message = convert.event_to_pb(event, viewer, 1)
        assert event_plain(message, viewer) == event.for_seat(viewer)


def test_claim_penalty_card_is_secret_to_the_winner() -> None:
    hands = [["9D", "2C"], ["3C", "4C"], ["5H", "6H"], ["7S", "8S"]]
    order = arrange_deck(CONTRACT, 4, 1, _full(hands))
    state = GameState.new_game(CONTRACT, 4, SEED, stock_orders={1: order})
    state = state.apply_action(0, Draw())[0]
    card = next(c for c in state.hands[0] if c.code == "9D")
    state = state.apply_action(0, Discard(card.id))[0]
    penalty = state.stock[0]
    state = state.apply_action(3, Claim())[0]
    state = state.apply_action(1, PassClaim())[0]
    state, events = state.apply_action(2, PassClaim())
    awarded = next(e for e in events if e.type == EventType.CLAIM_AWARDED)
    assert awarded.seat == 3
    assert awarded.for_seat(3)["penalty"] == [{"id": penalty.id, "code": penalty.code}]
    for viewer in (0, 1, 2, None):
        assert penalty.id not in card_ids(awarded.for_seat(viewer))
    assert penalty in state.hands[3] and card in state.hands[3]


def _full(hands: list[list[str]]) -> list[list[str]]:
    """Pad contract round-1 hands to 10 cards with distinct filler codes."""
    filler = iter([r + s for r in "TJQK" for s in "CDHS"] * 2)
    return [h + [next(filler) for _ in range(10 - len(h))] for h in hands]


def test_event_dict_round_trip() -> None:
    ev = Event("drew", 1, {"source": "stock"}, {1: {"card": {"id": 3, "code": "4C"}}})
    assert Event.from_dict(json.loads(json.dumps(ev.to_dict()))) == ev
    secret_card = ev.secret[1]["card"]
    assert ev.for_seat(1) == {"type": "drew", "seat": 1, "source": "stock", "card": secret_card}
    assert ev.for_seat(0) == {"type": "drew", "seat": 1, "source": "stock"}
    with pytest.raises(InvalidActionError):
        Event.from_dict({"seat": 1})


def test_random_game_never_leaks() -> None:
    """Every view and every redacted event of a random game shows only what the viewer
    may know (own hand, table, discards seen, cards taken publicly)."""
    rng = random.Random(5)
    for rules, seats in ((WHISKERTRAIL, 3), (CONTRACT, 4)):
        state, events = GameState.new_game_with_events(rules, seats, SEED)
        seen: set[int] = public_ids(state)
        for _ in range(400):
            for ev in events:
                for viewer in [None, *range(seats)]:
                    allowed = set(seen) | public_ids(state)
                    if viewer is not None:
                        allowed |= ids(state.hands[viewer])
                    assert_no_leak(ev.for_seat(viewer), allowed, state)
            for seat in range(seats):
                own = public_ids(state) | ids(state.hands[seat])
                assert_no_leak(seat_view(state, seat), own, state)
            assert_no_leak(spectator_view(state), public_ids(state), state)
            if state.is_terminal():
                break
            seat = rng.choice(state.to_act)
            before = state
            state, events = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
            if state.round_number != before.round_number:
                seen = set()
            # what was public before stays known (a discard taken by a claim, a laid card)
            seen |= public_ids(before) | public_ids(state)
            seen |= {c.id for c in before.discards}
            if state.round_number != before.round_number or state.phase is Phase.GAME_OVER:
                seen |= ids(before.hands[seat])  # it went out: its cards were shown


def test_views_carry_the_current_rounds_commitment_never_its_seed() -> None:
    state = GameState.new_game(WHISKERTRAIL, 2, b"commit-me")
    expected = commitment(round_seed(b"commit-me", 1))
    for view in (seat_view(state, 0), seat_view(state, 1), spectator_view(state)):
        assert view["commitment"] == expected
        text = json.dumps(view)
        assert round_seed(b"commit-me", 1).hex() not in text and b"commit-me".hex() not in text


@pytest.mark.parametrize(
    ("rules", "cap"),
    [(WHISKERTRAIL, 200), (CONTRACT, 200), (dataclasses.replace(CUSTOM_MIX, turn_cap=None), None)],
)
def test_a_view_shows_the_turn_cap_beside_the_turns_completed(
    rules: RuleSet, cap: int | None
) -> None:
    """What a page's turn counter needs as a round nears the cap: both numbers, in the
    plain form and on the wire (absent where the rule set has no cap)."""
    state = GameState.new_game(rules, rules.min_players, SEED)
    seat = state.to_act[0]
    state = state.apply_action(seat, state.legal_actions(seat)[0])[0]
    for view in (build_seat_view(state, 0), build_spectator_view(state)):
        assert view.to_dict()["turn_cap"] == cap
        message = convert.view_to_pb(view, "g", state.action_count, 0.0)
        assert message.HasField("turn_cap") is (cap is not None)
        assert message.turn_cap == (cap or 0)
        assert message.turns_completed == state.turns_completed
