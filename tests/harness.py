"""Random-playout conformance harness (OpenSpiel style), shared by every rule set.

``play_random_game`` plays one complete game with random agents and checks the
engine's invariants after every action:

* card conservation: every physical card of the rule set's deck is in exactly one
  place (hands, stock, discards, table), and ``GameState.all_cards`` agrees;
* every meld on the table is valid under the rule set (re-validated through
  ``engine.melds``), and melds only ever grow in place within a round;
* hand sizes: every hand of a running round is non-empty, only the acting seat's
  hand changes outside a claim window, a new round deals ``contract.deal`` cards
  to every seat and starts with seat ``(round - 1) mod seats``;
* scores never go down, change only when a round ends, and then by exactly the
  penalty points of the cards left in each hand;
* ``to_act`` is non-empty and every seat in it has legal actions while the game
  runs; seats not in it have none; every listed legal action passes
  ``GameState.check`` and applies without error (deep checks);
* secrecy: no seat view, spectator view or redacted event shows a card id the
  viewer may not know (another hand, the stock), three consecutive stock cards in
  order, the game seed or the seed of the round in progress; views state the
  hand sizes, scores, piles, table and ``to_act`` of the state;
* ``to_dict``/``from_dict`` round-trips and survives JSON (deep checks);
* the game ends properly: terminal, last round played, scores non-negative,
  winners are the lowest scores, returns are minus the scores.

Every step checks everything above except what is marked deep, and the views of
the acting seat and of any seat whose hand changed (the parts that changed since
that seat's previous view in the round).  Deep steps (every ``deep_every`` steps,
every round boundary, the first and last state) also check the spectator's and
every seat's view in full, the round trip, ``check`` + ``apply_action`` of every
legal action of every seat, and that no legal draw, discard, claim answer, end of
turn, automatic contract, lay-off or joker swap is missing from ``legal_actions``.

Choices come only from the ``random.Random`` passed in (never the global one), so a
failure is reproduced by the same rules, seats, seed, rng seed and policy; the
failure message names the seed and step.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clients.bots.montecarlo import connections
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
    action_to_dict,
)
from engine.cards import NO_SUIT, Card, card, full_deck
from engine.errors import IllegalActionError, InvalidActionError
from engine.events import Event
from engine.game import GameState, Phase
from engine.melds import Meld, build_run, build_set, layoff_ends, swap_joker
from engine.rulesets import Contract, MeldKind, MeldRequirement, RuleSet, Stalemate
from engine.shuffle import round_seed
from engine.views import seat_view, spectator_view

__all__ = [
    "CUSTOM_MAYI",
    "CUSTOM_MIX",
    "InvariantChecker",
    "Playout",
    "PlayoutFailure",
    "Policy",
    "check_invariants",
    "check_meld",
    "check_no_leak",
    "eager_policy",
    "play_random_game",
    "random_playout",
    "uniform_policy",
]

# --------------------------------------------------------------------------- rule sets

_S3 = MeldRequirement(MeldKind.SET, 3)
_S4 = MeldRequirement(MeldKind.SET, 4)
_R4 = MeldRequirement(MeldKind.RUN, 4)
_R5 = MeldRequirement(MeldKind.RUN, 5)

#: A custom rule set mixing features of both presets: one deck and two jokers,
#: three contracts, contract sizes as minimums, distinct-suit sets of 3-4, ace
#: high or low, two jokers per meld, joker lay-offs and swaps, extra melds,
#: drawing from the discard pile, a two-exhaustion stalemate and a 120-turn cap.
CUSTOM_MIX = RuleSet(
    name="custom-mix",
    contracts=(
        Contract("set and run", (_S3, _R4), deal=9),
        Contract("two runs", (_R4, _R4), deal=10),
        Contract("set of four and run of five", (_S4, _R5), deal=11),
    ),
    jokers=2,
    decks=1,
    min_players=2,
    max_players=4,
    exact_contract_sizes=False,
    set_min=3,
    set_max=4,
    set_distinct_suits=True,
    run_min=4,
    ace_high=True,
    max_jokers_per_meld=2,
    min_naturals_per_meld=2,
    joker_penalty=20,
    draw_from_discard=True,
    initial_upcard=True,
    explicit_contract=False,
    layoff_jokers=True,
    layoff_on_opening_turn=True,
    extra_melds=True,
    joker_swap=True,
    may_i=False,
    stalemate=Stalemate.EXHAUSTIONS,
    max_exhaustions=2,
    turn_cap=120,
)

#: A custom "May I?" rule set for three seats: one deck and a joker, exact-size
#: contracts, no upcard, claims with two penalty cards, explicit contracts, a
#: last round without discards and a dry-stock stalemate with a 60-turn cap.
CUSTOM_MAYI = RuleSet(
    name="custom-mayi",
    contracts=(
        Contract("two sets", (_S3, _S3), deal=8),
        Contract("set and run", (_S3, _R4), deal=9),
        Contract("two runs, no discards", (_R4, _R4), deal=9, discards=False),
    ),
    jokers=1,
    decks=1,
    min_players=3,
    max_players=3,
    exact_contract_sizes=True,
    set_max=None,
    set_distinct_suits=False,
    ace_high=False,
    max_jokers_per_meld=1,
    joker_penalty=30,
    draw_from_discard=False,
    initial_upcard=False,
    explicit_contract=True,
    layoff_jokers=False,
    layoff_on_opening_turn=False,
    extra_melds=False,
    joker_swap=False,
    may_i=True,
    claim_penalty_cards=2,
    stalemate=Stalemate.DRY,
    # without a cap a DRY round can cycle forever: once every card but two is held or on
    # the table and nobody can lay off, the same card goes round and round
    turn_cap=60,
)

# --------------------------------------------------------------------------- policies

Policy = Callable[[GameState, int, list[Action], random.Random], Action]

_PROGRESS = (LayContract, LayOff, ExtraMeld, SwapJoker)


def uniform_policy(state: GameState, seat: int, legal: list[Action], rng: random.Random) -> Action:
    """OpenSpiel's random agent: every legal action equally likely."""
    return legal[rng.randrange(len(legal))]


# the same meld-affinity count the montecarlo bot's rollout policy uses
_connections = connections


_CLAIM_LINKS = 2
_CLAIM_P = 0.8


def eager_policy(state: GameState, seat: int, legal: list[Action], rng: random.Random) -> Action:
    """A random agent with a taste for progress, so that rounds end by going out more
    often than by stalemate and games stay short.  It takes a melding action (contract,
    lay-off, extra meld, swap) nine times in ten when one is legal; otherwise, one time
    in twenty, any legal action; otherwise it takes the discard pile's top (or claims it,
    four times in five) when the card connects with two of its cards for the melds its
    contract wants, and discards, at random, one of its least connected cards.  Every
    choice is a legal action drawn with ``rng`` only."""
    progress = [a for a in legal if isinstance(a, _PROGRESS)]
    if progress and rng.random() < 0.9:
        return progress[rng.randrange(len(progress))]
    if rng.random() < 0.05:
        return legal[rng.randrange(len(legal))]
    hand = state.hands[seat]
    if state.opened[seat]:
        sets = runs = True  # anything that lays off or melds is welcome
    else:
        kinds = {m.kind for m in state.rules.contract(state.round_number).melds}
        sets, runs = MeldKind.SET in kinds, MeldKind.RUN in kinds
    if state.phase is Phase.CLAIM:
        wanted = _connections(state.discards[-1], hand, sets, runs) >= _CLAIM_LINKS
        pick: type[Action] = Claim if wanted and rng.random() < _CLAIM_P else PassClaim
        choices = [a for a in legal if isinstance(a, pick)]
        return choices[0] if choices else legal[rng.randrange(len(legal))]
    if state.phase is Phase.DRAW:
        from_pile = [a for a in legal if isinstance(a, Draw) and a.source == "discard"]
        if from_pile and _connections(state.discards[-1], hand, sets, runs) >= 2:
            return from_pile[0]
        from_stock = [a for a in legal if isinstance(a, Draw) and a.source == "stock"]
        return (from_stock or legal)[0]
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        by_id = {c.id: c for c in hand}
        scored = [(_connections(by_id[a.card], hand, sets, runs), a) for a in discards]
        least = min(score for score, _ in scored)
        worst = [a for score, a in scored if score == least]
        return worst[rng.randrange(len(worst))]
    return legal[rng.randrange(len(legal))]


# --------------------------------------------------------------------------- helpers


class PlayoutFailure(AssertionError):
    """An invariant broke (or the engine raised) during a random playout."""


def _ids(cards: Iterable[Card]) -> list[int]:
    return [c.id for c in cards]


def _table_cards(state: GameState) -> list[Card]:
    return [c for m in state.table for c in m.cards]


def _places(state: GameState) -> list[Card]:
    """Every card in every place the state names, computed independently of all_cards()."""
    cards: list[Card] = [c for hand in state.hands for c in hand]
    cards.extend(state.stock)
    cards.extend(state.discards)
    cards.extend(_table_cards(state))
    return cards


def _penalty(rules: RuleSet, cards: Iterable[Card]) -> int:
    return sum(rules.penalty(c) for c in cards)


def _action_cards(action: Action) -> list[int]:
    """Card ids an action names publicly (they go to the table or the discard pile)."""
    match action:
        case Discard(card=c) | LayOff(card=c) | SwapJoker(card=c):
            return [c]
        case ExtraMeld(meld=spec):
            return list(spec.cards)
        case LayContract(melds=melds) if melds is not None:
            return [c for spec in melds for c in spec.cards]
    return []


def _fmt(action: Action) -> str:
    return json.dumps(action_to_dict(action), sort_keys=True)


# --------------------------------------------------------------------------- melds


def check_meld(meld: Meld, rules: RuleSet, seats: int) -> None:
    """Assert that a meld on the table is valid under ``rules``.

    Checked twice: directly against the rule set, and by rebuilding it through
    ``engine.melds`` (which must accept the same cards at the same position).
    """
    cards = meld.cards
    assert 0 <= meld.owner < seats, f"meld owner {meld.owner} is not a seat"
    assert len(set(_ids(cards))) == len(cards), f"a card appears twice in meld {meld.describe()}"
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
        assert set(_ids(old.cards)) <= set(_ids(new.cards)), f"set {index} lost a card"
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


# --------------------------------------------------------------------------- secrecy

_CARDISH_KEYS = ("card", "hand", "stock", "deck", "ids", "order", "pile")
_CODES: dict[tuple[int, int], list[str]] = {}


@functools.lru_cache(maxsize=16)
def _valid_pairs(decks: int, jokers: int) -> frozenset[tuple[str, str]]:
    """(id text, code) of every card of the deck, as the JSON of a card shows them."""
    return frozenset((str(c.id), c.code) for c in full_deck(decks, jokers))


def _codes(rules: RuleSet) -> list[str]:
    """The code of every card id of this rule set's deck."""
    key = (rules.decks, rules.jokers)
    found = _CODES.get(key)
    if found is None:
        found = _CODES[key] = [c.code for c in full_deck(rules.decks, rules.jokers)]
    return found


@dataclass
class _Scan:
    """What a JSON-like payload shows: card ids, ordered card lists and strings."""

    codes: list[str]
    found: list[int] = field(default_factory=list)
    seqs: list[list[int]] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)

    def walk(self, node: Any, key: str = "") -> None:
        kind = type(node)
        if kind is dict:
            self._dict(node)
        elif kind is list or kind is tuple:
            self._list(node, key)
        elif kind is str:
            self.strings.append(node)
        elif isinstance(node, Mapping):
            self._dict(dict(node))
        elif isinstance(node, list | tuple):
            self._list(list(node), key)

    def _dict(self, node: dict[Any, Any]) -> None:
        if "code" in node:
            cid = node.get("id")
            if type(cid) is int:
                self.found.append(cid)
                assert 0 <= cid < len(self.codes), f"card id {cid} is not in this deck"
                assert node["code"] == self.codes[cid], (
                    f"card {cid} rendered as {node['code']!r}, not {self.codes[cid]!r}"
                )
        strings = self.strings
        for k, v in node.items():
            strings.append(k if type(k) is str else str(k))
            kind = type(v)
            if kind is str:
                strings.append(v)
            elif kind is dict:
                self._dict(v)
            elif kind is list or kind is tuple:
                self._list(v, str(k).lower())
            elif v is None or kind is int or kind is bool or kind is float:
                continue
            else:
                self.walk(v, str(k).lower())

    def _list(self, node: Sequence[Any], key: str) -> None:
        if not node:
            return
        first = node[0]
        kind = type(first)
        if kind is dict and "code" in first:
            if all(type(x) is dict and "code" in x and "id" in x for x in node):
                self.seqs.append([x["id"] for x in node])
        elif kind is int and any(w in key for w in _CARDISH_KEYS):
            if all(type(x) is int for x in node):
                # bare card ids under a card-ish key count as cards too
                self.found.extend(node)
                self.seqs.append(list(node))
            return
        for item in node:
            kind = type(item)
            if kind is dict:
                self._dict(item)
            elif kind is str:
                self.strings.append(item)
            elif item is None or kind is int or kind is bool or kind is float:
                continue
            else:
                self.walk(item, key)


_LAST_STOCK: list[tuple[Sequence[Card], dict[int, int]]] = []


def _stock_positions(stock: Sequence[Card]) -> dict[int, int]:
    """Card id -> position in the stock (cached for the last stock asked about)."""
    if _LAST_STOCK and _LAST_STOCK[0][0] is stock:
        return _LAST_STOCK[0][1]
    positions = {c.id: i for i, c in enumerate(stock)}
    _LAST_STOCK[:] = [(stock, positions)]
    return positions


def _check_stock_order(seqs: list[list[int]], stock: Sequence[Card], what: str) -> None:
    """No list shows three consecutive stock cards in order (either direction)."""
    if len(stock) < 3:
        return
    positions = _stock_positions(stock)
    for seq in seqs:
        if len(positions.keys() & seq) < 3:
            continue
        at = [positions.get(cid, -9) for cid in seq]
        for i in range(len(at) - 2):
            x, y, z = at[i], at[i + 1], at[i + 2]
            assert not (x >= 0 and y - x == z - y and abs(y - x) == 1), (
                f"{what} reveals the stock's order"
            )


def _encodings(secret: bytes) -> list[str]:
    out = [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode()]
    return [s for s in out if len(s) >= 8]


@functools.lru_cache(maxsize=256)
def _secret_strings_cached(
    seed: bytes, rounds: tuple[int, ...], game_seed: bool
) -> tuple[str, ...]:
    out = _encodings(seed) if game_seed else []
    for r in rounds:
        out += _encodings(round_seed(seed, r))
    return tuple(out)


def _secret_strings(
    state: GameState, rounds: Iterable[int], *, game_seed: bool = True
) -> list[str]:
    """The game seed's and these rounds' seeds' text forms (hex, HEX, base64)."""
    return list(_secret_strings_cached(state.seed, tuple(rounds), game_seed))


#: a card as views and events render it, in the JSON text of a payload
_CARD_JSON = re.compile(r'\{"id": (\d+), "code": "([^"\\]*)"\}')
#: a non-empty list of integers under some key, in the JSON text of a payload
_INT_LIST = re.compile(r'"([^"\\]*)": \[(\d+(?:, \d+)*)\]')


def check_no_leak(
    payload: Any,
    *,
    rules: RuleSet,
    allowed: Collection[int],
    what: str,
    stock: Sequence[Card] = (),
    forbidden_strings: Sequence[str] = (),
    full: bool = True,
) -> None:
    """Assert that a view or a redacted event reveals nothing secret.

    Every card it shows must be in ``allowed`` (what the viewer may know) and rendered
    with its true code; no list of cards in it may reproduce three consecutive cards
    of ``stock``, in either direction;
    its JSON text must contain none of ``forbidden_strings`` (seeds).

    The payload is serialised to JSON (which must work) and its cards found in the
    text, as are lists of bare integers under card-ish keys (``cards``, ``hand``,
    ``stock``...), which count as card ids; a card not rendered exactly as
    ``{"id": int, "code": str}`` triggers the full structural walk, which ``full``
    asks for anyway.
    """
    text = json.dumps(payload)
    pairs = _CARD_JSON.findall(text)
    if full or text.count('"code": ') != len(pairs):
        scan = _Scan(_codes(rules))
        scan.walk(payload)
        found, seqs = scan.found, scan.seqs
    else:
        shown = set(pairs)
        wrong = shown - _valid_pairs(rules.decks, rules.jokers)
        assert not wrong, f"{what}: cards rendered wrongly (id, code): {sorted(wrong)}"
        found = [int(cid) for cid, _ in shown]
        # text order: adjacent cards of different lists count as one list (stricter)
        seqs = [[int(cid) for cid, _ in pairs]] if stock else []
        for key, numbers in _INT_LIST.findall(text):
            if any(w in key.lower() for w in _CARDISH_KEYS):
                ids = [int(x) for x in numbers.split(", ")]
                found.extend(ids)
                seqs.append(ids)
    leaked = sorted(set(found).difference(allowed))
    assert not leaked, f"{what} reveals card ids {leaked} the viewer may not know"
    _check_stock_order(seqs, stock, what)
    for secret in forbidden_strings:
        assert secret not in text, f"{what} reveals a seed"


def _public_now(state: GameState) -> set[int]:
    ids = set(_ids(state.discards))
    ids.update(_ids(_table_cards(state)))
    return ids


def _check_views(
    state: GameState,
    public: Collection[int],
    *,
    full: bool,
    seats: Collection[int] | None = None,
    spectator: bool = True,
    memo: dict[str, Any] | None = None,
) -> None:
    """The spectator view (if ``spectator``) and the views of ``seats`` (default: every
    seat) show only what their viewer may know, and agree with the state.

    ``memo`` (kept by the caller between the states of one game) lets a step scan
    only the parts of a view that changed since that viewer's previous view in the
    same round: what a viewer may know only grows within a round (a card leaves a
    hand only face up), so an unchanged part that passed then passes now.
    """
    rules = state.rules
    running = not state.is_terminal()
    forbidden = _secret_strings(state, [state.round_number]) if running else []
    stock = state.stock if running else ()
    base = _public_now(state) | set(public)
    previous: dict[int | None, dict[str, Any]] = {}
    if memo is not None:
        if memo.get("round") != state.round_number:
            memo["round"] = state.round_number
            memo["views"] = {}
        previous = memo["views"]

    def changed_part(viewer: int | None, view: dict[str, Any]) -> dict[str, Any]:
        before = None if full else previous.get(viewer)
        if memo is not None:
            previous[viewer] = view
        if before is None:
            return view
        return {k: v for k, v in view.items() if k not in before or before[k] != v}

    if spectator:
        view = spectator_view(state)
        check_no_leak(
            changed_part(None, view),
            rules=rules,
            allowed=base,
            what="spectator_view",
            forbidden_strings=forbidden,
            stock=stock,
            full=full,
        )
        _check_view_facts(state, view, "spectator_view")
        assert "hand" not in view, "the spectator view shows a hand"
    for seat in range(state.seats) if seats is None else sorted(seats):
        view = seat_view(state, seat)
        check_no_leak(
            changed_part(seat, view),
            rules=rules,
            allowed=base | set(_ids(state.hands[seat])),
            what=f"seat_view(seat={seat})",
            forbidden_strings=forbidden,
            stock=stock,
            full=full,
        )
        _check_view_facts(state, view, f"seat_view(seat={seat})")
        own = _find_own_hand(view)
        assert own == _ids(state.hands[seat]), (
            f"seat_view(seat={seat}) shows hand {own}, not {_ids(state.hands[seat])}"
        )


def _check_view_facts(state: GameState, view: Mapping[str, Any], what: str) -> None:
    """The public facts a view states agree with the state (where the view names them)."""
    players = view.get("players")
    if isinstance(players, list):
        sizes = [p.get("hand_size") for p in players]
        assert sizes == [len(h) for h in state.hands], f"{what} hand sizes {sizes}"
        scores = [p.get("score") for p in players]
        assert scores == list(state.scores), f"{what} scores {scores}"
    if "stock_size" in view:
        assert view["stock_size"] == len(state.stock), f"{what} stock size"
    if "discard_size" in view:
        assert view["discard_size"] == len(state.discards), f"{what} discard size"
    if "to_act" in view:
        assert list(view["to_act"]) == list(state.to_act), f"{what} to_act"
    top = view.get("discard_top")
    if state.discards:
        assert isinstance(top, Mapping) and top.get("id") == state.discards[-1].id, f"{what} top"
    if isinstance(view.get("table"), list):
        shown = [[c["id"] for c in m["cards"]] for m in view["table"]]
        assert shown == [_ids(m.cards) for m in state.table], f"{what} table"


def _find_own_hand(view: Mapping[str, Any]) -> list[int]:
    """The viewer's own hand as the view lists it (``view["hand"]``, cards in order)."""
    hand = view.get("hand")
    assert isinstance(hand, list), "a seat view shows its hand as a list of cards"
    return [c["id"] for c in hand]


def _check_event_list(
    events: Sequence[Event],
    *,
    rules: RuleSet,
    seats: int,
    shared: set[int],
    own: Sequence[set[int]],
    stock: Sequence[Card],
    forbidden: Callable[[str], list[str]],
    full: bool,
) -> None:
    """Each event, as each viewer gets it, shows no card outside ``shared`` (plus the
    viewer's ``own``), no three stock cards in order and none of ``forbidden(type)``."""
    for ev in events:
        ev_type = str(ev.type)
        secrets = forbidden(ev_type)
        public = ev.for_seat(None)
        check_no_leak(
            public,
            rules=rules,
            allowed=shared,
            what=f"event {ev_type!r} for spectators",
            forbidden_strings=secrets,
            stock=stock,
            full=full,
        )
        for k in ev.secret:
            assert type(k) is int and 0 <= k < seats, f"event {ev_type!r} secret for {k!r}"
        for viewer in range(seats):
            redacted = ev.for_seat(viewer)
            if viewer not in ev.secret:
                assert redacted == public, f"event {ev_type!r}: seat {viewer} sees more than public"
                continue
            check_no_leak(
                redacted,
                rules=rules,
                allowed=shared | own[viewer],
                what=f"event {ev_type!r} for seat {viewer}",
                forbidden_strings=secrets,
                stock=stock,
                full=full,
            )


def _check_events(
    prev: GameState,
    seat: int,
    action: Action,
    nxt: GameState,
    events: Sequence[Event],
    public_before: Collection[int],
    public_after: Collection[int],
    *,
    full: bool,
) -> None:
    """Redacted events show each viewer only what it may know.

    ``public_before``/``public_after``: the cards whose whereabouts every viewer knows
    (face up, or seen taken from the discard pile) before and after the action.

    Within a round, a viewer may see those, the cards on the table before and after,
    the discard pile's top before (it may have been taken), the cards the action names
    and its own hand before and after.  Never a card that came from the stock or from
    under the pile's top (a reshuffle) into another hand, another hand, the stock's
    order, the game seed or the round's seed.

    When the action ends the round, the events up to the next ``round_started`` are
    judged by the old round (plus the actor's whole last hand if it went out, since it
    all went face up; ``round_ended`` may reveal the old round's seed) and the rest by
    the new deal (own new hand, the new upcard).
    """
    assert events, f"{_fmt(action)} produced no event"
    rules = prev.rules
    seats = prev.seats
    named = _action_cards(action)
    round_changed = nxt.round_number != prev.round_number or nxt.is_terminal()
    running = [] if nxt.is_terminal() else [nxt.round_number]

    def forbidden_old(ev_type: str) -> list[str]:
        # the game seed stays secret until the game is over; a round's seed until it ends
        out = _secret_strings(prev, running, game_seed=ev_type != "game_ended")
        if ev_type not in ("round_ended", "game_ended"):
            out += _secret_strings(prev, [prev.round_number], game_seed=False)
        return out

    def forbidden_new(ev_type: str) -> list[str]:
        return _secret_strings(nxt, running)

    top = {prev.discards[-1].id} if prev.discards else set()
    if not round_changed:
        shared = set(public_after) | top | set(named)
        shared.update(_ids(_table_cards(prev)))
        shared.update(_ids(_table_cards(nxt)))
        own = [set(_ids(prev.hands[v])) | set(_ids(nxt.hands[v])) for v in range(seats)]
        _check_event_list(
            events,
            rules=rules,
            seats=seats,
            shared=shared,
            own=own,
            stock=nxt.stock,
            forbidden=forbidden_old,
            full=full,
        )
        return
    split = next((i for i, ev in enumerate(events) if ev.type == "round_started"), len(events))
    shared = set(public_before) | _public_now(prev) | set(named)
    if nxt.scores[seat] == prev.scores[seat]:
        # the actor went out: everything it held went to the table or the discards
        shared.update(_ids(prev.hands[seat]))
    _check_event_list(
        events[:split],
        rules=rules,
        seats=seats,
        shared=shared,
        own=[set(_ids(prev.hands[v])) for v in range(seats)],
        stock=prev.stock,
        forbidden=forbidden_old,
        full=full,
    )
    assert split == len(events) or not nxt.is_terminal(), "a round started after the game"
    _check_event_list(
        events[split:],
        rules=rules,
        seats=seats,
        shared=set(public_after),
        own=[set(_ids(nxt.hands[v])) for v in range(seats)],
        stock=nxt.stock,
        forbidden=forbidden_new,
        full=full,
    )


def _check_deal_events(state: GameState, events: Sequence[Event]) -> None:
    """The first deal's events show each seat its own hand and nobody anything else."""
    rules = state.rules
    forbidden = _secret_strings(state, [state.round_number])
    public = _public_now(state)
    for ev in events:
        check_no_leak(
            ev.for_seat(None),
            rules=rules,
            allowed=public,
            what=f"deal event {ev.type!r} for spectators",
            stock=state.stock,
            forbidden_strings=forbidden,
        )
        for viewer in range(state.seats):
            check_no_leak(
                ev.for_seat(viewer),
                rules=rules,
                allowed=public | set(_ids(state.hands[viewer])),
                what=f"deal event {ev.type!r} for seat {viewer}",
                stock=state.stock,
                forbidden_strings=forbidden,
            )


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
        ("hands+stock+discards+table", _places(state)),
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
    every seat and the spectator).  ``memo``: see ``_check_views``.
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

    _check_views(
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
        assert len({_fmt(a) for a in legal}) == len(legal), f"duplicate legal actions: {legal}"
        for action in legal:
            try:
                state.check(seat, action)
                nxt, events = state.apply_action(seat, action)
            except (IllegalActionError, InvalidActionError) as exc:
                raise AssertionError(
                    f"legal action {_fmt(action)} of seat {seat} refused: {exc}"
                ) from exc
            check_conservation(nxt)
            assert events, f"{_fmt(action)} produced no event"
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
    listed = {_fmt(a) for a in legal}
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
        if _fmt(action) not in listed:
            assert _refused(state, seat, action), f"legal but not listed: {_fmt(action)}"
    rules = state.rules
    offs = {(a.card, a.meld) for a in legal if isinstance(a, LayOff)}
    swaps = {(a.card, a.meld) for a in legal if isinstance(a, SwapJoker)}
    for c in state.hands[seat]:
        for i, meld in enumerate(state.table):
            if (c.id, i) not in offs:
                for end in layoff_ends(meld, c, rules):
                    action = LayOff(c.id, i, end)
                    assert _refused(state, seat, action), f"legal but not listed: {_fmt(action)}"
            if rules.joker_swap and not c.is_joker and (c.id, i) not in swaps:
                try:
                    swap_joker(meld, c, rules)
                except IllegalActionError:
                    continue
                action = SwapJoker(c.id, i)
                assert _refused(state, seat, action), f"legal but not listed: {_fmt(action)}"


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
        self.public = _public_now(self.start)
        check_invariants(self.start, deep=True, public=self.public, validated=self.validated)
        _check_deal_events(self.start, self.start_events)

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
                            f"{_fmt(action)} changed seat {u}'s hand"
                        )
            assert len(nxt.table) >= len(prev.table), "a meld left the table"
            for i, old in enumerate(prev.table):
                _check_meld_growth(old, nxt.table[i], i)
            for u in range(prev.seats):
                assert nxt.opened[u] or not prev.opened[u], f"seat {u} closed again"
            self._check_hand_delta(prev, seat, action, nxt)
        else:
            self._check_round_scores(prev, seat, action, nxt)
            self.turns_in_round = 0

        if new_round:
            self._check_round_start(nxt)
            self.public = _public_now(nxt)
        else:
            # a card seen face up stays known (also when taken from the discard pile),
            # unless it went back into the stock (a reshuffle) or from there, or from
            # under the pile's top, into a hand: where it is then is secret again
            hidden = set(_ids(prev.stock)) | set(_ids(prev.discards[:-1]))
            for u in range(nxt.seats):
                if nxt.hands[u] is not prev.hands[u]:
                    entered = set(_ids(nxt.hands[u])) - set(_ids(prev.hands[u]))
                    self.public -= entered & hidden
            self.public |= _public_now(nxt)
            self.public -= set(_ids(nxt.stock))
        _check_events(
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
                assert c not in _ids(nxt.hands[seat])
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
                assert c not in _ids(nxt.hands[seat])
            case EndTurn() | Claim() | PassClaim():
                pass

    def _check_round_scores(
        self, prev: GameState, seat: int, action: Action, nxt: GameState
    ) -> None:
        """When a round ends, each score grows by the penalty of the hand left."""
        rules = prev.rules
        deltas = [a - b for a, b in zip(nxt.scores, prev.scores, strict=True)]
        assert all(d >= 0 for d in deltas), f"a score went down: {prev.scores} -> {nxt.scores}"
        if prev.phase is Phase.CLAIM:
            return
        for u in range(prev.seats):
            if u != seat:
                expected = _penalty(rules, prev.hands[u])
                assert deltas[u] == expected, (
                    f"seat {u} scored {deltas[u]} for a hand worth {expected}"
                )
        hand = prev.hands[seat]
        match action:
            case Discard(card=c):
                expected = _penalty(rules, [x for x in hand if x.id != c])
            case Draw() | EndTurn():
                expected = _penalty(rules, hand)
            case _:
                expected = 0  # only going out ends a round on a meld, lay-off or swap
        assert deltas[seat] == expected, (
            f"seat {seat} scored {deltas[seat]} after {_fmt(action)}, expected {expected}"
        )


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


# --------------------------------------------------------------------------- playouts


@dataclass
class Playout:
    """A finished random game and what it took to play it."""

    final: GameState
    steps: int
    actions: list[tuple[int, Action]]
    events: list[Event]


def random_playout(
    rules: RuleSet,
    seats: int,
    seed: bytes,
    rng: random.Random,
    *,
    check: bool = True,
    deep_every: int = 1,
    policy: Policy = uniform_policy,
    max_steps: int = 500_000,
    keep_log: bool = False,
) -> Playout:
    """Play one game to the end with random agents, checking invariants after each action.

    ``deep_every``: run the expensive checks every that many steps (and at every
    round boundary); 0 never (beyond round boundaries).
    """
    state, first_events = GameState.new_game_with_events(rules, seats, seed)
    checker = InvariantChecker(state, first_events) if check else None
    actions: list[tuple[int, Action]] = []
    events: list[Event] = list(first_events) if keep_log else []
    steps = 0
    last = ""
    try:
        while not state.is_terminal():
            if steps >= max_steps:
                raise AssertionError(f"no end after {max_steps} steps")
            to_act = state.to_act
            seat = to_act[rng.randrange(len(to_act))]
            legal = state.legal_actions(seat)
            assert legal, f"seat {seat} is to act but has no legal action"
            action = policy(state, seat, legal, rng)
            last = f" at {_fmt(action)} by seat {seat} in {state.phase}"
            nxt, new_events = state.apply_action(seat, action)
            steps += 1
            if keep_log:
                actions.append((seat, action))
                events.extend(new_events)
            if checker is not None:
                deep = deep_every > 0 and steps % deep_every == 0
                checker.step(state, seat, action, nxt, new_events, deep=deep)
            state = nxt
        if checker is not None:
            _check_game_over(state)
    except Exception as exc:
        raise PlayoutFailure(
            f"{rules.name} seats={seats} seed={seed.hex()} step={steps}{last}: "
            f"{type(exc).__name__}: {exc} (replay with the same rng seed and policy)"
        ) from exc
    return Playout(state, steps, actions, events)


def _check_game_over(state: GameState) -> None:
    assert state.is_terminal(), "the loop ended before the game"
    assert state.round_number == state.rules.rounds
    assert all(s >= 0 for s in state.scores)
    for seat in range(state.seats):
        assert state.legal_actions(seat) == [], "legal actions after the game ended"


def play_random_game(
    rules: RuleSet,
    seats: int,
    seed: bytes,
    rng: random.Random,
    check: bool = True,
    *,
    deep_every: int = 1,
    policy: Policy = uniform_policy,
) -> tuple[GameState, int]:
    """Play one complete random game; returns the final state and the number of steps."""
    playout = random_playout(
        rules, seats, seed, rng, check=check, deep_every=deep_every, policy=policy
    )
    return playout.final, playout.steps


def iter_states(
    rules: RuleSet, seats: int, seed: bytes, actions: Iterable[tuple[int, Action]]
) -> Iterator[tuple[GameState, list[Event]]]:
    """Replay logged actions from a new game: yields (state after, events) per action."""
    state = GameState.new_game(rules, seats, seed)
    for seat, action in actions:
        state, events = state.apply_action(seat, action)
        yield state, events
