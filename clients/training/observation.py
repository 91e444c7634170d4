"""A seat's observation: one int8 vector built only from what the seat may know.

Its inputs are the seat's :class:`~clients.bots.base.Situation` (its own view: nothing
hidden) and a :class:`~clients.bots.search.TableMemory` the seat keeps of the discard
pile and of the cards it saw opponents take, fed at each of its own decisions.  The
environment and :class:`~clients.training.policies.PolicyBot` build it the same way,
so a policy trained in the environment sees the same vector at a tournament's table.

Seats are relative: index 0 is always the observing seat, then the seats after it in
turn order.  Counts are per card type (:func:`~clients.training.actions.card_type`),
numbers too large for int8 are scaled and clipped (scores by 8, sizes capped at 127).
:meth:`ObservationLayout.parts` names every block and its offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from clients.bots.base import Situation
from clients.bots.search import TableMemory
from clients.training.actions import CARD_TYPES, LAYOUT_FEATURES, card_type
from engine.cards import card
from engine.rulesets import MeldKind, RuleSet

__all__ = ["PHASES", "ObservationLayout", "encode"]

PHASES = ("draw", "play", "claim", "game_over")
SLOT_FEATURES = 7  # present, is a run, rank, suit + 1, length, jokers, owner (relative) + 1
SEAT_FEATURES = 4  # hand size, opened, score / 8, is the current seat
MAX_CONTRACT_MELDS = 4  # (kind, size) pairs of the round's contract shown
SCALARS = 12 + MAX_CONTRACT_MELDS * 2


@dataclass(frozen=True, slots=True)
class ObservationLayout:
    """The blocks of the vector for ``seats`` seats, ``slots`` meld slots and
    ``layouts`` contract candidates."""

    seats: int
    slots: int
    layouts: int

    def parts(self) -> dict[str, tuple[int, int]]:
        """Each block's (offset, length), in order."""
        sizes = {
            "hand": CARD_TYPES,
            "pile_seen": CARD_TYPES,  # the pile's cards the seat saw laid and not taken
            "opponents_known": CARD_TYPES * (self.seats - 1),  # seen taken, per opponent
            "table": CARD_TYPES,
            "discard_top": CARD_TYPES,  # one-hot
            "blocked": CARD_TYPES,  # one-hot: the card taken from the pile this turn
            "slots": SLOT_FEATURES * self.slots,
            "seats": SEAT_FEATURES * self.seats,
            "scalars": SCALARS,
            "layouts": LAYOUT_FEATURES * self.layouts,
        }
        out: dict[str, tuple[int, int]] = {}
        offset = 0
        for name, length in sizes.items():
            out[name] = (offset, length)
            offset += length
        return out

    @property
    def size(self) -> int:
        offset, length = self.parts()["layouts"]
        return offset + length


def _clip(value: int) -> int:
    return -128 if value < -128 else (127 if value > 127 else value)


def encode(
    shape: ObservationLayout,
    sit: Situation,
    memory: TableMemory,
    layout_features: Sequence[tuple[int, ...]] = (),
    out: NDArray[np.int8] | None = None,
) -> NDArray[np.int8]:
    """``sit``'s seat's observation (written into ``out`` when given)."""
    parts = shape.parts()
    vec = np.zeros(shape.size, dtype=np.int8) if out is None else out
    if out is not None:
        vec.fill(0)
    rules: RuleSet = sit.rules
    decks = rules.decks
    seats = sit.seats
    me = sit.seat

    def rel(seat: int) -> int:
        return (seat - me) % seats

    base = parts["hand"][0]
    for c in sit.hand:
        vec[base + card_type(c)] += 1
    base = parts["pile_seen"][0]
    for cid in memory.pile:
        vec[base + card_type(card(cid, decks))] += 1
    base = parts["opponents_known"][0]
    for seat, held in memory.held.items():
        r = rel(seat)
        if r == 0:
            continue
        for cid in held:
            vec[base + (r - 1) * CARD_TYPES + card_type(card(cid, decks))] += 1
    base = parts["table"][0]
    for m in sit.table:
        for c in m.cards:
            vec[base + card_type(c)] += 1
    if sit.discard_top is not None:
        vec[parts["discard_top"][0] + card_type(sit.discard_top)] = 1
    if sit.taken_from_discard is not None:
        vec[parts["blocked"][0] + card_type(card(sit.taken_from_discard, decks))] = 1
    base = parts["slots"][0]
    for i, m in enumerate(sit.table[: shape.slots]):
        at = base + i * SLOT_FEATURES
        run = m.kind is MeldKind.RUN
        vec[at : at + SLOT_FEATURES] = (
            1,
            int(run),
            m.rank,
            m.suit + 1,
            min(127, len(m.cards)),
            min(127, m.jokers),
            rel(m.owner) + 1 if m.owner >= 0 else 0,
        )
    base = parts["seats"][0]
    for seat in range(seats):
        at = base + rel(seat) * SEAT_FEATURES
        size = sit.hand_sizes[seat] if sit.hand_sizes else len(sit.hand)
        opened = sit.opened_seats[seat] if sit.opened_seats else False
        score = sit.scores[seat] if sit.scores else 0
        vec[at : at + SEAT_FEATURES] = (
            min(127, size),
            int(opened),
            _clip(score // 8),
            int(seat == sit.current),
        )
    base = parts["scalars"][0]
    contract = rules.contracts[sit.round_number - 1]
    phase = PHASES.index(sit.phase)
    scalars = [
        sit.round_number,
        rules.rounds,
        int(phase == 0),
        int(phase == 1),
        int(phase == 2),
        int(phase == 3),
        min(127, sit.stock_size),
        min(127, sit.discard_size),
        min(127, memory.unknown),
        int(sit.laid_this_turn),
        min(127, sit.turns_completed // 2),
        int(contract.discards),
    ]
    for need in contract.melds[:MAX_CONTRACT_MELDS]:
        scalars.extend((1 if need.kind is MeldKind.SET else 2, min(127, need.size)))
    vec[base : base + len(scalars)] = scalars
    base = parts["layouts"][0]
    for k, features in enumerate(layout_features[: shape.layouts]):
        at = base + k * LAYOUT_FEATURES
        vec[at : at + LAYOUT_FEATURES] = features
    return vec
