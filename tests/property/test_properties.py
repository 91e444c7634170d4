"""Hypothesis property tests of the engine: conservation, determinism, replay, secrecy,
the shuffle, rule-set hashes and lossless state serialisation."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import Action, action_from_dict, action_to_dict
from engine.cards import Card, full_deck
from engine.errors import InvalidActionError
from engine.events import Event
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.shuffle import commitment, round_seed, shuffled
from engine.views import seat_view, spectator_view
from tests.support import (
    CUSTOM_MAYI,
    CUSTOM_MIX,
    EagerBot,
    InvariantChecker,
    check_no_leak,
    eager_policy,
    random_playout,
)

ROOT = Path(__file__).resolve().parents[2]
ALL_RULES = (WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI)

PROPS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def games(draw: st.DrawFn) -> tuple[RuleSet, int, bytes]:
    rules = draw(st.sampled_from(ALL_RULES))
    seats = draw(st.integers(rules.min_players, rules.max_players))
    seed = draw(st.binary(min_size=4, max_size=32))  # hex of >= 8 chars: never by chance
    return rules, seats, seed


def rngs() -> st.SearchStrategy[random.Random]:
    """A seeded random source for long playouts: hypothesis draws (and shrinks) the
    seed only, since st.randoms would route every one of thousands of choices
    through hypothesis's buffer."""
    return st.integers(0, 2**64 - 1).map(random.Random)


def _pick(state: GameState, rng: random.Random) -> tuple[int, Action]:
    seat = state.to_act[rng.randrange(len(state.to_act))]
    legal = state.legal_actions(seat)
    return seat, eager_policy(state, seat, legal, rng)


def _event_key(ev: Event) -> Any:
    return (
        ev.type,
        ev.seat,
        json.dumps(dict(ev.public), sort_keys=True),
        json.dumps({str(k): dict(v) for k, v in sorted(ev.secret.items())}, sort_keys=True),
    )


def _ids(cards: tuple[Card, ...] | list[Card]) -> set[int]:
    return {c.id for c in cards}


# ------------------------------------------------------------------ conservation & secrecy


@PROPS
@given(game=games(), data=st.data())
def test_invariants_hold_after_every_action_of_drawn_choices(
    game: tuple[RuleSet, int, bytes], data: st.DataObject
) -> None:
    """Every action chosen by hypothesis (so failures shrink to few choices) keeps the deck
    whole, the melds valid and the views and events free of secrets."""
    rules, seats, seed = game
    state, first_events = GameState.new_game_with_events(rules, seats, seed)
    checker = InvariantChecker(state, first_events)
    steps = data.draw(st.integers(1, 120), label="steps")
    for _ in range(steps):
        if state.is_terminal():
            break
        seat = data.draw(st.sampled_from(state.to_act), label="seat")
        legal = state.legal_actions(seat)
        action = data.draw(st.sampled_from(legal), label="action")
        nxt, events = state.apply_action(seat, action)
        checker.step(state, seat, action, nxt, events, deep=False)
        state = nxt


@PROPS
@given(game=games(), rng=rngs())
def test_invariants_hold_on_long_random_prefixes(
    game: tuple[RuleSet, int, bytes], rng: random.Random
) -> None:
    """Longer playouts (several rounds) driven by a hypothesis-seeded random source."""
    rules, seats, seed = game
    state, first_events = GameState.new_game_with_events(rules, seats, seed)
    checker = InvariantChecker(state, first_events)
    for _ in range(400):
        if state.is_terminal():
            break
        seat, action = _pick(state, rng)
        nxt, events = state.apply_action(seat, action)
        checker.step(state, seat, action, nxt, events, deep=False)
        state = nxt


@PROPS
@given(game=games(), rng=rngs(), steps=st.integers(0, 300))
def test_views_never_show_what_the_viewer_may_not_know(
    game: tuple[RuleSet, int, bytes], rng: random.Random, steps: int
) -> None:
    """Strict form: a seat may see its own hand, the table and the discard pile; a card id
    of another hand or of the stock, the stock's order, the seed or the round's seed must
    never appear in its serialised view."""
    rules, seats, seed = game
    state = GameState.new_game(rules, seats, seed)
    taken_from_discards: set[int] = set()
    for _ in range(steps):
        if state.is_terminal():
            break
        seat, action = _pick(state, rng)
        before = state
        state, _ = state.apply_action(seat, action)
        if state.round_number != before.round_number:
            taken_from_discards = set()
            continue
        # the discard pile's top, taken (drawn or claimed), stays public; cards from under
        # it (reshuffled into the stock, then drawn) do not
        if before.discards and before.discards[-1].id not in _ids(state.discards):
            top = before.discards[-1].id
            if top not in _ids(state.stock):
                taken_from_discards.add(top)
        taken_from_discards -= _ids(state.stock)
    if state.is_terminal():
        return
    public = _ids(state.discards) | _ids([c for m in state.table for c in m.cards])
    public |= taken_from_discards
    secrets = [
        state.seed.hex(),
        round_seed(state.seed, state.round_number).hex(),
    ]
    for viewer in range(seats):
        view = seat_view(state, viewer)
        hidden = (
            _ids(state.stock).union(*(_ids(state.hands[u]) for u in range(seats) if u != viewer))
            - public
        )
        check_no_leak(
            view,
            rules=rules,
            allowed=public | _ids(state.hands[viewer]),
            what=f"seat_view({viewer})",
            stock=state.stock,
            forbidden_strings=secrets,
        )
        text = json.dumps(view)
        for cid in hidden:
            assert f'"id": {cid},' not in text and f'"id": {cid}}}' not in text, (
                f"seat {viewer} sees hidden card {cid}"
            )
    check_no_leak(
        spectator_view(state),
        rules=rules,
        allowed=public,
        what="spectator_view",
        stock=state.stock,
        forbidden_strings=secrets,
    )


@PROPS
@given(game=games(), rng=rngs())
def test_events_never_reveal_private_cards_to_others(
    game: tuple[RuleSet, int, bytes], rng: random.Random
) -> None:
    """Cards drawn from the stock, dealt hands and claim penalty cards reach only their
    owner: for every event and every other viewer, none of those ids appears."""
    rules, seats, seed = game
    state, deal_events = GameState.new_game_with_events(rules, seats, seed)
    for owner in range(seats):
        for viewer in [None, *range(seats)]:
            for ev in deal_events if viewer != owner else ():
                check_no_leak(
                    ev.for_seat(viewer),
                    rules=rules,
                    allowed=set(range(rules.deck_size)) - _ids(state.hands[owner]),
                    what=f"deal event {ev.type} for {viewer} (cards of seat {owner})",
                )
    for _ in range(250):
        if state.is_terminal():
            break
        seat, action = _pick(state, rng)
        nxt, events = state.apply_action(seat, action)
        new_round = nxt.round_number != state.round_number
        for owner in range(seats):
            if new_round:
                # the new deal, less what the last action of the old round showed
                private = (
                    _ids(nxt.hands[owner])
                    - _ids(nxt.discards)
                    - _ids(state.discards)
                    - _ids([c for m in state.table for c in m.cards])
                    - _ids(state.hands[seat])
                )
            else:
                # cards that came to this hand from the stock (draws, claim penalties) or
                # from under the discard pile's top (reshuffled, then drawn)
                hidden = _ids(state.stock) | _ids(state.discards[:-1])
                private = (_ids(nxt.hands[owner]) - _ids(state.hands[owner])) & hidden
            if not private:
                continue
            for viewer in [None, *range(seats)]:
                if viewer == owner:
                    continue
                for ev in events:
                    check_no_leak(
                        ev.for_seat(viewer),
                        rules=rules,
                        allowed=set(range(rules.deck_size)) - private,
                        what=f"event {ev.type} for {viewer} (cards of seat {owner})",
                    )
        state = nxt


@PROPS
@given(game=games(), rng=rngs())
def test_round_start_publishes_the_commitment_never_the_seed(
    game: tuple[RuleSet, int, bytes], rng: random.Random
) -> None:
    rules, seats, seed = game
    playout = random_playout(rules, seats, seed, rng, check=False, agent=EagerBot(), keep_log=True)
    started = [ev for ev in playout.events if ev.type == "round_started"]
    assert len(started) == rules.rounds
    for r, ev in enumerate(started, start=1):
        text = json.dumps(ev.for_seat(None))
        assert commitment(round_seed(seed, r)) in text, f"round {r} start lacks its commitment"
        assert round_seed(seed, r).hex() not in text and seed.hex() not in text


# ------------------------------------------------------------------ determinism & replay


@PROPS
@given(game=games(), rng=rngs(), steps=st.integers(1, 250))
def test_same_seed_and_actions_give_identical_states_and_events(
    game: tuple[RuleSet, int, bytes], rng: random.Random, steps: int
) -> None:
    rules, seats, seed = game
    state = GameState.new_game(rules, seats, seed)
    log: list[dict[str, Any]] = []
    trace: list[tuple[dict[str, Any], list[Any]]] = []
    for _ in range(steps):
        if state.is_terminal():
            break
        seat, action = _pick(state, rng)
        state, events = state.apply_action(seat, action)
        log.append({"seat": seat, "action": action_to_dict(action)})
        trace.append((state.to_dict(), [_event_key(e) for e in events]))
    # replay twice from the JSON form of the log: the states and events are identical
    for _ in range(2):
        again = GameState.new_game(rules, seats, seed)
        for entry, (expected_state, expected_events) in zip(
            json.loads(json.dumps(log)), trace, strict=True
        ):
            again, events = again.apply_action(entry["seat"], action_from_dict(entry["action"]))
            assert again.to_dict() == expected_state
            assert [_event_key(e) for e in events] == expected_events
        assert again == state


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=games(), rng_seed=st.integers(0, 2**32 - 1))
def test_replaying_a_whole_game_reproduces_its_end(
    game: tuple[RuleSet, int, bytes], rng_seed: int
) -> None:
    rules, seats, seed = game
    playout = random_playout(
        rules, seats, seed, random.Random(rng_seed), check=False, agent=EagerBot(), keep_log=True
    )
    state, events = GameState.new_game_with_events(rules, seats, seed)
    for seat, action in playout.actions:
        state, new = state.apply_action(seat, action)
        events.extend(new)
    assert state == playout.final
    assert state.to_dict() == playout.final.to_dict()
    assert [_event_key(e) for e in events] == [_event_key(e) for e in playout.events]
    assert state.is_terminal() and state.scores == playout.final.scores


_FINGERPRINT_SCRIPT = """
import hashlib, json, random, sys
sys.path.insert(0, {root!r})
from engine.rulesets import WHISKERTRAIL, CONTRACT
from tests.support import random_playout, EagerBot
out = []
for rules, seats in ((WHISKERTRAIL, 3), (CONTRACT, 4)):
    p = random_playout(rules, seats, b"fingerprint", random.Random(99), check=False,
                       agent=EagerBot(), keep_log=True)
    blob = json.dumps([p.final.to_dict(), [[e.type, e.seat, dict(e.public),
                      {{str(k): dict(v) for k, v in e.secret.items()}}] for e in p.events]],
                      sort_keys=True, default=str)
    out.append(hashlib.sha256(blob.encode()).hexdigest())
out.append(WHISKERTRAIL.hash)
out.append(CONTRACT.hash)
print(" ".join(out))
"""


def test_games_and_hashes_do_not_depend_on_the_process_hash_seed() -> None:
    """Same seed and choices give the same game in processes with different PYTHONHASHSEED
    (catches iteration over sets or dicts whose order varies per process)."""
    script = _FINGERPRINT_SCRIPT.format(root=str(ROOT))
    outputs = set()
    for hash_seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1, outputs


@PROPS
@given(game=games())
def test_new_game_is_a_function_of_its_inputs(game: tuple[RuleSet, int, bytes]) -> None:
    rules, seats, seed = game
    a = GameState.new_game(rules, seats, seed)
    b = GameState.new_game(rules, seats, seed)
    assert a == b and a.to_dict() == b.to_dict()
    other = GameState.new_game(rules, seats, seed + b"\x00")
    assert other.hands != a.hands  # a different seed deals differently (2^-200 odds)


# ------------------------------------------------------------------ serialisation


@PROPS
@given(game=games(), rng=rngs(), steps=st.integers(0, 400))
def test_state_to_dict_round_trips(
    game: tuple[RuleSet, int, bytes], rng: random.Random, steps: int
) -> None:
    rules, seats, seed = game
    state = GameState.new_game(rules, seats, seed)
    for i in range(steps):
        if state.is_terminal():
            break
        seat, action = _pick(state, rng)
        state, _ = state.apply_action(seat, action)
        if i % 37 == 0:
            assert GameState.from_dict(state.to_dict()) == state
    data = state.to_dict()
    text = json.dumps(data, sort_keys=True)
    back = GameState.from_dict(json.loads(text))
    assert back == state
    assert json.dumps(back.to_dict(), sort_keys=True) == text
    # the restored state plays on exactly like the original
    for seat in state.to_act:
        assert back.legal_actions(seat) == state.legal_actions(seat)


def _duplicate_a_card(d: dict[str, Any]) -> None:
    d["hands"][0].append(d["hands"][1][0])


def _lose_a_card(d: dict[str, Any]) -> None:
    d["hands"][0].pop()


def _unknown_card(d: dict[str, Any]) -> None:
    d["hands"][0].append(10_000)


def _bad_round(d: dict[str, Any]) -> None:
    d["round"] = 99


def _bad_seat(d: dict[str, Any]) -> None:
    d["current"] = d["seats"]


def _negative_score(d: dict[str, Any]) -> None:
    d["scores"][0] = -1


def _bad_phase(d: dict[str, Any]) -> None:
    d["phase"] = "lunch"


_TAMPERINGS: list[Callable[[dict[str, Any]], None]] = [
    _duplicate_a_card,
    _lose_a_card,
    _unknown_card,
    _bad_round,
    _bad_seat,
    _negative_score,
    _bad_phase,
]


@PROPS
@given(game=games(), rng=rngs(), steps=st.integers(0, 60), tamper=st.sampled_from(_TAMPERINGS))
def test_from_dict_rejects_tampered_states(
    game: tuple[RuleSet, int, bytes],
    rng: random.Random,
    steps: int,
    tamper: Callable[[dict[str, Any]], None],
) -> None:
    """A stored state that breaks an invariant is refused, never loaded."""
    rules, seats, seed = game
    state = GameState.new_game(rules, seats, seed)
    for _ in range(steps):
        seat, action = _pick(state, rng)
        state, _ = state.apply_action(seat, action)
        if state.round_number > 1:
            break
    data = json.loads(json.dumps(state.to_dict()))
    tamper(data)
    with pytest.raises(InvalidActionError):
        GameState.from_dict(data)


# ------------------------------------------------------------------ shuffle


def _reference_shuffle(items: list[int], seed_of_round: bytes, epoch: int) -> list[int]:
    """An independent implementation of the documented shuffle (engine/shuffle.py)."""
    words: list[int] = []
    block = 0
    result = list(items)

    def word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.sha256(
                seed_of_round + struct.pack(">I", epoch) + struct.pack(">Q", block)
            ).digest()
            words.extend(reversed(struct.unpack(">4Q", digest)))
            block += 1
        return words.pop()

    for i in range(len(result) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        x = word()
        while x >= limit:
            x = word()
        j = x % n
        result[i], result[j] = result[j], result[i]
    return result


@settings(max_examples=200, deadline=None)
@given(
    seed=st.binary(max_size=40),
    round_number=st.integers(1, 12),
    epoch=st.integers(0, 6),
    items=st.lists(st.integers(), max_size=120),
)
def test_shuffle_is_a_deterministic_permutation(
    seed: bytes, round_number: int, epoch: int, items: list[int]
) -> None:
    rs = round_seed(seed, round_number)
    out = shuffled(items, rs, epoch)
    assert sorted(out) == sorted(items)
    assert out == shuffled(items, rs, epoch)
    assert out == _reference_shuffle(items, rs, epoch)


@settings(max_examples=50, deadline=None)
@given(seed=st.binary(max_size=40), round_number=st.integers(1, 12))
def test_shuffle_depends_on_seed_round_and_epoch(seed: bytes, round_number: int) -> None:
    deck = list(range(108))
    base = shuffled(deck, round_seed(seed, round_number), 0)
    assert base != shuffled(deck, round_seed(seed, round_number), 1)
    assert base != shuffled(deck, round_seed(seed, round_number + 1), 0)
    assert base != shuffled(deck, round_seed(seed + b"!", round_number), 0)


def test_deal_follows_the_documented_shuffle() -> None:
    """The first round's stock is the documented shuffle of the deck in id order, dealt
    one card at a time (seat by seat, starting with the round's first seat)."""
    seed = b"documented-deal"
    for rules, seats in ((WHISKERTRAIL, 3), (CONTRACT, 4)):
        state = GameState.new_game(rules, seats, seed)
        order = shuffled(list(full_deck(rules.decks, rules.jokers)), round_seed(seed, 1), 0)
        deal = rules.contract(1).deal
        dealt = order[: seats * deal]
        for s in range(seats):
            assert state.hands[s] and set(state.hands[s]) == set(dealt[s::seats]), (
                f"{rules.name}: seat {s} was not dealt every {seats}th card"
            )
        rest = order[seats * deal :]
        if rules.initial_upcard:
            assert state.discards == (rest[0],)
            rest = rest[1:]
        assert list(state.stock) == rest


# ------------------------------------------------------------------ rule-set hashes

_VARIATIONS: list[dict[str, Any]] = [
    {"name": "renamed"},
    {"joker_penalty": 24},
    {"ace_penalty": 11},
    {"turn_cap": 199},
    {"turn_cap": None},
    {"max_exhaustions": 2},
    {"min_players": 3},
    {"jokers": 3},
    {"run_min": 3},
    {"ace_high": True},
    {"layoff_on_opening_turn": False},
    {"extra_melds": False},
    {"max_jokers_per_meld": 2},
    {"min_naturals_per_meld": 3},
    {"contracts": WHISKERTRAIL.contracts[:-1]},
    {"contracts": WHISKERTRAIL.contracts[1:] + WHISKERTRAIL.contracts[:1]},
]


@given(change=st.sampled_from(_VARIATIONS))
def test_ruleset_hash_differs_for_different_rules(change: dict[str, Any]) -> None:
    other = dataclasses.replace(WHISKERTRAIL, **change)
    assert other != WHISKERTRAIL
    assert other.hash != WHISKERTRAIL.hash
    assert dataclasses.replace(other).hash == other.hash


@given(rules=st.sampled_from(ALL_RULES))
def test_ruleset_hash_is_stable(rules: RuleSet) -> None:
    again = RuleSet.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert again == rules and again.hash == rules.hash
    assert len(rules.hash) == 16 and int(rules.hash, 16) >= 0
    assert len({r.hash for r in ALL_RULES}) == len(ALL_RULES)


def test_ruleset_hash_is_pinned() -> None:
    """The hash names the rules in stored replays and results: it must never drift."""
    canonical = json.dumps(WHISKERTRAIL.to_dict(), sort_keys=True, separators=(",", ":"))
    assert WHISKERTRAIL.hash == hashlib.sha256(canonical.encode()).hexdigest()[:16]
