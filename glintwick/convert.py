"""Engine values ⇄ the public API's protobuf messages, for servers and clients alike.

The public messages mirror the engine's plain forms field for field (views,
events, rule sets), so one mechanism — protobuf's JSON mapping — converts them;
only the meld kind (``"set"`` ⇄ ``MELD_KIND_SET``) needs translating.  The one
exception is the service's hot path: a typed view (``engine.views.SeatView``) is
written field by field (a table meld by :func:`fill_meld`, also AnalyseHand's),
the same message its plain form gives.  Both the service (``services/``) and the
clients (``clients/``) import this module, so neither needs the other.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import fields as dataclass_fields
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import NULL_VALUE, ListValue, Struct, Value

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
    MeldSpec,
    PassClaim,
    SwapJoker,
)
from engine.cards import SUITS, Card
from engine.errors import InvalidActionError
from engine.events import PAYLOADS, SECRETS, Event, EventType
from engine.game import GameState
from engine.melds import End, Meld
from engine.rulesets import Contract, MeldKind, RuleSet
from engine.views import PublicView, SeatView
from glintwick.v1 import game_pb2 as pb

KIND_TO_PB = {MeldKind.SET: pb.MELD_KIND_SET, MeldKind.RUN: pb.MELD_KIND_RUN}
KIND_FROM_PB = {v: k for k, v in KIND_TO_PB.items()}
_KIND_NAME = {kind.value: pb.MeldKind.Name(number) for kind, number in KIND_TO_PB.items()}
_KIND_NAME_BACK = {v: k for k, v in _KIND_NAME.items()}
_END_TO_PB = {None: pb.RUN_END_UNSPECIFIED, End.LOW: pb.RUN_END_LOW, End.HIGH: pb.RUN_END_HIGH}
_END_FROM_PB = {v: k for k, v in _END_TO_PB.items()}
_SOURCE_FROM_PB = {
    pb.DRAW_SOURCE_UNSPECIFIED: DrawSource.STOCK,
    pb.DRAW_SOURCE_STOCK: DrawSource.STOCK,
    pb.DRAW_SOURCE_DISCARD: DrawSource.DISCARD,
}
_SOURCE_TO_PB = {DrawSource.STOCK: pb.DRAW_SOURCE_STOCK, DrawSource.DISCARD: pb.DRAW_SOURCE_DISCARD}


def _kinds_to_pb(value: Any) -> Any:
    """Rewrite every ``"kind": "set"`` of a plain form into the proto enum's name."""
    if isinstance(value, dict):
        return {
            k: (_KIND_NAME.get(str(v), v) if k == "kind" else _kinds_to_pb(v))
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list | tuple):
        return [_kinds_to_pb(v) for v in value]
    return value


def _kinds_from_pb(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (_KIND_NAME_BACK.get(v, v) if k == "kind" else _kinds_from_pb(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_kinds_from_pb(v) for v in value]
    return value


# ------------------------------------------------------------------ rule sets


def rules_to_pb(rules: RuleSet) -> pb.RuleSet:
    message = pb.RuleSet()
    json_format.ParseDict(_kinds_to_pb(rules.to_dict()), message)
    message.hash = rules.hash
    return message


def rules_from_pb(message: pb.RuleSet) -> RuleSet:
    """A custom rule set from its message; InvalidActionError when it is not valid."""
    data = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    data = _kinds_from_pb(data)
    data.pop("hash", None)
    for optional in ("set_max", "max_jokers_per_meld", "turn_cap"):
        data.setdefault(optional, None)
    for contract in data.get("contracts", []):
        for meld in contract.get("melds", []):
            if meld.get("kind") not in ("set", "run"):
                raise InvalidActionError("every contract meld needs a kind (set or run)")
    return RuleSet.from_dict(data)


# ------------------------------------------------------------------ actions


def _spec_from_pb(spec: pb.MeldSpec) -> MeldSpec:
    if spec.kind not in KIND_FROM_PB:
        raise InvalidActionError("a meld needs a kind (MELD_KIND_SET or MELD_KIND_RUN)")
    if not spec.cards:
        raise InvalidActionError("a meld needs cards")
    if len(set(spec.cards)) != len(spec.cards):
        raise InvalidActionError("a meld names the same card twice")
    start = spec.start if spec.HasField("start") else None
    if start is not None and not 1 <= start <= 14:
        raise InvalidActionError("a run's start must be a rank 1..14")
    return MeldSpec(KIND_FROM_PB[spec.kind], tuple(spec.cards), start)


def _spec_to_pb(spec: MeldSpec) -> pb.MeldSpec:
    message = pb.MeldSpec(kind=KIND_TO_PB[spec.kind], cards=spec.cards)
    if spec.start is not None:
        message.start = spec.start
    return message


def action_from_pb(message: pb.Action) -> Action:
    """The engine action a message names; InvalidActionError when none or malformed."""
    which = message.WhichOneof("kind")
    if which == "draw":
        if message.draw.source not in _SOURCE_FROM_PB:
            raise InvalidActionError("unknown draw source")
        return Draw(_SOURCE_FROM_PB[message.draw.source])
    if which == "lay_contract":
        melds = message.lay_contract.melds
        return LayContract(tuple(_spec_from_pb(m) for m in melds) if melds else None)
    if which == "lay_off":
        if message.lay_off.end not in _END_FROM_PB:
            raise InvalidActionError("unknown run end")
        return LayOff(message.lay_off.card, message.lay_off.meld, _END_FROM_PB[message.lay_off.end])
    if which == "extra_meld":
        if not message.extra_meld.HasField("meld"):
            raise InvalidActionError("an extra meld needs its meld")
        return ExtraMeld(_spec_from_pb(message.extra_meld.meld))
    if which == "swap_joker":
        return SwapJoker(message.swap_joker.card, message.swap_joker.meld)
    if which == "discard":
        return Discard(message.discard.card)
    if which == "end_turn":
        return EndTurn()
    if which == "claim":
        return Claim()
    if which == "pass_claim":
        return PassClaim()
    raise InvalidActionError("an action must set exactly one of its kinds")


def action_to_pb(action: Action) -> pb.Action:
    match action:
        case Draw(source=source):
            return pb.Action(draw=pb.Draw(source=_SOURCE_TO_PB[source]))
        case LayContract(melds=melds):
            specs = [_spec_to_pb(m) for m in melds or ()]
            return pb.Action(lay_contract=pb.LayContract(melds=specs))
        case LayOff(card=c, meld=m, end=end):
            return pb.Action(lay_off=pb.LayOff(card=c, meld=m, end=_END_TO_PB[end]))
        case ExtraMeld(meld=spec):
            return pb.Action(extra_meld=pb.ExtraMeld(meld=_spec_to_pb(spec)))
        case SwapJoker(card=c, meld=m):
            return pb.Action(swap_joker=pb.SwapJoker(card=c, meld=m))
        case Discard(card=c):
            return pb.Action(discard=pb.Discard(card=c))
        case EndTurn():
            return pb.Action(end_turn=pb.EndTurn())
        case Claim():
            return pb.Action(claim=pb.Claim())
        case PassClaim():
            return pb.Action(pass_claim=pb.PassClaim())
    raise AssertionError(f"unknown action {action!r}")


# ------------------------------------------------------------------ views and events


def fill(message: Message, data: Mapping[str, Any]) -> None:
    """Set a message's fields from a plain form keyed by proto field names.

    What ``json_format.ParseDict`` does for these forms, without its generality:
    a view is converted on every GetView and every watch snapshot, and ParseDict
    costs about as much as the rest of the RPC.  Enum values come by name or
    number; None means "not set"; an unknown key raises KeyError.
    """
    fields = message.DESCRIPTOR.fields_by_name
    for key, value in data.items():
        if value is None:
            continue
        field = fields[key]
        if field.message_type is not None:
            target = getattr(message, key)
            if field.is_repeated:
                for item in value:
                    fill(target.add(), item)
            else:
                target.SetInParent()
                fill(target, value)
        elif field.enum_type is not None:
            names = field.enum_type.values_by_name
            if field.is_repeated:
                getattr(message, key).extend(
                    names[v].number if isinstance(v, str) else v for v in value
                )
            else:
                setattr(message, key, names[value].number if isinstance(value, str) else value)
        elif field.is_repeated:
            getattr(message, key).extend(value)
        else:
            setattr(message, key, value)


def view_to_pb(
    view: PublicView | Mapping[str, Any], game_id: str, version: int, deadline: float
) -> pb.View:
    """A view's message, from the engine's typed view (the service's path) or from its
    plain form (``engine.views.seat_view``: the same message)."""
    message = pb.View(game_id=game_id, version=version, deadline_unix=deadline)
    if isinstance(view, PublicView):
        _fill_view(message, view)
    else:
        fill(message, _kinds_to_pb(dict(view)))
    return message


# The typed view's fields are set one by one: upb looks every keyword argument up by
# name, and reading the typed view skips the reflection over a dict that ``fill`` does.


def _fill_view(message: pb.View, view: PublicView) -> None:
    rules = view.rules
    message.rules = rules.name
    message.rules_hash = rules.hash
    message.seats = view.seats
    message.round = view.round
    message.rounds = rules.rounds
    _fill_contract(message.contract, view.contract)
    message.phase = view.phase.value
    message.current = view.current
    message.to_act.extend(view.to_act)
    add_player = message.players.add
    for player in view.players:
        info = add_player()
        info.seat = player.seat
        info.hand_size = player.hand_size
        info.opened = player.opened
        info.score = player.score
    add_meld = message.table.add
    for index, meld in enumerate(view.table):
        fill_meld(add_meld(), meld, index)
    top = view.discard_top
    if top is not None:
        fill_card(message.discard_top, top)
    message.discard_size = view.discard_size
    message.stock_size = view.stock_size
    taken = view.taken_from_discard
    if taken is not None:
        fill_card(message.taken_from_discard, taken)
    message.laid_this_turn = view.laid_this_turn
    claim = view.claim
    if claim is not None:
        window = message.claim
        fill_card(window.card, claim.card)
        window.discarder = claim.discarder
        add_answer = window.answers.add
        for answer in claim.answers:
            wire = add_answer()
            wire.seat = answer.seat
            name = answer.answer_name
            if name is not None:
                wire.answer = name
    message.exhaustions = view.exhaustions
    message.turns_completed = view.turns_completed
    message.action_count = view.action_count
    message.game_over = view.game_over
    message.abandoned = view.abandoned
    message.commitment = view.commitment
    if view.winners is not None:
        message.winners.extend(view.winners)
    if view.seed is not None:
        message.seed = view.seed
    if isinstance(view, SeatView):
        message.seat = view.seat
        _add_cards(message.hand, view.hand)
        message.may_act = view.may_act
        message.has_drawn = view.has_drawn


def _fill_contract(message: pb.Contract, contract: Contract) -> None:
    message.name = contract.name
    add = message.melds.add
    for requirement in contract.melds:
        meld = add()
        meld.kind = KIND_TO_PB[requirement.kind]
        meld.size = requirement.size
    message.deal = contract.deal
    message.discards = contract.discards


def fill_card(message: pb.Card, c: Card) -> None:
    message.id = c.id
    message.code = c.code


def _add_cards(field: Any, cards: Sequence[Card]) -> None:
    # (the loop written out: a call of fill_card per card cost a third of a meld's time)
    add = field.add
    for c in cards:
        wire = add()
        wire.id = c.id
        wire.code = c.code


def fill_meld(message: pb.Meld, meld: Meld, index: int) -> None:
    """Set an empty ``message`` to a table meld (``index``: its place on the table):
    what :func:`engine.melds.meld_json` shows, as the public message."""
    message.index = index
    message.kind = KIND_TO_PB[meld.kind]
    message.rank = meld.rank
    if meld.suit >= 0:
        message.suit = SUITS[meld.suit]
    message.owner = meld.owner
    _add_cards(message.cards, meld.cards)


_64_BIT = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)


# how message_to_plain writes a field (one plan per message type, made once)
_SCALAR, _MESSAGE, _ENUM, _INT64, _BYTES, _MAP, _MAP_OF_MESSAGES = range(7)
#: per field: its name, repeated, has presence (and is not repeated), kind, enum type
_Plan = tuple[tuple[str, bool, bool, int, Any], ...]
_PLANS: dict[Any, _Plan] = {}


def _plan(descriptor: Any) -> _Plan:
    """The fields of a message type as message_to_plain walks them: the descriptor's
    properties (a map entry's options, presence, the type) read once per type, not once
    per field of every message converted."""
    plan = _PLANS.get(descriptor)
    if plan is not None:
        return plan
    rows: list[tuple[str, bool, bool, int, Any]] = []
    for field in descriptor.fields:
        enum = None
        if (
            field.is_repeated
            and field.message_type is not None
            and (field.message_type.GetOptions().map_entry)
        ):
            inner = field.message_type.fields_by_name["value"]
            kind = _MAP_OF_MESSAGES if inner.message_type is not None else _MAP
        elif field.message_type is not None:
            kind = _MESSAGE
        elif field.enum_type is not None:
            kind, enum = _ENUM, field.enum_type
        elif field.type in _64_BIT:
            kind = _INT64
        elif field.type == FieldDescriptor.TYPE_BYTES:
            kind = _BYTES
        else:
            kind = _SCALAR
        presence = not field.is_repeated and field.has_presence
        rows.append((field.name, field.is_repeated, presence, kind, enum))
    plan = _PLANS[descriptor] = tuple(rows)
    return plan


def message_to_plain(
    message: Message, enum_names: Mapping[str, Mapping[int, str]] | None = None
) -> dict[str, Any]:
    """A message as ``json_format.MessageToDict(message, preserving_proto_field_name=True,
    always_print_fields_with_no_presence=True)`` gives it (64-bit integers as strings,
    enums by name, fields with presence only when set), at a fraction of the cost:
    clients convert a view on every turn.  ``enum_names`` renames the values of the
    enums it names (by full name), in the same pass."""
    names = enum_names or {}
    out: dict[str, Any] = {}
    for name, repeated, presence, kind, enum in _plan(message.DESCRIPTOR):
        if presence and not message.HasField(name):
            continue
        value = getattr(message, name)
        if repeated:
            if kind == _MESSAGE:
                out[name] = [message_to_plain(item, names) for item in value]
            elif kind == _SCALAR:
                out[name] = list(value)
            elif kind == _ENUM:
                out[name] = [_enum_name(enum, v, names) for v in value]
            elif kind == _INT64:
                out[name] = [str(v) for v in value]
            elif kind == _BYTES:
                out[name] = [base64.b64encode(v).decode() for v in value]
            elif kind == _MAP_OF_MESSAGES:
                out[name] = {str(k): message_to_plain(v, names) for k, v in value.items()}
            else:
                out[name] = {str(k): v for k, v in value.items()}
        elif kind == _SCALAR:
            out[name] = value
        elif kind == _MESSAGE:
            out[name] = message_to_plain(value, names)
        elif kind == _ENUM:
            out[name] = _enum_name(enum, value, names)
        elif kind == _INT64:
            out[name] = str(value)
        else:
            out[name] = base64.b64encode(value).decode()
    return out


def _enum_name(enum: Any, number: int, names: Mapping[str, Mapping[int, str]]) -> str:
    # (``enum``: an EnumDescriptor, of the pure-Python or of the upb kind)
    renamed = names.get(enum.full_name)
    if renamed is not None and number in renamed:
        return renamed[number]
    return str(enum.values_by_number[number].name)


# the engine's names for the meld kinds ("set", "run"), in place of the proto's
_ENGINE_ENUM_NAMES: dict[str, dict[int, str]] = {
    pb.MeldKind.DESCRIPTOR.full_name: {int(KIND_TO_PB[kind]): kind.value for kind in KIND_TO_PB}
}


def view_from_pb(message: pb.View) -> dict[str, Any]:
    """The plain view a client works with (the engine's form), from its message."""
    return message_to_plain(message, _ENGINE_ENUM_NAMES)


# ------------------------------------------------------------------ events
#
# Event.payload holds one message per event type, its oneof case named as the type.
# The messages mirror engine/events.py's payload classes (PAYLOADS, and the secret
# parts, SECRETS) field for field, so one walk over a message's descriptor writes a
# payload's plain form (Event.for_seat's) into it, and one reads it back: only the
# enum values (the engine's "set", "stock", "low") are translated, by the table
# below.  tests/unit/test_convert.py checks that every event type has its case and
# that every payload a game produces comes back unchanged.

#: each event type's Event.payload case (its name is the type's)
EVENT_CASES: Mapping[str, FieldDescriptor] = {
    case.name: case for case in pb.Event.DESCRIPTOR.oneofs_by_name["payload"].fields
}

# the engine's values of the enums payloads carry -> the proto's numbers
_ENUM_TO_PB: dict[str, dict[Any, int]] = {
    pb.MeldKind.DESCRIPTOR.full_name: {k.value: int(v) for k, v in KIND_TO_PB.items()},
    pb.DrawSource.DESCRIPTOR.full_name: {k.value: int(v) for k, v in _SOURCE_TO_PB.items()},
    pb.RunEnd.DESCRIPTOR.full_name: {
        k.value: int(v) for k, v in _END_TO_PB.items() if k is not None
    },
}
# and back (an enum's zero, absent from the table, reads as None: a set's RunEnd)
_ENUM_FROM_PB: dict[str, dict[int, Any]] = {
    name: {number: value for value, number in table.items()} for name, table in _ENUM_TO_PB.items()
}
# string fields whose empty value is the engine's None (a set's suit)
_EMPTY_IS_NONE = frozenset({(pb.Meld.DESCRIPTOR.full_name, "suit")})


def fill_plain(message: Message, values: Mapping[str, Any]) -> None:
    """Write a plain form (an event payload's: ints, strings, lists, dicts, None for
    absent) into an empty ``message`` whose field names are its keys."""
    fields = message.DESCRIPTOR.fields_by_name
    for key, value in values.items():
        if value is None:
            continue
        field = fields[key]
        if field.is_repeated:
            target = getattr(message, key)
            if field.message_type is not None:
                for item in value:
                    fill_plain(target.add(), item)
            elif field.enum_type is not None:
                target.extend([_ENUM_TO_PB[field.enum_type.full_name][v] for v in value])
            else:
                target.extend(value)
        elif field.message_type is not None:
            inner = getattr(message, key)
            inner.SetInParent()  # present even when empty
            fill_plain(inner, value)
        elif field.enum_type is not None:
            setattr(message, key, _ENUM_TO_PB[field.enum_type.full_name][value])
        else:
            setattr(message, key, value)


def plain_of(message: Message) -> dict[str, Any]:
    """:func:`fill_plain` read back: a message's plain form (fields with presence only
    when set, enums by the engine's names)."""
    out: dict[str, Any] = {}
    full_name = message.DESCRIPTOR.full_name
    for field in message.DESCRIPTOR.fields:
        name = field.name
        value = getattr(message, name)
        if field.is_repeated:
            if field.message_type is not None:
                out[name] = [plain_of(item) for item in value]
            elif field.enum_type is not None:
                names = _ENUM_FROM_PB[field.enum_type.full_name]
                out[name] = [names.get(v) for v in value]
            else:
                out[name] = list(value)
        elif field.has_presence and not message.HasField(name):
            continue
        elif field.message_type is not None:
            out[name] = plain_of(value)
        elif field.enum_type is not None:
            out[name] = _ENUM_FROM_PB[field.enum_type.full_name].get(value)
        elif value == "" and (full_name, name) in _EMPTY_IS_NONE:
            out[name] = None
        else:
            out[name] = value
    return out


def fill_event(
    out: pb.Event, kind: str, seat: int | None, payload: Mapping[str, Any], version: int
) -> None:
    """Write an event (its type, seat and the payload as a viewer sees it, plain) into
    an empty ``out``."""
    out.version = version
    out.type = kind
    if seat is not None:
        out.seat = seat
    if kind not in EVENT_CASES:
        raise TypeError(f"no Event.payload case for the event type {kind!r}")
    inner = getattr(out, kind)
    inner.SetInParent()
    fill_plain(inner, payload)


def event_to_pb(event: Event, viewer: int | None, version: int) -> pb.Event:
    """``event`` as ``viewer`` may see it (None: a spectator)."""
    data = event.for_seat(viewer)
    kind = data.pop("type")
    seat = data.pop("seat")
    message = pb.Event()
    fill_event(message, kind, seat, data, version)
    return message


def event_from_pb(message: pb.Event, viewer: int | None) -> dict[str, Any]:
    """The event as the engine shows it to ``viewer`` (``Event.for_seat``'s form:
    ``type``, ``seat`` and the payload's keys), from the message ``viewer`` got.
    InvalidActionError when its payload is not its type's."""
    kind = message.type
    try:
        event_type = EventType(kind)
    except ValueError as exc:
        raise InvalidActionError(f"unknown event type {kind!r}") from exc
    if message.WhichOneof("payload") != kind:
        raise InvalidActionError(f"a {kind} event without its {kind} payload")
    seat = message.seat if message.HasField("seat") else None
    plain = plain_of(getattr(message, kind))
    out: dict[str, Any] = {"type": kind, "seat": seat}
    for field in dataclass_fields(PAYLOADS[event_type]):  # type: ignore[arg-type]
        if field.name in plain:
            out[field.name] = plain[field.name]
        elif not field.metadata.get("omit_none"):
            out[field.name] = None
    secret = SECRETS.get(event_type)
    # a secret list (a hand, penalty cards) is the viewer's when the event is about
    # every seat (no seat) or about the viewer's own
    entitled = viewer is not None and seat in (None, viewer)
    if secret is not None and entitled:
        for field in dataclass_fields(secret):  # type: ignore[arg-type]
            if field.name in plain:
                out[field.name] = plain[field.name]
    return out


#: the most bytes a game seed has (CreateGameRequest.seed: twice as many hex digits)
MAX_SEED_BYTES = 64


def seed_to_hex(seed: bytes | str) -> str:
    """The API's encoding of a seed: lowercase hex (a str is taken as hex already)."""
    return seed.hex() if isinstance(seed, bytes) else seed


def seed_from_hex(text: str) -> bytes:
    """The seed a CreateGameRequest.seed / Replay.seed names; ValueError when it is
    not lowercase hex of whole bytes, or is over MAX_SEED_BYTES."""
    if len(text) > 2 * MAX_SEED_BYTES:
        raise ValueError(
            f"a seed has at most {MAX_SEED_BYTES} bytes ({2 * MAX_SEED_BYTES} hex digits)"
        )
    if len(text) % 2 or text.strip("0123456789abcdef"):
        raise ValueError('a seed is lowercase hex, two digits a byte (e.g. "0a1b")')
    return bytes.fromhex(text)


def event_cursor(version: int, index: int) -> str:
    """The opaque token of an event's position (``Event.cursor``, the SSE ``id:``)."""
    return f"{version}.{index}"


def cursor_position(cursor: str) -> tuple[int, int] | None:
    """``(version, index)`` of a cursor :func:`event_cursor` made; None if it is none."""
    version, dot, index = cursor.partition(".")
    if not dot or not (version.isascii() and version.isdigit()):
        return None
    if not (index.isascii() and index.isdigit()) or len(version) > 19 or len(index) > 9:
        return None
    return int(version), int(index)


def place_event(message: pb.Event, index: int) -> pb.Event:
    """Give an event its position: ``index`` among its version's events, and the cursor."""
    message.index = index
    message.cursor = event_cursor(message.version, index)
    return message


def unfloat(value: Any) -> Any:
    """Struct stores numbers as doubles: give integral ones back as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: unfloat(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unfloat(v) for v in value]
    return value


def struct_plain(struct: Struct) -> dict[str, Any]:
    """A Struct's values as :func:`fill_struct` was given them (integral numbers as
    ints: a Struct keeps every number as a double).  (Through the well-known type's
    own ``items()``, which converts scalars in C: a third faster than a walk over
    each Value's oneof.)"""
    return {key: _plain_value(value) for key, value in struct.items()}


def _plain_value(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Struct):
        return struct_plain(value)
    if isinstance(value, ListValue):
        return [_plain_value(item) for item in value]
    return value


def fill_struct(struct: Struct, values: Mapping[Any, Any]) -> None:
    """Set ``values`` (an engine event's payload) into ``struct``: what
    ``struct.update()`` does, in one pass that also makes keys strings and tuples
    lists.  (Every move stores its events this way: the library's update, after a
    pass making the payload JSON-shaped, cost twice the time.)"""
    fields = struct.fields
    for key, value in values.items():
        _set_value(fields[str(key)], value)


def _set_value(target: Value, value: Any) -> None:
    # the order of Struct.update: a bool is an int too (numbers are doubles in a
    # Struct, which is fine for ids and counts)
    if isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int | float):
        target.number_value = value
    elif value is None:
        target.null_value = NULL_VALUE
    elif isinstance(value, Mapping):
        inner = target.struct_value
        inner.Clear()  # marks it set: an empty mapping is an empty struct, not nothing
        fill_struct(inner, value)
    elif isinstance(value, list | tuple):
        items = target.list_value
        items.Clear()
        add = items.values.add
        for item in value:
            _set_value(add(), item)
    else:
        raise TypeError(f"a {type(value).__name__} has no place in a Struct")


def legal_actions_to_pb(actions: Sequence[Action]) -> list[pb.Action]:
    return [action_to_pb(a) for a in actions]


def replay_events(replay: pb.Replay) -> list[Event]:
    """Re-run a replay from its seed with the engine; the events of every step (for checks)."""
    rules = rules_from_pb(replay.game.rule_set)
    orders = {d.round: list(d.cards) for d in replay.decks}
    state = GameState.new_game(
        rules, replay.game.seats, seed_from_hex(replay.seed), stock_orders=orders or None
    )
    events: list[Event] = []
    for step in replay.steps:
        state, produced = state.apply_action(step.seat, action_from_pb(step.action))
        events.extend(produced)
    if replay.abandoned:
        events.extend(state.abandon()[1])
    return events
