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
from clients.training.actions import CARD_TYPES, LAYOUT_FEATURES, TYPE_OF_ID
from engine.melds import Meld
from engine.rulesets import MeldKind, RuleSet

__all__ = ["PHASES", "Encoder", "ObservationLayout", "encode"]

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


_TYPES = TYPE_OF_ID


_SCORE_BYTES = bytes(
    (-128 if v < -128 else (127 if v > 127 else v)) & 0xFF
    for v in (s // 8 for s in range(-128 * 8, 128 * 8))
)  # score // 8 clipped to int8, as its byte, for scores in -1024..1023 (offset 1024)
_RUN = MeldKind.RUN
# (slice sources are bytearrays: a bytes source is copied into a new bytearray first)
_ZEROS = bytearray(CARD_TYPES)
_INT8 = np.dtype(np.int8)
_SET = MeldKind.SET


def _score_byte(score: int) -> int:
    if -1024 <= score < 1024:
        return _SCORE_BYTES[score + 1024]
    return 0x80 if score < 0 else 127


def _contract_scalars(rules: RuleSet) -> tuple[tuple[int, bytearray], ...]:
    """Per round (from 0): the scalars fixed by the rules: the rounds (after the round
    number), then the contract's discards and its melds as bytes (after the counters)."""
    out = []
    for contract in rules.contracts:
        tail = [int(contract.discards)]
        for need in contract.melds[:MAX_CONTRACT_MELDS]:
            tail.extend((1 if need.kind is _SET else 2, min(127, need.size)))
        # (padded: the scalars block is written whole, over the last round's)
        out.append((rules.rounds, bytearray(bytes(tail).ljust(1 + 2 * MAX_CONTRACT_MELDS, b"\0"))))
    return tuple(out)


# (id of a rule set -> the rule set, kept alive so the id stays its, and its scalars)
_CONTRACT_SCALARS: dict[int, tuple[RuleSet, tuple[tuple[int, bytearray], ...]]] = {}
_PHASE_ONE_HOT = {p: tuple(int(i == k) for k in range(4)) for i, p in enumerate(PHASES)}


# the table's blocks by the table's identity (an engine state's melds are a tuple that
# stays the same object until a meld changes), for the seat it is seen from
_TABLES: dict[tuple[int, int, int, int, int], tuple[Sequence[Meld], bytearray, bytearray]] = {}
_TABLES_KEPT = 256


def _table_bytes(
    table: Sequence[Meld], me: int, seats: int, slots: int, type_of: tuple[int, ...]
) -> tuple[bytearray, bytearray]:
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
    _TABLES[key] = (table, plane, features)
    return plane, features


# the seats' block by what it is made of (hand sizes change a card at a time)
_SEATS: dict[tuple[object, ...], bytearray] = {}
_SEATS_KEPT = 4096


def _seats_bytes(
    me: int,
    seats: int,
    current: int,
    sizes: Sequence[int],
    mine: int,
    opened: Sequence[bool],
    scores: Sequence[int],
) -> bytearray:
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
    return bytearray(block)


def encode(
    shape: ObservationLayout,
    sit: Situation,
    memory: TableMemory,
    layout_features: Sequence[tuple[int, ...]] = (),
) -> NDArray[np.int8]:
    """``sit``'s seat's observation (a fresh :class:`Encoder`'s: one seat's repeated
    observations are cheaper through one kept encoder)."""
    return Encoder(shape)(sit, memory, layout_features)


class Encoder:
    """Builds one seat's observations, one after another: the vector is kept between
    calls and only the blocks whose inputs changed are written again (the hand by its
    tuple's identity, its plane by the cards that left and joined it, the pile's plane
    by the cards that left and joined the pile's list, the table by its tuple's
    identity); each call hands out a fresh read-only copy.  What it returns is
    :func:`encode`'s, whatever it was asked before."""

    __slots__ = ("_blocked", "_hand", "_held", "_ids", "_layouts", "_pile", "_table", "_top",
                 "_vec", "shape")  # fmt: skip

    def __init__(self, shape: ObservationLayout) -> None:
        self.shape = shape
        self._vec = bytearray(shape.size)
        self._hand: tuple[object, ...] | None = None  # the hand its block shows
        self._ids: list[int] = []  # its card ids
        self._pile: list[int] = []  # the pile list its plane counts
        self._held: tuple[int, dict[int, set[int]]] = (-1, {})  # the seat, the cards shown
        self._top = -1  # the index set in the top's block (-1: none)
        self._blocked = -1
        self._table: Sequence[Meld] = ()  # the table its blocks show
        self._layouts = 0  # candidates written

    def __call__(
        self,
        sit: Situation,
        memory: TableMemory,
        layout_features: Sequence[tuple[int, ...]] = (),
    ) -> NDArray[np.int8]:
        """(A step's hot path: hence the local names and the tables computed once per
        rule set.)"""
        shape = self.shape
        (hand_at, pile_at, known_at, table_at, top_at, blocked_at, slots_at, seats_at,
         scalars_at, layouts_at) = shape.offsets  # fmt: skip
        vec = self._vec
        rules: RuleSet = sit.rules
        type_of = _TYPES[rules.decks]
        seats = sit.seats
        me = sit.seat
        hand = sit.hand
        if hand is not self._hand:
            ids = [c.id for c in hand]
            if not self._hand_moved(self._ids, ids, hand_at, type_of):
                vec[hand_at : hand_at + CARD_TYPES] = _ZEROS
                for cid in ids:
                    vec[hand_at + type_of[cid]] += 1
            self._hand = hand
            self._ids = ids
        pile = memory.pile
        old = self._pile
        n = min(len(old), len(pile))
        same = 0  # the length of the bottom part the two lists share
        while same < n and old[same] == pile[same]:
            same += 1
        if same < n or len(old) != len(pile):
            self._pile_moved(old, pile, same, pile_at, type_of)
            self._pile = pile[:]
        held = memory.held
        if me != self._held[0] or held != self._held[1]:
            vec[known_at : known_at + CARD_TYPES * (seats - 1)] = bytearray(
                CARD_TYPES * (seats - 1)
            )
            for seat, cards in held.items():
                r = (seat - me) % seats
                if r == 0:
                    continue
                at = known_at + (r - 1) * CARD_TYPES
                for cid in cards:
                    vec[at + type_of[cid]] += 1
            self._held = (me, {seat: set(cards) for seat, cards in held.items()})
        top = sit.discard_top
        index = -1 if top is None else top_at + type_of[top.id]
        if index != self._top:
            if self._top >= 0:
                vec[self._top] = 0
            if index >= 0:
                vec[index] = 1
            self._top = index
        taken = sit.taken_from_discard
        index = -1 if taken is None else blocked_at + type_of[taken]
        if index != self._blocked:
            if self._blocked >= 0:
                vec[self._blocked] = 0
            if index >= 0:
                vec[index] = 1
            self._blocked = index
        table = sit.table
        if table is not self._table:
            before = self._table
            if table:
                plane, slot_bytes = _table_bytes(table, me, seats, shape.slots, type_of)
            else:
                plane, slot_bytes = _ZEROS, bytearray()
            vec[table_at : table_at + CARD_TYPES] = plane
            vec[slots_at : slots_at + len(slot_bytes)] = slot_bytes
            shown = min(len(before), shape.slots) * SLOT_FEATURES
            if shown > len(slot_bytes):
                at = slots_at + len(slot_bytes)
                vec[at : slots_at + shown] = bytearray(shown - len(slot_bytes))
            self._table = table
        sizes, opened, scores, current = sit.hand_sizes, sit.opened_seats, sit.scores, sit.current
        key = (me, seats, current, sizes or len(hand), opened, scores)
        block = _SEATS.get(key)
        if block is None:
            block = _seats_bytes(me, seats, current, sizes, len(hand), opened, scores)
            if len(_SEATS) >= _SEATS_KEPT:
                _SEATS.clear()
            _SEATS[key] = block
        vec[seats_at : seats_at + len(block)] = block
        cached = _CONTRACT_SCALARS.get(id(rules))
        if cached is None or cached[0] is not rules:
            cached = _CONTRACT_SCALARS[id(rules)] = (rules, _contract_scalars(rules))
        round_number = sit.round_number
        rounds, tail = cached[1][round_number - 1]
        stock, pile_size, unknown = sit.stock_size, sit.discard_size, memory.unknown
        turns = sit.turns_completed // 2
        phase = _PHASE_ONE_HOT[sit.phase]
        scalars = bytearray(
            (
                round_number,
                rounds,
                phase[0],
                phase[1],
                phase[2],
                phase[3],
                stock if stock < 127 else 127,
                pile_size if pile_size < 127 else 127,
                unknown if unknown < 127 else 127,
                int(sit.laid_this_turn),
                turns if turns < 127 else 127,
            )
        )
        scalars += tail
        vec[scalars_at : scalars_at + len(scalars)] = scalars
        shown = min(len(layout_features), shape.layouts)
        if shown or self._layouts:
            at = layouts_at
            for features in layout_features[:shown]:
                vec[at : at + LAYOUT_FEATURES] = bytearray(features)
                at += LAYOUT_FEATURES
            end = layouts_at + self._layouts * LAYOUT_FEATURES
            if end > at:
                vec[at:end] = bytearray(end - at)
            self._layouts = shown
        return np.frombuffer(bytes(vec), _INT8)

    def _hand_moved(
        self, old: list[int], new: list[int], hand_at: int, type_of: tuple[int, ...]
    ) -> bool:
        """Count the cards that left the hand and those that joined it, for two hands in
        card order that differ by at most two cards; False (nothing written) otherwise."""
        vec = self._vec
        i = j = 0
        moved: list[int] = []  # card ids gone (as -1 - id) and come (as id)
        while i < len(old) or j < len(new):
            if i < len(old) and j < len(new) and old[i] == new[j]:
                i += 1
                j += 1
            elif j >= len(new) or (i < len(old) and old[i] < new[j]):
                moved.append(-1 - old[i])
                i += 1
            else:
                moved.append(new[j])
                j += 1
            if (
                len(moved) > 2
                or (j > 1 and new[j - 1] <= new[j - 2])
                or (i > 1 and old[i - 1] <= old[i - 2])
            ):
                return False  # (not in card order: counted again whole)
        for cid in moved:
            if cid < 0:
                vec[hand_at + type_of[-1 - cid]] -= 1
            else:
                vec[hand_at + type_of[cid]] += 1
        return True

    def _pile_moved(
        self, old: list[int], new: list[int], same: int, pile_at: int, type_of: tuple[int, ...]
    ) -> None:
        """Count the cards that left the pile's list and those that joined it: cards leave
        and join at its top, so the lists share a bottom part (``same`` cards long); when
        it reaches within two cards of the shorter list's end, only the cards above it are
        counted, else the whole plane again."""
        vec = self._vec
        n = min(len(old), len(new))
        k = same
        if k > 0 and k > n - 3:
            for cid in old[k:]:
                vec[pile_at + type_of[cid]] -= 1
        else:
            k = 0
            vec[pile_at : pile_at + CARD_TYPES] = _ZEROS
        for cid in new[k:]:
            vec[pile_at + type_of[cid]] += 1
