"""The stored forms: engine state and events ⇄ the store's protobuf messages.

The stored game state has its own compact message (``EngineState``), written
field by field from one table (``_FIELDS``) because it is on the hot path of every
move: a move rewrites only the fields it changed.  Conversions of the
public messages live in :mod:`glintwick.convert`, shared with the clients.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from engine.cards import Card
from engine.events import Event
from engine.game import GameState
from engine.melds import Meld
from engine.rulesets import RuleSet
from glintwick.convert import (
    KIND_FROM_PB,
    KIND_TO_PB,
    fill_struct,
    rules_from_pb,
    rules_to_pb,
    unfloat,
)
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb

_ANSWER_TO_PB = {
    None: spb.CLAIM_ANSWER_PENDING,
    True: spb.CLAIM_ANSWER_CLAIM,
    False: spb.CLAIM_ANSWER_PASS,
}
_ANSWER_FROM_PB = {v: k for k, v in _ANSWER_TO_PB.items()}


def stored_event(event: Event) -> spb.StoredEvent:
    message = spb.StoredEvent()
    fill_stored_event(message, event)
    return message


def fill_stored_event(message: spb.StoredEvent, event: Event) -> None:
    """Write ``event`` into an empty ``message`` (in place: a move's events are
    written straight into its log entry, not built apart and copied in)."""
    message.type = str(event.type)
    if event.seat is not None:
        message.seat = event.seat
    fill_struct(message.public, event.public)
    for seat, secret in sorted(event.secret.items()):
        fill_struct(message.secret[seat], secret)


def event_from_stored(message: spb.StoredEvent) -> Event:
    return Event(
        type=message.type,
        seat=message.seat if message.HasField("seat") else None,
        public=unfloat(json_format.MessageToDict(message.public)),
        secret={
            seat: unfloat(json_format.MessageToDict(payload))
            for seat, payload in sorted(message.secret.items())
        },
    )


def stored_event_to_pb(message: spb.StoredEvent, viewer: int | None, version: int) -> pb.Event:
    """A stored event as ``viewer`` may see it (secrets only for their own seat)."""
    out = pb.Event()
    fill_event_pb(out, message, viewer, version)
    return out


def fill_event_pb(
    out: pb.Event, message: spb.StoredEvent, viewer: int | None, version: int
) -> None:
    """:func:`stored_event_to_pb` into an empty ``out`` (a response's events are
    written in place, not built apart and copied in)."""
    out.version = version
    out.type = message.type
    if message.HasField("seat"):
        out.seat = message.seat
    data = out.data
    data.CopyFrom(message.public)
    if viewer is not None and viewer in message.secret:
        data.MergeFrom(message.secret[viewer])  # (a map: the secret's keys win)


# ------------------------------------------------------------------ the stored state
#
# The stored state's fields are listed once, in _FIELDS: each says how the engine
# state's value is written into an empty message, rewritten after a move, and read
# back (as GameState.from_dict's form, which validates it).  The message's layout
# is storage.proto's EngineState, whose field names are GameState.to_dict's keys;
# tests/unit/test_codec.py checks that the table, the message and to_dict agree.


@dataclass(frozen=True, slots=True)
class _Field:
    name: str  # the field's name in EngineState, and its value's in GameState.to_dict
    write: Callable[[spb.EngineState, GameState], None]
    # a move's rewrite: given the message holding ``before``, make it hold ``after``
    update: Callable[[spb.EngineState, GameState, GameState], None]
    read: Callable[[spb.EngineState], Any]  # the value as GameState.from_dict takes it


def _scalar(
    name: str,
    attribute: str | None = None,
    encode: Callable[[Any], Any] | None = None,
    decode: Callable[[Any], Any] | None = None,
) -> _Field:
    """A scalar field (``attribute``: the state's name for it, when another), set
    whatever it holds: a set costs less than a comparison."""
    value: Callable[[Any], Any] = operator.attrgetter(attribute or name)
    if encode is not None:
        plain, convert_value = value, encode
        value = lambda state: convert_value(plain(state))  # noqa: E731

    def write(message: spb.EngineState, state: GameState) -> None:
        setattr(message, name, value(state))

    def update(message: spb.EngineState, before: GameState, after: GameState) -> None:
        setattr(message, name, value(after))

    read: Callable[[Any], Any] = operator.attrgetter(name)
    if decode is not None:
        stored, convert_read = read, decode
        read = lambda message: convert_read(stored(message))  # noqa: E731
    return _Field(name, write, update, read)


def _optional(name: str) -> _Field:
    """A scalar with presence: unset for None."""

    def write(message: spb.EngineState, state: GameState) -> None:
        value = getattr(state, name)
        if value is not None:
            setattr(message, name, value)

    def update(message: spb.EngineState, before: GameState, after: GameState) -> None:
        value = getattr(after, name)
        if value is None:
            message.ClearField(name)  # type: ignore[arg-type]
        else:
            setattr(message, name, value)

    def read(message: spb.EngineState) -> Any:
        return getattr(message, name) if message.HasField(name) else None  # type: ignore[arg-type]

    return _Field(name, write, update, read)


def _repeated(
    name: str,
    encode: Callable[[Any], Any] | None = None,
    decode: Callable[[Any], Any] | None = None,
) -> _Field:
    """A repeated scalar field, rewritten when its values changed."""

    def values(state: GameState) -> Any:
        value = getattr(state, name)
        return value if encode is None else [encode(v) for v in value]

    def write(message: spb.EngineState, state: GameState) -> None:
        getattr(message, name).extend(values(state))

    def update(message: spb.EngineState, before: GameState, after: GameState) -> None:
        if getattr(after, name) != getattr(before, name):
            _rewrite(getattr(message, name), values(after))

    def read(message: spb.EngineState) -> Any:
        stored = getattr(message, name)
        return list(stored) if decode is None else [decode(v) for v in stored]

    return _Field(name, write, update, read)


def _cards(name: str) -> _Field:
    """A repeated field of card ids, rewritten unless the cards are the same object."""

    def write(message: spb.EngineState, state: GameState) -> None:
        getattr(message, name).extend([c.id for c in getattr(state, name)])

    def update(message: spb.EngineState, before: GameState, after: GameState) -> None:
        _update_ids(getattr(message, name), getattr(before, name), getattr(after, name))

    def read(message: spb.EngineState) -> Any:
        return list(getattr(message, name))

    return _Field(name, write, update, read)


def _write_hands(message: spb.EngineState, state: GameState) -> None:
    for hand in state.hands:
        message.hands.add().ids.extend([c.id for c in hand])


def _update_hands(message: spb.EngineState, before: GameState, after: GameState) -> None:
    if after.hands is before.hands:
        return
    hands = message.hands
    if len(hands) != len(after.hands) or len(before.hands) != len(after.hands):
        del hands[:]
        _write_hands(message, after)
    else:
        for index, hand in enumerate(after.hands):
            _update_ids(hands[index].ids, before.hands[index], hand)


def _write_table(message: spb.EngineState, state: GameState) -> None:
    for meld in state.table:
        _add_meld(message.table, meld)


def _update_table(message: spb.EngineState, before: GameState, after: GameState) -> None:
    """The melds after the first one the move replaced (laid melds are shared)."""
    if after.table is before.table:
        return
    table = message.table
    kept = 0
    for old, new in zip(before.table, after.table, strict=False):
        if old is not new:
            break
        kept += 1
    del table[kept:]
    for meld in after.table[kept:]:
        _add_meld(table, meld)


def _read_table(message: spb.EngineState) -> Any:
    return [
        {
            "kind": KIND_FROM_PB[m.kind].value,
            "cards": list(m.cards),
            "rank": m.rank,
            "suit": m.suit,
            "owner": m.owner,
        }
        for m in message.table
    ]


def _write_stock_orders(message: spb.EngineState, state: GameState) -> None:
    for round_number, order in state.stock_orders:
        message.stock_orders.add(round=round_number, cards=order)


def _update_stock_orders(message: spb.EngineState, before: GameState, after: GameState) -> None:
    if after.stock_orders != before.stock_orders:
        del message.stock_orders[:]
        _write_stock_orders(message, after)


_FIELDS: tuple[_Field, ...] = (
    _scalar("seats"),
    _scalar("seed", decode=bytes.hex),
    _scalar("round", "round_number"),
    _scalar("phase", encode=operator.attrgetter("value")),
    _scalar("current"),
    _Field("hands", _write_hands, _update_hands, lambda m: [list(h.ids) for h in m.hands]),
    _cards("stock"),
    _cards("discards"),
    _Field("table", _write_table, _update_table, _read_table),
    _repeated("opened"),
    _repeated("scores"),
    _optional("taken_from_discard"),
    _scalar("laid_this_turn"),
    _repeated("claim_answers", _ANSWER_TO_PB.__getitem__, _ANSWER_FROM_PB.__getitem__),
    _scalar("exhaustions"),
    _scalar("epoch"),
    _scalar("turns_completed"),
    _scalar("action_count"),
    _Field(
        "stock_orders",
        _write_stock_orders,
        _update_stock_orders,
        lambda m: {str(o.round): list(o.cards) for o in m.stock_orders},
    ),
)
# (the rule set, apart: written from the message the caller shares, read as given)
STATE_FIELDS = frozenset(field.name for field in _FIELDS) | {"rules"}


def state_to_pb(state: GameState, rules_message: pb.RuleSet | None = None) -> spb.EngineState:
    message = spb.EngineState()
    message.rules.CopyFrom(rules_message if rules_message is not None else rules_to_pb(state.rules))
    for field in _FIELDS:
        field.write(message, state)
    return message


def update_state_pb(message: spb.EngineState, before: GameState, after: GameState) -> None:
    """Turn ``message``, which holds ``before`` as :func:`state_to_pb` writes it, into
    ``after``'s: the same message :func:`state_to_pb` would write for ``after``.

    A move changes a few fields of a state (a hand and the stock, say); the engine
    shares every value it does not change between the two states, so a field whose
    value is the same object is left as it is, and only the rest is rewritten.
    (Writing the whole state anew was a fifth of a move's own time in the server.)
    """
    if after.rules is not before.rules and after.rules != before.rules:
        message.rules.CopyFrom(rules_to_pb(after.rules))
    for field in _FIELDS:
        field.update(message, before, after)


def state_from_pb(message: spb.EngineState, rules: RuleSet | None = None) -> GameState:
    """The engine state a stored message holds (validated by GameState.from_dict)."""
    data = {field.name: field.read(message) for field in _FIELDS}
    data["rules"] = rules or rules_from_pb(message.rules)
    return GameState.from_dict(data)


def _add_meld(table: Any, meld: Meld) -> None:
    table.add(
        kind=KIND_TO_PB[meld.kind],
        rank=meld.rank,
        suit=meld.suit,
        owner=meld.owner,
        cards=[c.id for c in meld.cards],
    )


def _update_ids(field: Any, before: tuple[Card, ...], after: tuple[Card, ...]) -> None:
    """A repeated field of card ids, rewritten unless the cards are the same object."""
    if after is not before:
        _rewrite(field, [c.id for c in after])


def _rewrite(field: Any, values: Any) -> None:
    """A repeated scalar field's values replaced by ``values``."""
    del field[:]
    field.extend(values)
