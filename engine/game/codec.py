"""The stored form of a GameState (to_dict/from_dict): one codec per field, in field order."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from engine.cards import Card, card
from engine.errors import InvalidActionError, checked_bool, checked_int
from engine.game import dealing
from engine.game.phase import Phase
from engine.melds import Meld, meld_from_dict, meld_to_dict
from engine.rulesets import RuleSet, ruleset

if TYPE_CHECKING:
    from engine.game.state import GameState

#: the fields decoded so far, by field name: a field's check may read earlier fields
Decoded = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FieldCodec:
    """How one GameState field is stored: under ``key``, as ``encode`` writes it;
    ``decode`` reads it back and validates it (InvalidActionError), given the fields
    decoded before it."""

    key: str
    encode: Callable[[Any], Any]
    decode: Callable[[Any, Decoded], Any]


def _same(value: Any) -> Any:
    return value


def _ids(cards: tuple[Card, ...]) -> list[int]:
    return [c.id for c in cards]


def _cards(ids: Any, what: str, rules: RuleSet) -> tuple[Card, ...]:
    if not isinstance(ids, list | tuple):
        raise InvalidActionError(f"{what} must be a list of card ids")
    high = rules.deck_size - 1
    return tuple(card(checked_int(i, what, 0, high), rules.decks) for i in ids)


def _rules_out(rules: RuleSet) -> dict[str, Any]:
    written: dict[str, Any] = json.loads(json.dumps(rules.to_dict()))
    return written


def _rules_in(raw: Any, _: Decoded) -> RuleSet:
    if isinstance(raw, RuleSet):
        return raw
    return ruleset(raw) if isinstance(raw, str) else RuleSet.from_dict(raw)


def _hands_in(raw: Any, d: Decoded) -> tuple[tuple[Card, ...], ...]:
    if not isinstance(raw, list | tuple) or len(raw) != d["seats"]:
        raise InvalidActionError("one hand per seat")
    rules = d["rules"]
    return tuple(
        tuple(sorted(_cards(h, f"hands[{s}]", rules), key=_BY_ID)) for s, h in enumerate(raw)
    )


def _table_in(raw: Any, d: Decoded) -> tuple[Meld, ...]:
    rules, seats = d["rules"], d["seats"]
    table = tuple(meld_from_dict(m, rules, seats, f"table[{i}]") for i, m in enumerate(raw))
    everything = [c.id for h in d["hands"] for c in h]
    everything += [c.id for c in d["stock"]] + [c.id for c in d["discards"]]
    everything += [c.id for m in table for c in m.cards]
    if sorted(everything) != list(range(rules.deck_size)):
        raise InvalidActionError("every card of the deck must be in exactly one place")
    return table


def _scores_in(raw: Any, d: Decoded) -> tuple[int, ...]:
    scores = tuple(checked_int(x, "scores") for x in raw)
    opened = d["opened"]
    if len(opened) != d["seats"] or len(scores) != d["seats"]:
        raise InvalidActionError("opened and scores need one entry per seat")
    for m in d["table"]:
        if not opened[m.owner]:
            raise InvalidActionError(f"a meld belongs to seat {m.owner}, who is not open")
    return scores


def _taken_in(raw: Any, d: Decoded) -> int | None:
    if raw is None:
        return None
    return checked_int(raw, "taken_from_discard", 0, d["rules"].deck_size - 1)


def _answers_in(raw: Any, d: Decoded) -> tuple[bool | None, ...]:
    answers = tuple(None if a is None else checked_bool(a, "claim_answers") for a in raw)
    if d["phase"] is Phase.CLAIM:
        if len(answers) != d["seats"] or not d["discards"]:
            raise InvalidActionError("a claim window needs a discard and one answer slot per seat")
    elif answers:
        raise InvalidActionError("claim answers outside a claim window")
    return answers


def _orders_in(raw: Any, d: Decoded) -> tuple[tuple[int, tuple[int, ...]], ...]:
    if not isinstance(raw, Mapping):
        raise InvalidActionError("stock_orders must be an object")
    return dealing.check_stock_orders(d["rules"], {int(k): v for k, v in raw.items()})


def _abandoned_in(raw: Any, d: Decoded) -> bool:
    abandoned = checked_bool(raw, "abandoned")
    if abandoned and d["phase"] is not Phase.GAME_OVER:
        raise InvalidActionError("only a game over may be abandoned")
    return abandoned


def _count(name: str) -> FieldCodec:
    return FieldCodec(name, _same, lambda raw, _: checked_int(raw, name))


def _flag(name: str) -> FieldCodec:
    return FieldCodec(name, _same, lambda raw, _: checked_bool(raw, name))


_BY_ID = attrgetter("id")

#: every GameState field (but derived caches), in field order, which is also the order
#: of the stored form's keys and of the checks
CODECS: dict[str, FieldCodec] = {
    "rules": FieldCodec("rules", _rules_out, _rules_in),
    "seats": FieldCodec(
        "seats",
        _same,
        lambda raw, d: checked_int(raw, "seats", d["rules"].min_players, d["rules"].max_players),
    ),
    "seed": FieldCodec("seed", bytes.hex, lambda raw, _: bytes.fromhex(raw)),
    "round_number": FieldCodec(
        "round", _same, lambda raw, d: checked_int(raw, "round", 1, d["rules"].rounds)
    ),
    "phase": FieldCodec("phase", attrgetter("value"), lambda raw, _: Phase(raw)),
    "current": FieldCodec(
        "current", _same, lambda raw, d: checked_int(raw, "current", 0, d["seats"] - 1)
    ),
    "hands": FieldCodec("hands", lambda hands: [_ids(h) for h in hands], _hands_in),
    "stock": FieldCodec("stock", _ids, lambda raw, d: _cards(raw, "stock", d["rules"])),
    "discards": FieldCodec("discards", _ids, lambda raw, d: _cards(raw, "discards", d["rules"])),
    "table": FieldCodec("table", lambda table: [meld_to_dict(m) for m in table], _table_in),
    "opened": FieldCodec(
        "opened", list, lambda raw, _: tuple(checked_bool(x, "opened") for x in raw)
    ),
    "scores": FieldCodec("scores", list, _scores_in),
    "taken_from_discard": FieldCodec("taken_from_discard", _same, _taken_in),
    "laid_this_turn": _flag("laid_this_turn"),
    "claim_answers": FieldCodec("claim_answers", list, _answers_in),
    "exhaustions": _count("exhaustions"),
    "epoch": _count("epoch"),
    "turns_completed": _count("turns_completed"),
    "action_count": _count("action_count"),
    "stock_orders": FieldCodec(
        "stock_orders", lambda orders: {str(r): list(o) for r, o in orders}, _orders_in
    ),
    "abandoned": FieldCodec("abandoned", _same, _abandoned_in),
}


class StateCodec:
    """The stored form of the state class it is made for (GameState, by its own module,
    which this one may not import back): :data:`CODECS` checked against the class's
    field list, and the per-field encoders and decoders in that order."""

    def __init__(self, state_class: type[GameState]) -> None:
        stored = [f for f in fields(state_class) if f.init]
        if list(CODECS) != [f.name for f in stored]:  # fail at import, not on a stored game
            raise AssertionError("engine.game.codec.CODECS must list GameState's fields in order")
        self._state_class = state_class
        self._encoders = tuple((c.key, attrgetter(name), c.encode) for name, c in CODECS.items())
        # a key may be missing from the stored form where the field has a default: it then
        # reads as the default's stored form would, checks included
        self._decoders = tuple(
            (f.name, c.key, c.decode, MISSING if f.default is MISSING else c.encode(f.default))
            for f, c in zip(stored, CODECS.values(), strict=True)
        )
        self._keys = frozenset(c.key for c in CODECS.values())

    def to_dict(self, state: GameState) -> dict[str, Any]:
        """:meth:`GameState.to_dict`."""
        return {key: encode(read(state)) for key, read, encode in self._encoders}

    def from_dict(self, data: Mapping[str, Any]) -> GameState:
        """:meth:`GameState.from_dict` (which turns stray exceptions into InvalidActionError)."""
        if not isinstance(data, Mapping):
            raise InvalidActionError("a game state is an object")
        unknown = sorted(set(data) - self._keys)
        if unknown:
            raise InvalidActionError(f"unknown game state keys: {unknown}")
        decoded: Decoded = {}
        for name, key, decode, default in self._decoders:
            raw = data[key] if default is MISSING else data.get(key, default)
            decoded[name] = decode(raw, decoded)
        return self._state_class(**decoded)
