"""The stored forms: engine state and events ⇄ the store's protobuf messages.

The stored game state has its own compact message (``EngineState``), written
field by field because it is on the hot path of every move.  Conversions of the
public messages live in :mod:`glintwick.convert`, shared with the clients.
"""

from __future__ import annotations

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
        _add_meld(message.table, meld)
    if state.taken_from_discard is not None:
        message.taken_from_discard = state.taken_from_discard
    for round_number, order in state.stock_orders:
        message.stock_orders.add(round=round_number, cards=order)
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
    message.seats = after.seats
    message.seed = after.seed
    message.round = after.round_number
    message.phase = after.phase.value
    message.current = after.current
    _update_ids(message.stock, before.stock, after.stock)
    _update_ids(message.discards, before.discards, after.discards)
    if after.hands is not before.hands:
        hands = message.hands
        if len(hands) != len(after.hands) or len(before.hands) != len(after.hands):
            del hands[:]
            for hand in after.hands:
                hands.add().ids.extend([c.id for c in hand])
        else:
            for index, hand in enumerate(after.hands):
                _update_ids(hands[index].ids, before.hands[index], hand)
    if after.table is not before.table:
        table = message.table
        kept = 0
        for old, new in zip(before.table, after.table, strict=False):
            if old is not new:
                break
            kept += 1
        del table[kept:]
        for meld in after.table[kept:]:
            _add_meld(table, meld)
    if after.opened != before.opened:
        _rewrite(message.opened, after.opened)
    if after.scores != before.scores:
        _rewrite(message.scores, after.scores)
    if after.taken_from_discard is None:
        message.ClearField("taken_from_discard")
    else:
        message.taken_from_discard = after.taken_from_discard
    message.laid_this_turn = after.laid_this_turn
    if after.claim_answers != before.claim_answers:
        _rewrite(message.claim_answers, [_ANSWER_TO_PB[a] for a in after.claim_answers])
    message.exhaustions = after.exhaustions
    message.epoch = after.epoch
    message.turns_completed = after.turns_completed
    message.action_count = after.action_count
    if after.stock_orders != before.stock_orders:
        del message.stock_orders[:]
        for round_number, order in after.stock_orders:
            message.stock_orders.add(round=round_number, cards=order)


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
