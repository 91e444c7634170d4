"""Engine values ⇄ the public API's protobuf messages, for servers and clients alike.

* rule sets: their messages mirror ``RuleSet.to_dict`` field for field, so one walk
  over the message's descriptor converts them (only the enums, the meld kind ``"set"``
  ⇄ ``MELD_KIND_SET`` and the stalemate ``"dry"`` ⇄ ``STALEMATE_DRY``, are translated;
  the store's own form of a rule set keeps the engine's names, ``services.codec``);
* actions, both ways (a client submits one, the service applies it);
* views: the service writes the engine's typed view (``engine.views.SeatView``) field
  by field, its hot path (a table meld by :func:`fill_meld`, also AnalyseHand's); a
  client reads the message straight into its bot's situation
  (``clients.bots.base.Situation.from_pb``, a meld by :func:`meld_from_pb`);
* events: a payload as the engine writes it, into its type's message (:func:`fill_event`);
  the store keeps payloads as Structs (:func:`fill_struct`, :func:`struct_plain`);
* the closed sets the engine names by strings (a phase, an event type, why a round
  ended, a claim's answer, a stalemate) are enums in the API, each value the engine's
  name in upper case behind the enum's prefix (``"game_over"`` ⇄ ``PHASE_GAME_OVER``):
  :func:`engine_names` reads each table off the enum's descriptor.

Both the service (``services/``) and the clients (``clients/``) import this module, so
neither needs the other.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
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
from engine.cards import NO_SUIT, SUITS, Card, card
from engine.errors import InvalidActionError
from engine.events import Event
from engine.game import GameState, Phase
from engine.melds import End, Meld
from engine.rulesets import Contract, MeldKind, RuleSet, Stalemate
from engine.views import PublicView, SeatView
from glintwick.v1 import game_pb2 as pb


def enum_prefix(enum: EnumDescriptor) -> str:
    """The prefix of an enum's value names, as buf's STANDARD lint has it: the enum's
    name in upper snake case (``PHASE_`` for ``Phase``, ``ERROR_REASON_``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"


def engine_names(enum: EnumDescriptor) -> dict[str, int]:
    """The engine's name of each value of an API enum → its number: the value's name
    less the enum's prefix (:func:`enum_prefix`), in lower case (``PHASE_GAME_OVER``:
    ``"game_over"``); the ``_UNSPECIFIED`` zero has none."""
    prefix = enum_prefix(enum)
    return {
        value.name.removeprefix(prefix).lower(): value.number
        for value in enum.values
        if value.number != 0
    }


KIND_TO_PB = {MeldKind.SET: pb.MELD_KIND_SET, MeldKind.RUN: pb.MELD_KIND_RUN}
KIND_FROM_PB = {v: k for k, v in KIND_TO_PB.items()}
#: engine.game.Phase ⇄ View.phase
PHASE_TO_PB: Mapping[Phase, int] = {
    Phase(name): number for name, number in engine_names(pb.Phase.DESCRIPTOR).items()
}
PHASE_FROM_PB: Mapping[int, Phase] = {v: k for k, v in PHASE_TO_PB.items()}
#: an event's type (engine.events.EventType, the payload case's name) ⇄ Event.type
EVENT_TYPE_TO_PB: Mapping[str, int] = engine_names(pb.EventType.DESCRIPTOR)
EVENT_TYPE_FROM_PB: Mapping[int, str] = {v: k for k, v in EVENT_TYPE_TO_PB.items()}
_END_TO_PB = {None: pb.RUN_END_UNSPECIFIED, End.LOW: pb.RUN_END_LOW, End.HIGH: pb.RUN_END_HIGH}
_END_FROM_PB = {v: k for k, v in _END_TO_PB.items()}
_SOURCE_FROM_PB = {
    pb.DRAW_SOURCE_UNSPECIFIED: DrawSource.STOCK,
    pb.DRAW_SOURCE_STOCK: DrawSource.STOCK,
    pb.DRAW_SOURCE_DISCARD: DrawSource.DISCARD,
}
_SOURCE_TO_PB = {DrawSource.STOCK: pb.DRAW_SOURCE_STOCK, DrawSource.DISCARD: pb.DRAW_SOURCE_DISCARD}


# ------------------------------------------------------------------ rule sets


def fill_rules(message: Message, rules: RuleSet) -> None:
    """Write ``rules`` into an empty rule-set message: the API's ``RuleSet``, or the
    store's own form (``StoredRuleSet``), whose string ``stalemate`` keeps the engine's
    name where the API's enum has its value."""
    fill_plain(message, rules.to_dict())
    message.hash = rules.hash  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=256)
def _rules_blob(rules: RuleSet) -> bytes:
    # (a game's description carries its rule set: written once per rule set)
    message = pb.RuleSet()
    fill_rules(message, rules)
    return message.SerializeToString()


def rules_to_pb(rules: RuleSet) -> pb.RuleSet:
    """The API's message of a rule set (a new one each call)."""
    return pb.RuleSet.FromString(_rules_blob(rules))


def rules_from_pb(message: Message) -> RuleSet:
    """A rule set from its message (the API's ``RuleSet``, or the store's own form);
    InvalidActionError when it is not valid."""
    data = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    data = _engine_values(data, message.DESCRIPTOR)
    data.pop("hash", None)
    for optional in ("set_max", "max_jokers_per_meld", "turn_cap"):
        data.setdefault(optional, None)
    for contract in data.get("contracts", []):
        for meld in contract.get("melds", []):
            if meld.get("kind") not in ("set", "run"):
                raise InvalidActionError("every contract meld needs a kind (set or run)")
    if data.get("stalemate") not in {s.value for s in Stalemate}:
        raise InvalidActionError(
            "a rule set needs a stalemate: STALEMATE_EXHAUSTIONS or STALEMATE_DRY"
        )
    return RuleSet.from_dict(data)


def _engine_values(values: dict[str, Any], descriptor: Descriptor) -> dict[str, Any]:
    """A message's JSON form (enums by their names) with each enum value the engine's
    name instead (a value the engine has no name for is left as it is: refused by the
    checks that read it)."""
    out = dict(values)
    for key, value in values.items():
        field = descriptor.fields_by_name.get(key)
        if field is None:
            continue
        if field.message_type is not None and isinstance(value, dict):
            out[key] = _engine_values(value, field.message_type)
        elif field.message_type is not None and isinstance(value, list):
            out[key] = [_engine_values(item, field.message_type) for item in value]
        elif field.enum_type is not None:
            back = _ENUM_FROM_NAME[field.enum_type.full_name]
            out[key] = (
                [back.get(item, item) for item in value]
                if isinstance(value, list)
                else back.get(value, value)
            )
    return out


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


def view_to_pb(view: PublicView, game_id: str, version: int, deadline: float) -> pb.View:
    """A view's message (a seat's or a spectator's), from the engine's typed view."""
    message = pb.View()
    fill_view_pb(message, view, game_id, version, deadline)
    return message


def fill_view_pb(
    message: pb.View, view: PublicView, game_id: str, version: int, deadline: float
) -> None:
    """:func:`view_to_pb` written into ``message`` (an empty one)."""
    message.game_id = game_id
    message.version = version
    message.deadline_unix = deadline
    _fill_view(message, view)


# The typed view's fields are set one by one: upb looks every keyword argument up by
# name, which costs more than the attribute sets.


def _fill_view(message: pb.View, view: PublicView) -> None:
    rules = view.rules
    message.rules = rules.name
    message.rules_hash = rules.hash
    message.seats = view.seats
    message.round = view.round
    message.rounds = rules.rounds
    _fill_contract(message.contract, view.contract)
    message.phase = PHASE_TO_PB[view.phase]
    message.current = view.current
    message.to_act.extend(view.to_act)
    add_player = message.players.add
    for player in view.players:
        info = add_player()
        info.seat = player.seat
        info.hand_size = player.hand_size
        info.opened = player.opened
        info.score = player.score
    _extend_melds(message.table, view.table)
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
                wire.answer = _CLAIM_ANSWER_TO_PB[name]
    message.exhaustions = view.exhaustions
    message.turns_completed = view.turns_completed
    if rules.turn_cap is not None:
        message.turn_cap = rules.turn_cap
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
    if meld.owner >= 0:  # (an analysed meld was laid by nobody)
        message.owner = meld.owner
    _add_cards(message.cards, meld.cards)


#: table melds' messages by the meld (the engine shares a meld between the states that
#: keep it, so a view copies the messages of the melds it showed before rather than
#: writing each card again): id → (the meld, its place, its message); an entry holds
#: its meld, so no other meld has that id while it is cached
_MELD_MESSAGES: dict[int, tuple[Meld, int, pb.Meld]] = {}
_MELD_MESSAGES_MAX = 8192


def _extend_melds(field: Any, melds: Sequence[Meld]) -> None:
    """Append the table ``melds``' messages to ``field`` (:func:`fill_meld`'s)."""
    cache = _MELD_MESSAGES
    messages = []
    for index, meld in enumerate(melds):
        cached = cache.get(id(meld))
        if cached is not None and cached[0] is meld and cached[1] == index:
            message = cached[2]
        else:
            message = pb.Meld()
            fill_meld(message, meld, index)
            if len(cache) >= _MELD_MESSAGES_MAX:
                cache.clear()
            cache[id(meld)] = (meld, index, message)
        messages.append(message)
    field.extend(messages)


def meld_from_pb(message: pb.Meld, decks: int) -> Meld:
    """The table meld a message shows (:func:`fill_meld`'s, read back by a client);
    InvalidActionError for a card id no deck of ``decks`` has."""
    suit = message.suit
    return Meld(
        KIND_FROM_PB[message.kind],
        tuple([card(c.id, decks) for c in message.cards]),
        message.rank,
        SUITS.index(suit) if suit else NO_SUIT,
        message.owner if message.HasField("owner") else -1,
    )


# ------------------------------------------------------------------ events
#
# Event.payload holds one message per event type, its oneof case named as the type.
# Each message has exactly the keys of its type's payload (the public part and the
# seat's secret part, Event.for_seat's merge) as fields, so one walk over a message's
# descriptor writes a payload's plain form into it: only the enum values (the
# engine's "set", "stock", "low") are translated, by the table below.
# tests/unit/test_convert.py checks that every event type has its case, that the
# fields are the keys the engine writes and that every payload a game produces reads
# back unchanged.

#: each event type's Event.payload case (its name is the type's)
EVENT_CASES: Mapping[str, FieldDescriptor] = {
    case.name: case for case in pb.Event.DESCRIPTOR.oneofs_by_name["payload"].fields
}

_CLAIM_ANSWER_TO_PB = engine_names(pb.ClaimAnswer.DESCRIPTOR)

# the engine's values of the enums payloads and rule sets carry -> the proto's numbers
_ENUM_TO_PB: dict[str, dict[Any, int]] = {
    pb.MeldKind.DESCRIPTOR.full_name: {k.value: int(v) for k, v in KIND_TO_PB.items()},
    pb.DrawSource.DESCRIPTOR.full_name: {k.value: int(v) for k, v in _SOURCE_TO_PB.items()},
    pb.RunEnd.DESCRIPTOR.full_name: {
        k.value: int(v) for k, v in _END_TO_PB.items() if k is not None
    },
    **{
        enum.full_name: engine_names(enum)
        for enum in (pb.RoundEndReason.DESCRIPTOR, pb.Stalemate.DESCRIPTOR)
    },
}
# and the proto's value names -> the engine's values (what a message's JSON form holds)
_ENUM_FROM_NAME: dict[str, dict[str, Any]] = {
    name: {pb.DESCRIPTOR.enum_types_by_name[name.removeprefix("glintwick.v1.")]
           .values_by_number[number].name: value for value, number in table.items()}
    for name, table in _ENUM_TO_PB.items()
}  # fmt: skip


# How fill_plain writes a field: (how, the enum's full name or "") by field name, by
# message class (read off its descriptor once: each descriptor attribute is a call)
_MESSAGES, _ENUMS, _VALUES, _MESSAGE, _ENUM, _VALUE = range(6)
_PLANS: dict[type, dict[str, tuple[int, str]]] = {}


def _plan(message: Message) -> dict[str, tuple[int, str]]:
    plan: dict[str, tuple[int, str]] = {}
    for field in message.DESCRIPTOR.fields:
        enum = field.enum_type
        if field.message_type is not None:
            how = _MESSAGES if field.is_repeated else _MESSAGE
        elif enum is not None:
            how = _ENUMS if field.is_repeated else _ENUM
        else:
            how = _VALUES if field.is_repeated else _VALUE
        plan[field.name] = (how, "" if enum is None else enum.full_name)
    _PLANS[type(message)] = plan
    return plan


def fill_plain(message: Message, values: Mapping[str, Any]) -> None:
    """Write a plain form (an event payload's: ints, strings, lists, dicts, None for
    absent) into an empty ``message`` whose field names are its keys."""
    plan = _PLANS.get(type(message)) or _plan(message)
    for key, value in values.items():
        if value is None:
            continue
        how, enum = plan[key]
        if how == _VALUE:
            setattr(message, key, value)
        elif how == _MESSAGES:
            target = getattr(message, key)
            for item in value:
                fill_plain(target.add(), item)
        elif how == _ENUMS:
            getattr(message, key).extend([_ENUM_TO_PB[enum][v] for v in value])
        elif how == _VALUES:
            getattr(message, key).extend(value)
        elif how == _MESSAGE:
            inner = getattr(message, key)
            inner.SetInParent()  # present even when empty
            fill_plain(inner, value)
        else:
            setattr(message, key, _ENUM_TO_PB[enum][value])


def fill_event(
    out: pb.Event, kind: str, seat: int | None, payload: Mapping[str, Any], version: int
) -> None:
    """Write an event (its type, seat and the payload as a viewer sees it, plain) into
    an empty ``out``."""
    if kind not in EVENT_CASES:
        raise TypeError(f"no Event.payload case for the event type {kind!r}")
    out.version = version
    out.type = EVENT_TYPE_TO_PB[kind]
    if seat is not None:
        out.seat = seat
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


#: an action's message, by action (actions are values: a card id, a source, a meld), for
#: :func:`extend_actions`; read-only, copied into the messages that carry them
_ACTION_MESSAGES: dict[Action, pb.Action] = {}
_ACTION_MESSAGES_MAX = 8192


def extend_actions(field: Any, actions: Sequence[Action]) -> None:
    """Append ``actions``' messages to ``field`` (a repeated Action field, a prompt's
    legal actions say): the messages of actions seen before are copied, not built again
    (a prompt lists the same draws and discards over and over)."""
    field.extend([action_message(action) for action in actions])


def action_message(action: Action) -> pb.Action:
    """:func:`action_to_pb` of ``action``, written once: read-only (copy it in)."""
    message = _ACTION_MESSAGES.get(action)
    if message is None:
        message = action_to_pb(action)
        if len(_ACTION_MESSAGES) < _ACTION_MESSAGES_MAX:
            _ACTION_MESSAGES[action] = message
    return message


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
