"""Invariant checks of states, melds and transitions (see ``tests.support``)."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    DrawSource,
    EndTurn,
    ExtraMeld,
    LayContract,
    LayOff,
    PassClaim,
    SwapJoker,
)
from engine.cards import NO_SUIT, Card, card, full_deck
from engine.errors import IllegalActionError, InvalidActionError
from engine.events import Event
from engine.game import GameState, Phase
from engine.melds import Meld, build_run, build_set, layoff_ends, swap_joker
from engine.rulesets import Contract, MeldKind, RuleSet
from tests.support.common import action_text, card_ids, card_places, penalty_of
from tests.support.secrecy import (
    check_deal_events,
    check_events,
    check_views,
    laid_melds,
    public_now,
)

# --------------------------------------------------------------------------- melds


def check_meld(meld: Meld, rules: RuleSet, seats: int) -> None:
    """Assert that a meld on the table is valid under ``rules``.

    Checked twice: directly against the rule set, and by rebuilding it through
    ``engine.melds`` (which must accept the same cards at the same position).
    """
    cards = meld.cards
    assert 0 <= meld.owner < seats, f"meld owner {meld.owner} is not a seat"
    assert len(set(card_ids(cards))) == len(cards), (
        f"a card appears twice in meld {meld.describe()}"
    )
    for c in cards:
        assert c == card(c.id, rules.decks), f"card {c!r} does not match its id"
    naturals = [c for c in cards if not c.is_joker]
    jokers = len(cards) - len(naturals)
    assert len(naturals) >= rules.min_naturals_per_meld, f"too few naturals: {meld.describe()}"
    if rules.max_jokers_per_meld is not None:
        assert jokers <= rules.max_jokers_per_meld, f"too many jokers: {meld.describe()}"
    if meld.kind is MeldKind.SET:
        assert meld.suit == NO_SUIT, f"a set has a suit: {meld!r}"
        assert all(c.rank == meld.rank for c in naturals), f"set of mixed ranks: {meld.describe()}"
        assert len(cards) >= rules.set_min, f"set too small: {meld.describe()}"
        if rules.set_max is not None:
            assert len(cards) <= rules.set_max, f"set too large: {meld.describe()}"
        if rules.set_distinct_suits:
            suits = [c.suit for c in naturals]
            assert len(set(suits)) == len(suits), f"set repeats a suit: {meld.describe()}"
        assert list(cards) == sorted(cards), f"set not in id order: {meld.describe()}"
        rebuilt = build_set(cards, rules)
        assert rebuilt.rank == meld.rank and rebuilt.cards == cards, (
            f"engine.melds rebuilds set {meld.describe()} differently: {rebuilt.describe()}"
        )
        return
    assert meld.kind is MeldKind.RUN
    assert rules.run_min <= len(cards) <= 13, f"bad run length: {meld.describe()}"
    assert meld.rank >= 1 and meld.high <= rules.highest_run_rank, (
        f"run {meld.describe()} spans ranks {meld.rank}..{meld.high}"
    )
    for i, c in enumerate(cards):
        if c.is_joker:
            continue
        position = meld.rank + i
        assert c.suit == meld.suit, f"run of mixed suits: {meld.describe()}"
        assert c.rank == position or (c.rank == 1 and position == 14), (
            f"card {c.code} at rank {position} in run {meld.describe()}"
        )
    rebuilt = build_run(cards, rules, start=meld.rank)
    assert rebuilt.rank == meld.rank and rebuilt.suit == meld.suit, (
        f"engine.melds places run {meld.describe()} elsewhere"
    )
    for mine, theirs in zip(cards, rebuilt.cards, strict=True):
        assert mine.is_joker == theirs.is_joker and (mine.is_joker or mine == theirs), (
            f"engine.melds rebuilds run {meld.describe()} as {rebuilt.describe()}"
        )


def _check_meld_growth(old: Meld, new: Meld, index: int) -> None:
    """Within a round a meld only grows (lay-offs) or trades a joker for a natural (swap)."""
    assert new.kind is old.kind and new.owner == old.owner, f"meld {index} changed kind or owner"
    if old.kind is MeldKind.SET:
        assert new.rank == old.rank, f"set {index} changed rank"
        assert set(card_ids(old.cards)) <= set(card_ids(new.cards)), f"set {index} lost a card"
        return
    assert new.suit == old.suit, f"run {index} changed suit"
    shift = old.rank - new.rank
    assert shift >= 0 and new.high >= old.high, f"run {index} shrank"
    changed = 0
    for i, c in enumerate(old.cards):
        other = new.cards[i + shift]
        if other is c or other == c:
            continue
        assert c.is_joker and not other.is_joker, f"run {index}: {c!r} replaced by {other!r}"
        changed += 1
    assert changed <= 1, f"run {index}: {changed} jokers swapped in one action"


# --------------------------------------------------------------------------- invariants


_DECKS: dict[tuple[int, int], tuple[Card, ...]] = {}


def _deck(rules: RuleSet) -> tuple[Card, ...]:
    key = (rules.decks, rules.jokers)
    found = _DECKS.get(key)
    if found is None:
        found = _DECKS[key] = full_deck(rules.decks, rules.jokers)
    return found


_IDENTITIES: dict[tuple[int, int], frozenset[int]] = {}


def check_conservation(state: GameState) -> None:
    """Every physical card of the deck is in exactly one place, as its true self."""
    rules = state.rules
    deck = _deck(rules)
    key = (rules.decks, rules.jokers)
    identities = _IDENTITIES.get(key)
    if identities is None:
        identities = _IDENTITIES[key] = frozenset(id(c) for c in deck)
    for what, cards in (
        ("hands+stock+discards+table", card_places(state)),
        ("all_cards()", state.all_cards()),
    ):
        # fast path: the engine's cards are the interned ones, each exactly once
        if len(cards) == len(deck) and {id(c) for c in cards} == identities:
            continue
        assert sorted(c.id for c in cards) == list(range(len(deck))), (
            f"{what} is not exactly the deck: {_conservation_diff(cards, deck)}"
        )
        for c in cards:
            assert c == deck[c.id], f"card {c!r} does not match its id"


def _conservation_diff(cards: Sequence[Card], deck: Sequence[Card]) -> str:
    counts: dict[int, int] = {}
    for c in cards:
        counts[c.id] = counts.get(c.id, 0) + 1
    missing = [c.code + f"#{c.id}" for c in deck if c.id not in counts]
    twice = sorted(f"#{i}x{n}" for i, n in counts.items() if n > 1)
    return f"missing {missing}, duplicated {twice}, {len(cards)} cards for {len(deck)}"


def check_invariants(
    state: GameState,
    *,
    deep: bool = False,
    public: Collection[int] = (),
    validated: set[Meld] | None = None,
    view_seats: Collection[int] | None = None,
    memo: dict[str, Any] | None = None,
) -> None:
    """Every invariant that one state must satisfy on its own.

    ``public``: card ids the viewers have seen face up this round beyond the
    current table and discards (e.g. a discard another seat took); used by the
    no-leak check of the views.  ``deep`` adds the expensive checks: JSON-ability
    of every view, the to_dict/from_dict round trip and check()+apply of every
    legal action.  ``validated``: melds already checked (a cache, updated here).
    ``view_seats``: the seats whose views are checked (default and on deep checks:
    every seat and the spectator).  ``memo``: see ``check_views``.
    """
    rules = state.rules
    check_conservation(state)
    assert len(state.hands) == state.seats == len(state.opened) == len(state.scores)
    assert rules.min_players <= state.seats <= rules.max_players
    assert 1 <= state.round_number <= rules.rounds, f"round {state.round_number}"
    for s in state.scores:
        assert s >= 0, f"negative score in {state.scores}"
    for i, m in enumerate(state.table):
        assert state.opened[m.owner], f"meld {i} belongs to seat {m.owner}, who is not open"
        if validated is not None and m in validated:
            continue
        try:
            check_meld(m, rules, state.seats)
        except (IllegalActionError, InvalidActionError) as exc:
            raise AssertionError(f"table meld {i} ({m.describe()}) is invalid: {exc}") from exc
        if validated is not None:
            validated.add(m)

    terminal = state.is_terminal()
    assert terminal == (state.phase is Phase.GAME_OVER), "is_terminal() disagrees with phase"
    to_act = state.to_act
    if terminal:
        assert to_act == (), f"game over but to_act={to_act}"
        assert state.round_number == rules.rounds, "game over before the last round"
        best = min(state.scores)
        assert tuple(state.winners()) == tuple(
            i for i, s in enumerate(state.scores) if s == best
        ), f"winners {state.winners()} for scores {state.scores}"
        assert tuple(state.returns()) == tuple(float(-s) for s in state.scores)
    else:
        assert to_act, "the game runs but nobody may act"
        assert len(set(to_act)) == len(to_act) and all(0 <= s < state.seats for s in to_act)
        assert 0 <= state.current < state.seats
        for i, hand in enumerate(state.hands):
            assert hand, f"seat {i} holds no card but the round goes on"
        if state.phase is Phase.CLAIM:
            assert rules.may_i and state.discards, "claim window without May I or a discard"
            assert all(s != _discarder(state) for s in to_act), "the discarder may claim"
        else:
            assert to_act == (state.current,), f"to_act {to_act} in phase {state.phase}"

    check_views(
        state,
        public,
        full=deep,
        seats=None if deep else view_seats,
        spectator=deep or view_seats is None,
        memo=memo,
    )

    if deep:
        _deep_checks(state)


def _discarder(state: GameState) -> int:
    """In a claim window, the seat that discarded (the one before ``current``)."""
    return (state.current - 1) % state.seats


def _deep_checks(state: GameState) -> None:
    data = state.to_dict()
    text = json.dumps(data, sort_keys=True)
    again = GameState.from_dict(json.loads(text))
    assert again == state, "from_dict(json round trip of to_dict(s)) != s"
    assert json.dumps(again.to_dict(), sort_keys=True) == text, "to_dict is not stable"
    to_act = set(state.to_act)
    for seat in range(state.seats):
        legal = state.legal_actions(seat)
        assert legal == state.legal_actions(seat), "legal_actions is not deterministic"
        if seat not in to_act:
            assert legal == [], f"seat {seat} is not to act but has legal actions {legal}"
            continue
        assert len({action_text(a) for a in legal}) == len(legal), (
            f"duplicate legal actions: {legal}"
        )
        for action in legal:
            try:
                state.check(seat, action)
                nxt, events = state.apply_action(seat, action)
            except (IllegalActionError, InvalidActionError) as exc:
                raise AssertionError(
                    f"legal action {action_text(action)} of seat {seat} refused: {exc}"
                ) from exc
            check_conservation(nxt)
            assert events, f"{action_text(action)} produced no event"
        _check_completeness(state, seat, legal)
    assert json.dumps(state.to_dict(), sort_keys=True) == text, (
        "exploring actions mutated the state"
    )


def _refused(state: GameState, seat: int, action: Action) -> bool:
    try:
        state.check(seat, action)
    except IllegalActionError:
        return True
    return False


def _check_completeness(state: GameState, seat: int, legal: list[Action]) -> None:
    """legal_actions lists every legal action (up to its documented canonical forms).

    Every draw, end of turn, claim answer, automatic contract and discard it leaves
    out must be refused; so must every lay-off and joker swap that ``engine.melds``
    (the reference) says fits but that is not listed in some form.  Extra melds and
    explicit contract selections are only listed in canonical forms: not checked.
    """
    listed = {action_text(a) for a in legal}
    simple: list[Action] = [
        Draw(DrawSource.STOCK),
        Draw(DrawSource.DISCARD),
        EndTurn(),
        Claim(),
        PassClaim(),
        LayContract(),
    ]
    simple.extend(Discard(c.id) for c in state.hands[seat])
    for action in simple:
        if action_text(action) not in listed:
            assert _refused(state, seat, action), f"legal but not listed: {action_text(action)}"
    rules = state.rules
    offs = {(a.card, a.meld) for a in legal if isinstance(a, LayOff)}
    swaps = {(a.card, a.meld) for a in legal if isinstance(a, SwapJoker)}
    for c in state.hands[seat]:
        for i, meld in enumerate(state.table):
            if (c.id, i) not in offs:
                for end in layoff_ends(meld, c, rules):
                    action = LayOff(c.id, i, end)
                    assert _refused(state, seat, action), (
                        f"legal but not listed: {action_text(action)}"
                    )
            if rules.joker_swap and not c.is_joker and (c.id, i) not in swaps:
                try:
                    swap_joker(meld, c, rules)
                except IllegalActionError:
                    continue
                action = SwapJoker(c.id, i)
                assert _refused(state, seat, action), f"legal but not listed: {action_text(action)}"


# --------------------------------------------------------------------------- transitions


@dataclass
class InvariantChecker:
    """Checks one game's transitions; keeps what the viewers have seen this round."""

    start: GameState
    #: the events of the first deal (GameState.new_game_with_events), checked too
    start_events: Sequence[Event] = ()
    public: set[int] = field(default_factory=set)
    turns_in_round: int = 0
    steps: int = 0
    validated: set[Meld] = field(default_factory=set)
    memo: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check_round_start(self.start)
        self.public = public_now(self.start)
        check_invariants(self.start, deep=True, public=self.public, validated=self.validated)
        check_deal_events(self.start, self.start_events)

    def _check_round_start(self, state: GameState) -> None:
        if state.is_terminal():
            return
        rules = state.rules
        contract = rules.contract(state.round_number)
        assert state.phase is Phase.DRAW, f"round {state.round_number} starts in {state.phase}"
        assert state.current == (state.round_number - 1) % state.seats, (
            f"round {state.round_number} starts with seat {state.current}"
        )
        for i, hand in enumerate(state.hands):
            assert len(hand) == contract.deal, (
                f"seat {i} was dealt {len(hand)}, not {contract.deal}"
            )
        upcards = 1 if rules.initial_upcard else 0
        assert len(state.discards) == upcards, f"{len(state.discards)} upcards"
        assert not state.table and not any(state.opened), "a new round starts with a table"
        assert len(state.stock) == rules.deck_size - state.seats * contract.deal - upcards

    def step(
        self,
        prev: GameState,
        seat: int,
        action: Action,
        nxt: GameState,
        events: Sequence[Event],
        *,
        deep: bool,
    ) -> None:
        self.steps += 1
        public_before = set(self.public)
        rules = prev.rules
        new_round = nxt.round_number != prev.round_number
        ended = new_round or nxt.is_terminal()
        assert nxt.seats == prev.seats and nxt.seed == prev.seed and nxt.rules == prev.rules
        assert nxt.round_number in (prev.round_number, prev.round_number + 1)
        if isinstance(action, Discard | EndTurn) and prev.phase is Phase.PLAY:
            self.turns_in_round += 1
            if rules.turn_cap is not None:
                assert self.turns_in_round <= rules.turn_cap, "the turn cap did not end the round"

        if not ended:
            assert nxt.scores == prev.scores, "scores changed within a round"
            if prev.phase is not Phase.CLAIM:
                for u in range(prev.seats):
                    if u != seat:
                        assert nxt.hands[u] == prev.hands[u], (
                            f"{action_text(action)} changed seat {u}'s hand"
                        )
            assert len(nxt.table) >= len(prev.table), "a meld left the table"
            for i, old in enumerate(prev.table):
                _check_meld_growth(old, nxt.table[i], i)
            for u in range(prev.seats):
                assert nxt.opened[u] or not prev.opened[u], f"seat {u} closed again"
            self._check_hand_delta(prev, seat, action, nxt)
            # a dead round never goes on (RULES.md, rule 6), by a definition of its own:
            # every seat open and no card of the deck fits any meld on the table
            assert not (rules.dead_round_ends and _no_lay_off_left(nxt)), (
                f"the round is dead after {action_text(action)} and goes on"
            )
        else:
            self._check_round_scores(prev, seat, action, nxt, events)
            self.turns_in_round = 0

        if new_round:
            self._check_round_start(nxt)
            self.public = public_now(nxt)
        else:
            # a card seen face up stays known (also when taken from the discard pile),
            # unless it went back into the stock (a reshuffle) or from there, or from
            # under the pile's top, into a hand: where it is then is secret again
            hidden = set(card_ids(prev.stock)) | set(card_ids(prev.discards[:-1]))
            for u in range(nxt.seats):
                if nxt.hands[u] is not prev.hands[u]:
                    entered = set(card_ids(nxt.hands[u])) - set(card_ids(prev.hands[u]))
                    self.public -= entered & hidden
            self.public |= public_now(nxt)
            self.public -= set(card_ids(nxt.stock))
        check_events(
            prev, seat, action, nxt, events, public_before, self.public, full=deep or ended
        )
        if ended:
            self.validated.clear()
        # every step: the views of the actor and of seats whose hand changed; deep steps
        # and round boundaries: every seat's and the spectator's
        changed = [u for u in range(nxt.seats) if nxt.hands[u] is not prev.hands[u]]
        check_invariants(
            nxt,
            deep=deep or ended,
            public=self.public,
            validated=self.validated,
            view_seats={seat, *changed},
            memo=self.memo,
        )

    def _check_hand_delta(self, prev: GameState, seat: int, action: Action, nxt: GameState) -> None:
        before, after = len(prev.hands[seat]), len(nxt.hands[seat])
        match action:
            case Draw():
                assert after == before + 1, f"draw: hand {before} -> {after}"
            case Discard(card=c):
                assert after == before - 1, f"discard: hand {before} -> {after}"
                assert nxt.discards and nxt.discards[-1].id == c, "the discard is not on top"
            case LayOff(card=c):
                assert after == before - 1, f"lay-off: hand {before} -> {after}"
                assert c not in card_ids(nxt.hands[seat])
            case ExtraMeld(meld=spec):
                assert after == before - len(spec.cards)
                assert len(nxt.table) == len(prev.table) + 1
            case LayContract():
                assert not prev.opened[seat] and nxt.opened[seat], "lay contract did not open"
                contract = prev.rules.contract(prev.round_number)
                added = nxt.table[len(prev.table) :]
                assert len(added) == len(contract.melds), "contract laid with the wrong meld count"
                laid = sum(len(m.cards) for m in added)
                assert after == before - laid, f"contract: hand {before} -> {after}, {laid} laid"
                _check_contract(added, contract, prev.rules, seat)
            case SwapJoker(card=c):
                assert after == before, f"swap: hand {before} -> {after}"
                assert c not in card_ids(nxt.hands[seat])
            case EndTurn() | Claim() | PassClaim():
                pass

    def _check_round_scores(
        self,
        prev: GameState,
        seat: int,
        action: Action,
        nxt: GameState,
        events: Sequence[Event],
    ) -> None:
        """When a round ends, each score grows by the penalty of the hand left."""
        rules = prev.rules
        deltas = [a - b for a, b in zip(nxt.scores, prev.scores, strict=True)]
        assert all(d >= 0 for d in deltas), f"a score went down: {prev.scores} -> {nxt.scores}"
        if prev.phase is Phase.CLAIM:
            return
        for u in range(prev.seats):
            if u != seat:
                expected = penalty_of(rules, prev.hands[u])
                assert deltas[u] == expected, (
                    f"seat {u} scored {deltas[u]} for a hand worth {expected}"
                )
        hand = prev.hands[seat]
        match action:
            case Discard(card=c):
                expected = penalty_of(rules, [x for x in hand if x.id != c])
            case Draw() | EndTurn():
                expected = penalty_of(rules, hand)
            case LayOff() | LayContract() | ExtraMeld():
                # going out (0), or a dead round: the hand left after laying is scored
                laid = {c["id"] for m in laid_melds(events) for c in m["cards"]}
                if isinstance(action, LayOff):
                    laid = {action.card}
                left = [x for x in hand if x.id not in laid]
                expected = penalty_of(rules, left)
                if left:
                    assert _round_end_reason(events) == "dead", "a round ended on laying"
            case _:
                expected = 0  # only going out ends a round on a swap
        assert deltas[seat] == expected, (
            f"seat {seat} scored {deltas[seat]} after {action_text(action)}, expected {expected}"
        )


def _no_lay_off_left(state: GameState) -> bool:
    """Every seat is open and no card of the deck fits any meld on the table: what
    RULES.md calls a dead round, tried card by card rather than by meld sizes."""
    if not all(state.opened):
        return False
    deck = _deck(state.rules)
    return not any(layoff_ends(m, c, state.rules) for m in state.table for c in deck)


def _round_end_reason(events: Sequence[Event]) -> str:
    return str(next(e.public["reason"] for e in events if e.type == "round_ended"))


def _check_contract(added: Sequence[Meld], contract: Contract, rules: RuleSet, seat: int) -> None:
    """The melds laid for a contract match its requirements (some order of them)."""
    need = sorted((m.kind.value, m.size) for m in contract.melds)
    have = sorted((m.kind.value, len(m.cards)) for m in added)
    for m in added:
        assert m.owner == seat
    if rules.exact_contract_sizes:
        assert have == need, f"contract {need} laid as {have}"
    else:
        # greedy matching of minimums: sort both by kind and size
        remaining = list(need)
        for kind, size in sorted(have, key=lambda x: (x[0], -x[1])):
            fits = [r for r in remaining if r[0] == kind and r[1] <= size]
            assert fits, f"contract {need} laid as {have}"
            remaining.remove(max(fits, key=lambda r: r[1]))
