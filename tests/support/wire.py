"""The API's messages read back as the engine's plain forms, for tests only.

The service writes views and events from the engine's values (``glintwick.convert``)
and clients read a view straight into a bot's ``Situation``; nothing in production
reads a message back into a dict.  Tests do, to compare what a client gets with what
the engine says: an event's message read back as ``Event.for_seat`` gives it
(:func:`event_plain`), a view's reference message built from the engine's plain form
by protobuf's own JSON mapping (:func:`view_message`, independent of the service's
field-by-field writer), and the stored forms (:func:`stored_event`,
:func:`event_from_stored`); and a bot's situation through the wire
(:func:`wire_situation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from clients.bots.base import Situation
from engine.actions import DrawSource
from engine.events import Event, EventType
from engine.game import GameState
from engine.melds import End
from engine.rulesets import MeldKind
from engine.views import build_seat_view
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec

#: the event types with a secret part (a seat's own), and its keys: docs/API.md's
#: **secret** fields (tests/unit/test_convert.py checks them against the keys the
#: engine's events have, tests/integration/test_event_docs.py against the docs)
SECRET_FIELDS: Mapping[str, frozenset[str]] = {
    EventType.ROUND_STARTED: frozenset({"hand"}),
    EventType.DREW: frozenset({"card"}),
    EventType.CLAIM_AWARDED: frozenset({"penalty"}),
}
#: the public keys an event leaves out (rather than sets to null) when they have no
#: value: a stock draw's card (secret), shown only for a draw from the discard pile
ABSENT_WHEN_NONE: Mapping[str, frozenset[str]] = {EventType.DREW: frozenset({"card"})}

# the proto's numbers of the enums payloads carry -> the engine's values (the zero
# of an enum reads as None: a set's RunEnd)
_ENGINE_VALUES: dict[str, dict[int, str]] = {
    pb.MeldKind.DESCRIPTOR.full_name: {
        pb.MELD_KIND_SET: MeldKind.SET.value,
        pb.MELD_KIND_RUN: MeldKind.RUN.value,
    },
    pb.DrawSource.DESCRIPTOR.full_name: {
        pb.DRAW_SOURCE_STOCK: DrawSource.STOCK.value,
        pb.DRAW_SOURCE_DISCARD: DrawSource.DISCARD.value,
    },
    pb.RunEnd.DESCRIPTOR.full_name: {
        pb.RUN_END_LOW: End.LOW.value,
        pb.RUN_END_HIGH: End.HIGH.value,
    },
    pb.RoundEndReason.DESCRIPTOR.full_name: {
        pb.ROUND_END_REASON_WENT_OUT: "went_out",
        pb.ROUND_END_REASON_EXHAUSTIONS: "exhaustions",
        pb.ROUND_END_REASON_TURN_CAP: "turn_cap",
        pb.ROUND_END_REASON_DRY: "dry",
        pb.ROUND_END_REASON_DEAD: "dead",
    },
}
# string fields whose empty value is the engine's None (a set's suit)
_EMPTY_IS_NONE = frozenset({(pb.Meld.DESCRIPTOR.full_name, "suit")})


def payload_plain(message: Message) -> dict[str, Any]:
    """A payload message's plain form, as the engine writes payloads (fields with
    presence only when set, enums by the engine's names, a set's suit None)."""
    out: dict[str, Any] = {}
    full_name = message.DESCRIPTOR.full_name
    for field in message.DESCRIPTOR.fields:
        name = field.name
        value = getattr(message, name)
        if field.is_repeated:
            if field.message_type is not None:
                out[name] = [payload_plain(item) for item in value]
            elif field.enum_type is not None:
                names = _ENGINE_VALUES[field.enum_type.full_name]
                out[name] = [names.get(v) for v in value]
            else:
                out[name] = list(value)
        elif field.has_presence and not message.HasField(name):
            continue
        elif field.message_type is not None:
            out[name] = payload_plain(value)
        elif field.enum_type is not None:
            out[name] = _ENGINE_VALUES[field.enum_type.full_name].get(value)
        elif value == "" and (full_name, name) in _EMPTY_IS_NONE:
            out[name] = None
        else:
            out[name] = value
    return out


def event_plain(message: pb.Event, viewer: int | None) -> dict[str, Any]:
    """The event as the engine shows it to ``viewer`` (``Event.for_seat``'s form:
    ``type``, ``seat`` and the payload's keys), from the message ``viewer`` got."""
    kind = event_type(message)
    assert message.WhichOneof("payload") == kind, f"a {kind} event without its payload"
    seat = message.seat if message.HasField("seat") else None
    payload = getattr(message, kind)
    plain = payload_plain(payload)
    secret = SECRET_FIELDS.get(kind, frozenset())
    absent_when_none = ABSENT_WHEN_NONE.get(kind, frozenset())
    secret_only = secret - absent_when_none
    out: dict[str, Any] = {"type": kind, "seat": seat}
    for field in payload.DESCRIPTOR.fields:
        name = field.name
        if name in secret_only:
            continue
        if name in plain:
            out[name] = plain[name]
        elif name not in absent_when_none:
            out[name] = None
    # a secret list (a hand, penalty cards) is the viewer's when the event is about
    # every seat (no seat) or about the viewer's own
    if viewer is not None and seat in (None, viewer):
        out.update((name, plain[name]) for name in secret if name in plain)
    return out


def event_type(message: pb.Event) -> str:
    """The engine's name of an event message's type (``EVENT_TYPE_DREW``: ``"drew"``)."""
    return pb.EventType.Name(message.type).removeprefix("EVENT_TYPE_").lower()


def view_message(view: Mapping[str, Any], game_id: str, version: int, deadline: float) -> pb.View:
    """The message of a view's plain form (``engine.views.seat_view``), by protobuf's
    JSON mapping: the reference the service's field-by-field writer is held to."""
    message = pb.View(game_id=game_id, version=version, deadline_unix=deadline)
    data = _kinds_to_pb(dict(view))
    data["phase"] = f"PHASE_{data['phase'].upper()}"
    claim = data.get("claim")
    if claim:
        for answer in claim.get("answers", []):
            # (not answered yet: None, left out by _kinds_to_pb)
            answer["answer"] = f"CLAIM_ANSWER_{answer.get('answer', 'unspecified').upper()}"
    json_format.ParseDict(data, message)
    return message


def _kinds_to_pb(value: Any) -> Any:
    """A plain form with every meld kind (``"set"``) as the proto enum's name, and
    without its Nones (unset fields)."""
    if isinstance(value, dict):
        return {
            k: (_KIND_NAMES[v] if k == "kind" else _kinds_to_pb(v))
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list | tuple):
        return [_kinds_to_pb(v) for v in value]
    return value


_KIND_NAMES = {MeldKind.SET.value: "MELD_KIND_SET", MeldKind.RUN.value: "MELD_KIND_RUN"}


# --------------------------------------------------------------------------- stored forms


def stored_event(event: Event) -> spb.StoredEvent:
    """An event's stored message, as a move writes it into its log entry."""
    message = spb.StoredEvent()
    codec.fill_stored_event(message, event)
    return message


def event_from_stored(message: spb.StoredEvent) -> Event:
    """The engine event a stored message holds (by protobuf's own Struct mapping)."""
    return Event(
        type=message.type,
        seat=message.seat if message.HasField("seat") else None,
        public=unfloat(json_format.MessageToDict(message.public)),
        secret={
            seat: unfloat(json_format.MessageToDict(payload))
            for seat, payload in sorted(message.secret.items())
        },
    )


def unfloat(value: Any) -> Any:
    """Struct stores numbers as doubles: give integral ones back as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: unfloat(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unfloat(v) for v in value]
    return value


# --------------------------------------------------------------------------- bots


def wire_situation(state: GameState, seat: int) -> Situation:
    """``seat``'s situation as a bot over the API gets it: the seat's view message, as
    the service writes it, read by :meth:`Situation.from_pb`."""
    message = convert.view_to_pb(build_seat_view(state, seat), "g", state.action_count, 0.0)
    return Situation.from_pb(message, state.rules)
