"""The stored forms: engine state and events ⇄ the store's protobuf messages.

The stored game state has its own compact message (``EngineState``), whose fields
are listed once, in a table (``_FIELDS``) that the whole write and the read iterate;
a move, on the hot path, rewrites only the fields it changed.  Conversions of the
public messages live in :mod:`glintwick.convert`, shared with the clients.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.cards import Card
from engine.events import Event
from engine.game import GameState
from engine.melds import Meld
from engine.rulesets import RuleSet
from glintwick.convert import (
    KIND_FROM_PB,
    KIND_TO_PB,
    fill_event,
    fill_struct,
    rules_from_pb,
    rules_to_pb,
    struct_plain,
)
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb

_ANSWER_TO_PB = {
    None: spb.CLAIM_ANSWER_PENDING,
    True: spb.CLAIM_ANSWER_CLAIM,
    False: spb.CLAIM_ANSWER_PASS,
}
_ANSWER_FROM_PB = {v: k for k, v in _ANSWER_TO_PB.items()}


def fill_stored_event(message: spb.StoredEvent, event: Event) -> None:
    """Write ``event`` into an empty ``message`` (in place: a move's events are
    written straight into its log entry, not built apart and copied in)."""
    message.type = str(event.type)
    if event.seat is not None:
        message.seat = event.seat
    fill_struct(message.public, event.public)
    for seat, secret in sorted(event.secret.items()):
        fill_struct(message.secret[seat], secret)


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
    payload = struct_plain(message.public)
    if viewer is not None and viewer in message.secret:
        payload.update(struct_plain(message.secret[viewer]))  # (Event.for_seat's merge)
    seat = message.seat if message.HasField("seat") else None
    fill_event(out, message.type, seat, payload, version)


# ------------------------------------------------------------------ the stored state
#
# The stored state's fields are listed once, in _FIELDS (in the message's order),
# each by its kind: how the engine state's value is written into an empty message
# and read back (as GameState.from_dict's form, which validates it).  The message's
# layout is storage.proto's EngineState, whose field names are GameState.to_dict's
# keys; tests/unit/test_codec.py checks that the table, the message and to_dict
# agree.  Each kind also says how a move rewrites the field (``update_source``): a
# move's rewrite (update_state_pb) is compiled from those lines, once, as dataclasses
# writes an __init__ (a loop over the table on every move cost 60% more: about
# 10.5 µs instead of 6.5); the same test file checks it against the whole write.

_Source = tuple[list[str], dict[str, Any]]  # lines of the rewrite, and the names they use


@dataclass(frozen=True, slots=True)
class _Scalar:
    name: str
    attribute: str = ""  # the state's name for it (dotted: a part of it), when another
    decode: Callable[[Any], Any] | None = None

    def write(self, message: spb.EngineState, state: GameState) -> None:
        setattr(message, self.name, operator.attrgetter(self.attribute or self.name)(state))

    def read(self, message: spb.EngineState) -> Any:
        value = getattr(message, self.name)
        return value if self.decode is None else self.decode(value)

    def update_source(self) -> _Source:
        return [f"message.{self.name} = after.{self.attribute or self.name}"], {}


@dataclass(frozen=True, slots=True)
class _Optional:
    """A scalar with presence: unset for None."""

    name: str

    def write(self, message: spb.EngineState, state: GameState) -> None:
        value = getattr(state, self.name)
        if value is not None:
            setattr(message, self.name, value)

    def read(self, message: spb.EngineState) -> Any:
        present = message.HasField(self.name)  # type: ignore[arg-type]
        return getattr(message, self.name) if present else None

    def update_source(self) -> _Source:
        n = self.name
        lines = [
            f"if after.{n} is None:",
            f"    message.ClearField({n!r})",
            "else:",
            f"    message.{n} = after.{n}",
        ]
        return lines, {}


@dataclass(frozen=True, slots=True)
class _Repeated:
    """Scalar values (card ids: ``cards``)."""

    name: str
    cards: bool = False
    encode: Callable[[Any], Any] | None = None
    decode: Callable[[Any], Any] | None = None

    def write(self, message: spb.EngineState, state: GameState) -> None:
        values = getattr(state, self.name)
        if self.cards:
            values = [c.id for c in values]
        elif self.encode is not None:
            values = [self.encode(v) for v in values]
        getattr(message, self.name).extend(values)

    def read(self, message: spb.EngineState) -> Any:
        stored = getattr(message, self.name)
        return list(stored) if self.decode is None else [self.decode(v) for v in stored]

    def update_source(self) -> _Source:
        n = self.name
        if self.cards:  # the engine shares a card tuple a move leaves alone
            return [
                f"if after.{n} is not before.{n}:",
                f"    rewrite(message.{n}, [c.id for c in after.{n}])",
            ], {}
        if self.encode is not None:
            return [
                f"if after.{n} != before.{n}:",
                f"    rewrite(message.{n}, [encode_{n}(v) for v in after.{n}])",
            ], {f"encode_{n}": self.encode}
        return [f"if after.{n} != before.{n}:", f"    rewrite(message.{n}, after.{n})"], {}


@dataclass(frozen=True, slots=True)
class _Nested:
    """Messages, by functions of their own (``update``: a move's rewrite, called when
    the state's value is another object)."""

    name: str
    write: Callable[[spb.EngineState, GameState], None]
    read: Callable[[spb.EngineState], Any]
    update: Callable[[spb.EngineState, GameState, GameState], None]

    def update_source(self) -> _Source:
        n = self.name
        return [
            f"if after.{n} is not before.{n}:",
            f"    update_{n}(message, before, after)",
        ], {f"update_{n}": self.update}


def _write_hands(message: spb.EngineState, state: GameState) -> None:
    for hand in state.hands:
        message.hands.add().ids.extend([c.id for c in hand])


def _write_table(message: spb.EngineState, state: GameState) -> None:
    add = message.table.add
    for meld in state.table:
        write_meld(add(), meld)


def _read_table(message: spb.EngineState) -> list[dict[str, Any]]:
    return [read_meld(m) for m in message.table]


# A table meld's stored message holds engine.melds.meld_to_dict's form (card ids, the
# suit's number), which GameState.from_dict reads back and validates.


def write_meld(message: spb.StoredMeld, meld: Meld) -> None:
    """Set an empty ``message`` to ``meld``."""
    message.kind = KIND_TO_PB[meld.kind]
    message.rank = meld.rank
    message.suit = meld.suit
    message.owner = meld.owner
    message.cards.extend([c.id for c in meld.cards])


def read_meld(message: spb.StoredMeld) -> dict[str, Any]:
    """The stored meld as :func:`engine.melds.meld_to_dict` wrote it."""
    return {
        "kind": KIND_FROM_PB[message.kind].value,
        "cards": list(message.cards),
        "rank": message.rank,
        "suit": message.suit,
        "owner": message.owner,
    }


def _write_stock_orders(message: spb.EngineState, state: GameState) -> None:
    for round_number, order in state.stock_orders:
        message.stock_orders.add(round=round_number, cards=order)


def _update_hands(message: spb.EngineState, before: GameState, after: GameState) -> None:
    hands = message.hands
    if len(hands) != len(after.hands) or len(before.hands) != len(after.hands):
        del hands[:]
        _write_hands(message, after)
    else:
        for index, hand in enumerate(after.hands):
            _update_ids(hands[index].ids, before.hands[index], hand)


def _update_table(message: spb.EngineState, before: GameState, after: GameState) -> None:
    table = message.table
    kept = 0  # laid melds are shared: rewrite from the first one the move replaced
    for old, new in zip(before.table, after.table, strict=False):
        if old is not new:
            break
        kept += 1
    del table[kept:]
    for meld in after.table[kept:]:
        write_meld(table.add(), meld)


def _update_stock_orders(message: spb.EngineState, before: GameState, after: GameState) -> None:
    if after.stock_orders != before.stock_orders:
        del message.stock_orders[:]
        _write_stock_orders(message, after)


_FIELDS: tuple[_Scalar | _Optional | _Repeated | _Nested, ...] = (
    _Scalar("seats"),
    _Scalar("seed", decode=bytes.hex),
    _Scalar("round", "round_number"),
    _Scalar("phase", "phase.value"),
    _Scalar("current"),
    _Nested("hands", _write_hands, lambda m: [list(h.ids) for h in m.hands], _update_hands),
    _Repeated("stock", cards=True),
    _Repeated("discards", cards=True),
    _Nested("table", _write_table, _read_table, _update_table),
    _Repeated("opened"),
    _Repeated("scores"),
    _Optional("taken_from_discard"),
    _Scalar("laid_this_turn"),
    _Repeated(
        "claim_answers", encode=_ANSWER_TO_PB.__getitem__, decode=_ANSWER_FROM_PB.__getitem__
    ),
    _Scalar("exhaustions"),
    _Scalar("epoch"),
    _Scalar("turns_completed"),
    _Scalar("action_count"),
    _Nested(
        "stock_orders",
        _write_stock_orders,
        lambda m: {str(o.round): list(o.cards) for o in m.stock_orders},
        _update_stock_orders,
    ),
    _Scalar("abandoned"),
)
# (the rule set, apart: written from the message the caller shares, read as given)
STATE_FIELDS = frozenset(field.name for field in _FIELDS) | {"rules"}


def state_to_pb(state: GameState, rules_message: pb.RuleSet | None = None) -> spb.EngineState:
    message = spb.EngineState()
    message.rules.CopyFrom(rules_message if rules_message is not None else rules_to_pb(state.rules))
    for field in _FIELDS:
        field.write(message, state)
    return message


def state_from_pb(message: spb.EngineState, rules: RuleSet | None = None) -> GameState:
    """The engine state a stored message holds (validated by GameState.from_dict)."""
    data = {field.name: field.read(message) for field in _FIELDS}
    data["rules"] = rules or rules_from_pb(message.rules)
    return GameState.from_dict(data)


def _update_ids(field: Any, before: tuple[Card, ...], after: tuple[Card, ...]) -> None:
    """A repeated field of card ids, rewritten unless the cards are the same object."""
    if after is not before:
        _rewrite(field, [c.id for c in after])


def _rewrite(field: Any, values: Any) -> None:
    """A repeated scalar field's values replaced by ``values``."""
    del field[:]
    field.extend(values)


def _write_update() -> Callable[[spb.EngineState, GameState, GameState], None]:
    """:func:`update_state_pb`, compiled from the rewrite lines of _FIELDS."""
    scope: dict[str, Any] = {"rewrite": _rewrite, "rules_to_pb": rules_to_pb}
    body = [
        "if after.rules is not before.rules and after.rules != before.rules:",
        "    message.rules.CopyFrom(rules_to_pb(after.rules))",
    ]
    for field in _FIELDS:
        lines, names = field.update_source()
        body.extend(lines)
        scope.update(names)
    source = "def update_state_pb(message, before, after):\n" + "".join(
        f"    {line}\n" for line in body
    )
    exec(source, scope)
    written: Callable[[spb.EngineState, GameState, GameState], None] = scope["update_state_pb"]
    written.__doc__ = _UPDATE_DOC
    return written


_UPDATE_DOC = """Turn ``message``, which holds ``before`` as :func:`state_to_pb` writes it, into
``after``'s: the same message :func:`state_to_pb` would write for ``after``.

A move changes a few fields of a state (a hand and the stock, say); the engine shares
every value it does not change between the two states, so a field whose value is the
same object (or, for a few small ones, an equal value) is left as it is, and only the
rest is rewritten.  (Writing the whole state anew was a fifth of a move's own time in
the server.)"""

update_state_pb = _write_update()
