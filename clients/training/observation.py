"""A seat's observation: one int8 vector built only from what the seat may know.

Its inputs are the seat's :class:`~clients.bots.base.Situation` (its own view: nothing
hidden) and a :class:`~clients.bots.tracking.TableMemory` the seat keeps of the discard
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
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from clients.bots.base import Situation
from clients.bots.tracking import TableMemory
from clients.training.actions import CARD_TYPES, JOKER_TYPE, LAYOUT_FEATURES
from engine.cards import MAX_DECKS, MAX_JOKERS
from engine.melds import Meld
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
    # computed once: each block's offset in order, and the whole size (the hot path's)
    offsets: tuple[int, ...] = field(init=False, repr=False, compare=False)
    size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = self.parts()
        object.__setattr__(self, "offsets", tuple(offset for offset, _ in parts.values()))
        offset, length = parts["layouts"]
        object.__setattr__(self, "size", offset + length)

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


def _type_of_id(decks: int) -> tuple[int, ...]:
    """Card id -> type, for a game of ``decks`` decks (jokers after the naturals)."""
    naturals = decks * 52
    return tuple(i % 52 if i < naturals else JOKER_TYPE for i in range(naturals + MAX_JOKERS))


_TYPES = {decks: _type_of_id(decks) for decks in range(1, MAX_DECKS + 1)}


_SCORE_BYTES = bytes(
    (-128 if v < -128 else (127 if v > 127 else v)) & 0xFF
    for v in (s // 8 for s in range(-128 * 8, 128 * 8))
)  # score // 8 clipped to int8, as its byte, for scores in -1024..1023 (offset 1024)
_RUN = MeldKind.RUN
_SET = MeldKind.SET


def _score_byte(score: int) -> int:
    if -1024 <= score < 1024:
        return _SCORE_BYTES[score + 1024]
    return 0x80 if score < 0 else 127


def _contract_scalars(rules: RuleSet) -> tuple[tuple[bytes, bytes], ...]:
    """Per round (from 0): the scalars fixed by the rules, as bytes: the rounds (after
    the round number), then the contract's discards and its melds (after the counters)."""
    out = []
    for contract in rules.contracts:
        tail = [int(contract.discards)]
        for need in contract.melds[:MAX_CONTRACT_MELDS]:
            tail.extend((1 if need.kind is _SET else 2, min(127, need.size)))
        out.append((bytes((rules.rounds,)), bytes(tail)))
    return tuple(out)


# (id of a rule set -> the rule set, kept alive so the id stays its, and its scalars)
_CONTRACT_SCALARS: dict[int, tuple[RuleSet, tuple[tuple[bytes, bytes], ...]]] = {}
_PHASE_BYTES = {p: bytes(int(i == k) for k in range(4)) for i, p in enumerate(PHASES)}


# the table's blocks by the table's identity (an engine state's melds are a tuple that
# stays the same object until a meld changes), for the seat it is seen from
_TABLES: dict[tuple[int, int, int, int, int], tuple[Sequence[Meld], bytes, bytes]] = {}
_TABLES_KEPT = 256


def _table_bytes(
    table: Sequence[Meld], me: int, seats: int, slots: int, type_of: tuple[int, ...]
) -> tuple[bytes, bytes]:
    """The table's count plane and its slot features, as seen by seat ``me``."""
    key = (id(table), me, seats, slots, len(type_of))
    found = _TABLES.get(key)
    if found is not None and found[0] is table:
        return found[1], found[2]
    plane = bytearray(CARD_TYPES)
    for m in table:
        for c in m.cards:
            plane[type_of[c.id]] += 1
    features = bytearray()
    for m in table[:slots]:
        owner = m.owner
        features += bytes(
            (
                1,
                int(m.kind is _RUN),
                m.rank,
                m.suit + 1,
                min(127, len(m.cards)),
                min(127, m.jokers),
                (owner - me) % seats + 1 if owner >= 0 else 0,
            )
        )
    if len(_TABLES) >= _TABLES_KEPT:
        _TABLES.clear()
    _TABLES[key] = (table, bytes(plane), bytes(features))
    return bytes(plane), bytes(features)


# the seats' block by what it is made of (hand sizes change a card at a time)
_SEATS: dict[tuple[object, ...], bytes] = {}
_SEATS_KEPT = 4096


def _seats_bytes(
    me: int,
    seats: int,
    current: int,
    sizes: Sequence[int],
    mine: int,
    opened: Sequence[bool],
    scores: Sequence[int],
) -> bytes:
    """Per seat, from ``me`` on in turn order: hand size, opened, score / 8, to act."""
    block: list[int] = []
    for k in range(seats):
        seat = (me + k) % seats
        size = sizes[seat] if sizes else mine
        score = scores[seat] if scores else 0
        block += (
            size if size < 127 else 127,
            (1 if opened[seat] else 0) if opened else 0,
            _SCORE_BYTES[score + 1024] if -1024 <= score < 1024 else _score_byte(score),
            1 if seat == current else 0,
        )
    return bytes(block)


def encode(
    shape: ObservationLayout,
    sit: Situation,
    memory: TableMemory,
    layout_features: Sequence[tuple[int, ...]] = (),
) -> NDArray[np.int8]:
    """``sit``'s seat's observation.  (Written into a bytearray, each number as its
    int8's byte, and viewed as int8 once: a step's hot path, hence the local names and
    the tables computed once per rule set.)"""
    (hand_at, pile_at, known_at, table_at, top_at, blocked_at, slots_at, seats_at, scalars_at,
     layouts_at) = shape.offsets  # fmt: skip
    vec = bytearray(shape.size)
    rules: RuleSet = sit.rules
    type_of = _TYPES[rules.decks]
    seats = sit.seats
    me = sit.seat
    for c in sit.hand:
        vec[hand_at + type_of[c.id]] += 1
    for cid in memory.pile:
        vec[pile_at + type_of[cid]] += 1
    for seat, held in memory.held.items():
        r = (seat - me) % seats
        if r == 0:
            continue
        at = known_at + (r - 1) * CARD_TYPES
        for cid in held:
            vec[at + type_of[cid]] += 1
    if sit.discard_top is not None:
        vec[top_at + type_of[sit.discard_top.id]] = 1
    if sit.taken_from_discard is not None:
        vec[blocked_at + type_of[sit.taken_from_discard]] = 1
    table = sit.table
    if table:
        plane, slot_bytes = _table_bytes(table, me, seats, shape.slots, type_of)
        vec[table_at : table_at + CARD_TYPES] = plane
        vec[slots_at : slots_at + len(slot_bytes)] = slot_bytes
    sizes, opened, scores, current = sit.hand_sizes, sit.opened_seats, sit.scores, sit.current
    key = (me, seats, current, sizes or len(sit.hand), opened, scores)
    block = _SEATS.get(key)
    if block is None:
        block = _seats_bytes(me, seats, current, sizes, len(sit.hand), opened, scores)
        if len(_SEATS) >= _SEATS_KEPT:
            _SEATS.clear()
        _SEATS[key] = block
    vec[seats_at : seats_at + len(block)] = block
    cached = _CONTRACT_SCALARS.get(id(rules))
    if cached is None or cached[0] is not rules:
        cached = _CONTRACT_SCALARS[id(rules)] = (rules, _contract_scalars(rules))
    round_number = sit.round_number
    rounds, tail = cached[1][round_number - 1]
    stock, pile, unknown = sit.stock_size, sit.discard_size, memory.unknown
    turns = sit.turns_completed // 2
    scalars = (
        bytes((round_number,))
        + rounds
        + _PHASE_BYTES[sit.phase]
        + bytes(
            (
                stock if stock < 127 else 127,
                pile if pile < 127 else 127,
                unknown if unknown < 127 else 127,
                int(sit.laid_this_turn),
                turns if turns < 127 else 127,
            )
        )
        + tail
    )
    vec[scalars_at : scalars_at + len(scalars)] = scalars
    at = layouts_at
    for features in layout_features[: shape.layouts]:
        vec[at : at + LAYOUT_FEATURES] = bytes(features)
        at += LAYOUT_FEATURES
    return np.frombuffer(vec, dtype=np.int8)
