"""Secrecy checks: no view or event shows what its viewer may not know."""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.actions import (
    Action,
)
from engine.cards import Card, full_deck
from engine.events import Event
from engine.game import GameState
from engine.rulesets import RuleSet
from engine.shuffle import round_seed
from engine.views import seat_view, spectator_view
from tests.support.common import action_card_ids, action_text, card_ids, table_cards

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


def secret_strings(state: GameState, rounds: Iterable[int], *, game_seed: bool = True) -> list[str]:
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


def public_now(state: GameState) -> set[int]:
    ids = set(card_ids(state.discards))
    ids.update(card_ids(table_cards(state)))
    return ids


def check_views(
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
    forbidden = secret_strings(state, [state.round_number]) if running else []
    stock = state.stock if running else ()
    base = public_now(state) | set(public)
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
        check_view_facts(state, view, "spectator_view")
        assert "hand" not in view, "the spectator view shows a hand"
    for seat in range(state.seats) if seats is None else sorted(seats):
        view = seat_view(state, seat)
        check_no_leak(
            changed_part(seat, view),
            rules=rules,
            allowed=base | set(card_ids(state.hands[seat])),
            what=f"seat_view(seat={seat})",
            forbidden_strings=forbidden,
            stock=stock,
            full=full,
        )
        check_view_facts(state, view, f"seat_view(seat={seat})")
        own = find_own_hand(view)
        assert own == card_ids(state.hands[seat]), (
            f"seat_view(seat={seat}) shows hand {own}, not {card_ids(state.hands[seat])}"
        )


def check_view_facts(state: GameState, view: Mapping[str, Any], what: str) -> None:
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
        assert shown == [card_ids(m.cards) for m in state.table], f"{what} table"


def find_own_hand(view: Mapping[str, Any]) -> list[int]:
    """The viewer's own hand as the view lists it (``view["hand"]``, cards in order)."""
    hand = view.get("hand")
    assert isinstance(hand, list), "a seat view shows its hand as a list of cards"
    return [c["id"] for c in hand]


def laid_melds(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The melds an action's events show laid (a contract's, an extra meld)."""
    melds: list[dict[str, Any]] = []
    for e in events:
        if e.type == "laid_contract":
            melds.extend(e.public["melds"])
        elif e.type == "extra_meld":
            melds.append(e.public["meld"])
    return melds


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


def check_events(
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
    assert events, f"{action_text(action)} produced no event"
    rules = prev.rules
    seats = prev.seats
    named = action_card_ids(action)
    round_changed = nxt.round_number != prev.round_number or nxt.is_terminal()
    running = [] if nxt.is_terminal() else [nxt.round_number]

    def forbidden_old(ev_type: str) -> list[str]:
        # the game seed stays secret until the game is over; a round's seed until it ends
        out = secret_strings(prev, running, game_seed=ev_type != "game_ended")
        if ev_type not in ("round_ended", "game_ended"):
            out += secret_strings(prev, [prev.round_number], game_seed=False)
        return out

    def forbidden_new(ev_type: str) -> list[str]:
        return secret_strings(nxt, running)

    top = {prev.discards[-1].id} if prev.discards else set()
    if not round_changed:
        shared = set(public_after) | top | set(named)
        shared.update(card_ids(table_cards(prev)))
        shared.update(card_ids(table_cards(nxt)))
        own = [set(card_ids(prev.hands[v])) | set(card_ids(nxt.hands[v])) for v in range(seats)]
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
    shared = set(public_before) | public_now(prev) | set(named)
    if nxt.scores[seat] == prev.scores[seat]:
        # the actor went out: everything it held went to the table or the discards
        shared.update(card_ids(prev.hands[seat]))
    # what the actor laid is on the table for everyone, also when laying ended the round
    # (a dead round: every contract laid, nothing left to lay off)
    held = set(card_ids(prev.hands[seat]))
    shared.update(c["id"] for m in laid_melds(events) for c in m["cards"] if c["id"] in held)
    _check_event_list(
        events[:split],
        rules=rules,
        seats=seats,
        shared=shared,
        own=[set(card_ids(prev.hands[v])) for v in range(seats)],
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
        own=[set(card_ids(nxt.hands[v])) for v in range(seats)],
        stock=nxt.stock,
        forbidden=forbidden_new,
        full=full,
    )


def check_deal_events(state: GameState, events: Sequence[Event]) -> None:
    """The first deal's events show each seat its own hand and nobody anything else."""
    rules = state.rules
    forbidden = secret_strings(state, [state.round_number])
    public = public_now(state)
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
                allowed=public | set(card_ids(state.hands[viewer])),
                what=f"deal event {ev.type!r} for seat {viewer}",
                stock=state.stock,
                forbidden_strings=forbidden,
            )
