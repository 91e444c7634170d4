"""The stored forms: engine state and events ⇄ the store's protobuf messages.

The stored game state has its own compact message (``EngineState``), written
field by field because it is on the hot path of every move.  Conversions of the
public messages live in :mod:`glintwick.convert`, shared with the clients.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct

from engine.events import Event
from engine.game import GameState
from engine.rulesets import RuleSet
from glintwick.convert import (
    KIND_FROM_PB,
    KIND_TO_PB,
    fill_struct,
    rules_from_pb,
    rules_to_pb,
    unfloat,
)
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import storage_pb2 as spb

_ANSWER_TO_PB = {
    None: spb.CLAIM_ANSWER_PENDING,
    True: spb.CLAIM_ANSWER_CLAIM,
    False: spb.CLAIM_ANSWER_PASS,
}
_ANSWER_FROM_PB = {v: k for k, v in _ANSWER_TO_PB.items()}


def stored_event(event: Event) -> spb.StoredEvent:
    message = spb.StoredEvent(type=str(event.type))
    if event.seat is not None:
        message.seat = event.seat
    fill_struct(message.public, event.public)
    for seat, secret in sorted(event.secret.items()):
        fill_struct(message.secret[seat], secret)
    return message


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
    out = pb.Event(version=version, type=message.type)
    if message.HasField("seat"):
        out.seat = message.seat
    merged = Struct()
    merged.CopyFrom(message.public)
    if viewer is not None and viewer in message.secret:
        merged.MergeFrom(message.secret[viewer])
    out.data.CopyFrom(merged)
    return out


# ------------------------------------------------------------------ the stored state


def state_to_pb(state: GameState, rules_message: pb.RuleSet | None = None) -> spb.EngineState:
    message = spb.EngineState(
        seats=state.seats,
        seed=state.seed,
        round=state.round_number,
        phase=state.phase.value,
        current=state.current,
        stock=[c.id for c in state.stock],
        discards=[c.id for c in state.discards],
        opened=state.opened,
        scores=state.scores,
        laid_this_turn=state.laid_this_turn,
        claim_answers=[_ANSWER_TO_PB[a] for a in state.claim_answers],
        exhaustions=state.exhaustions,
        epoch=state.epoch,
        turns_completed=state.turns_completed,
        action_count=state.action_count,
    )
    message.rules.CopyFrom(rules_message if rules_message is not None else rules_to_pb(state.rules))
    for hand in state.hands:
        message.hands.add().ids.extend(c.id for c in hand)
    for meld in state.table:
        message.table.add(
            kind=KIND_TO_PB[meld.kind],
            rank=meld.rank,
            suit=meld.suit,
            owner=meld.owner,
            cards=[c.id for c in meld.cards],
        )
    if state.taken_from_discard is not None:
        message.taken_from_discard = state.taken_from_discard
    for round_number, order in state.stock_orders:
        message.stock_orders.add(round=round_number, cards=order)
    return message


def state_from_pb(message: spb.EngineState, rules: RuleSet | None = None) -> GameState:
    """The engine state a stored message holds (validated by GameState.from_dict)."""
    data: dict[str, Any] = {
        "rules": rules or rules_from_pb(message.rules),
        "seats": message.seats,
        "seed": message.seed.hex(),
        "round": message.round,
        "phase": message.phase,
        "current": message.current,
        "hands": [list(h.ids) for h in message.hands],
        "stock": list(message.stock),
        "discards": list(message.discards),
        "table": [
            {
                "kind": KIND_FROM_PB[m.kind].value,
                "cards": list(m.cards),
                "rank": m.rank,
                "suit": m.suit,
                "owner": m.owner,
            }
            for m in message.table
        ],
        "opened": list(message.opened),
        "scores": list(message.scores),
        "taken_from_discard": (
            message.taken_from_discard if message.HasField("taken_from_discard") else None
        ),
        "laid_this_turn": message.laid_this_turn,
        "claim_answers": [_ANSWER_FROM_PB[a] for a in message.claim_answers],
        "exhaustions": message.exhaustions,
        "epoch": message.epoch,
        "turns_completed": message.turns_completed,
        "action_count": message.action_count,
        "stock_orders": {str(o.round): list(o.cards) for o in message.stock_orders},
    }
    return GameState.from_dict(data)
