"""Melds: validation of sets and runs, joker roles, lay-offs and joker swaps.

A :class:`Meld` on the table is immutable; laying off or swapping returns a new
one.  A joker's role is fixed by its position: in a run ``cards[i]`` stands for
rank ``rank + i`` of the run's suit, whatever card it is.  In a set every card
stands for the set's rank.  Rank 14 is an ace above the king (rule sets with
``ace_high``); an ace below the two is rank 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import attrgetter
from typing import Any, Final

from engine.cards import JOKER_RANK, NO_SUIT, SUITS, Card, card, cards_json, field_values
from engine.errors import IllegalActionError, InvalidActionError, Reason, checked_int
from engine.rulesets import MeldKind, RuleSet


class End(StrEnum):
    """Which end of a run a card is laid off to."""

    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True, slots=True)
class Meld:
    kind: MeldKind
    cards: tuple[Card, ...]  # a run: in rank order; a set: in id order
    rank: int  # a set: its rank; a run: the rank of cards[0] (1..14)
    suit: int  # a run: its suit; a set: -1
    owner: int = -1  # the seat that laid it (-1 before it is laid)

    @property
    def high(self) -> int:
        """A run's highest rank (1..14)."""
        return self.rank + len(self.cards) - 1

    @property
    def jokers(self) -> int:
        return sum(1 for c in self.cards if c.is_joker)

    @property
    def naturals(self) -> int:
        return len(self.cards) - self.jokers

    def rank_at(self, index: int) -> int:
        """The rank the card at ``index`` stands for (1..14)."""
        return self.rank if self.kind is MeldKind.SET else self.rank + index

    def with_owner(self, owner: int) -> Meld:
        return Meld(self.kind, self.cards, self.rank, self.suit, owner)

    def describe(self) -> str:
        return " ".join(c.code for c in self.cards)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


def _illegal(msg: str) -> IllegalActionError:
    return IllegalActionError(Reason.INVALID_MELD, msg)


def _check_jokers(naturals: int, jokers: int, rules: RuleSet) -> None:
    if naturals < rules.min_naturals_per_meld:
        raise _illegal(f"a meld needs at least {rules.min_naturals_per_meld} natural cards")
    if rules.max_jokers_per_meld is not None and jokers > rules.max_jokers_per_meld:
        raise _illegal(f"a meld may hold at most {rules.max_jokers_per_meld} joker(s)")


def build_set(cards: Sequence[Card], rules: RuleSet, size: int | None = None) -> Meld:
    """A set from these cards, or IllegalActionError(INVALID_MELD).

    ``size`` is the exact size a ``whiskertrail`` contract asks for, else the set
    only has to respect the rule set's limits.
    """
    if not cards:
        raise InvalidActionError("a meld needs cards")
    naturals = [c for c in cards if not c.is_joker]
    jokers = len(cards) - len(naturals)
    _check_jokers(len(naturals), jokers, rules)
    rank = naturals[0].rank
    if any(c.rank != rank for c in naturals):
        raise _illegal("a set's natural cards must share one rank")
    if len(cards) < rules.set_min:
        raise _illegal(f"a set needs at least {rules.set_min} cards")
    if rules.set_max is not None and len(cards) > rules.set_max:
        raise _illegal(f"a set holds at most {rules.set_max} cards")
    if rules.set_distinct_suits and len({c.suit for c in naturals}) != len(naturals):
        raise _illegal("a set's cards must all be of different suits")
    if size is not None and len(cards) != size:
        raise _illegal(f"this contract needs a set of exactly {size}")
    return Meld(MeldKind.SET, tuple(sorted(cards)), rank, NO_SUIT)


def run_placements(cards: Sequence[Card], rules: RuleSet) -> list[int]:
    """Every legal start rank for a run of these cards, lowest first (empty if none)."""
    naturals = [c for c in cards if not c.is_joker]
    jokers = len(cards) - len(naturals)
    length = len(cards)
    if not naturals or length > 13:
        return []
    suit = naturals[0].suit
    if any(c.suit != suit for c in naturals):
        return []
    top = rules.highest_run_rank
    ranks = sorted(c.rank for c in naturals)
    interpretations = [ranks]
    if rules.ace_high and ranks[0] == 1:
        # an ace may stand high instead; with two aces one is low and one high
        # only in a 14-rank run, which is longer than 13 and never legal.
        interpretations.append(sorted([*ranks[1:], 14]))
    starts: set[int] = set()
    for rs in interpretations:
        if len(set(rs)) != len(rs):
            continue
        lo, hi = rs[0], rs[-1]
        gaps = hi - lo + 1 - len(rs)
        if gaps > jokers:
            continue
        spare = jokers - gaps
        for below in range(spare + 1):
            start = lo - below
            end = hi + (spare - below)
            if start >= 1 and end <= top:
                starts.add(start)
    return sorted(starts)


def build_run(
    cards: Sequence[Card], rules: RuleSet, size: int | None = None, start: int | None = None
) -> Meld:
    """A run from these cards, in any order, or IllegalActionError(INVALID_MELD).

    Jokers fill the gaps; the rest go where the run starts lowest, unless the
    player names ``start`` (the rank of the run's first card).
    """
    if not cards:
        raise InvalidActionError("a meld needs cards")
    naturals = [c for c in cards if not c.is_joker]
    jokers = [c for c in cards if c.is_joker]
    _check_jokers(len(naturals), len(jokers), rules)
    if len(cards) < rules.run_min:
        raise _illegal(f"a run needs at least {rules.run_min} cards")
    if size is not None and len(cards) != size:
        raise _illegal(f"this contract needs a run of exactly {size}")
    starts = run_placements(cards, rules)
    if not starts:
        raise _illegal("these cards are not consecutive ranks of one suit")
    if start is None:
        start = starts[0]
    elif start not in starts:
        raise _illegal(f"the run cannot start at rank {start}")
    end = start + len(cards) - 1
    by_rank: dict[int, Card] = {}
    for c in naturals:
        rank = c.rank
        if rank == 1 and not (start <= 1 <= end):
            rank = 14
        by_rank[rank] = c
    spare = iter(sorted(jokers))
    ordered = tuple(by_rank[r] if r in by_rank else next(spare) for r in range(start, end + 1))
    return Meld(MeldKind.RUN, ordered, start, naturals[0].suit)


def build_meld(
    kind: MeldKind,
    cards: Sequence[Card],
    rules: RuleSet,
    size: int | None = None,
    start: int | None = None,
) -> Meld:
    if kind is MeldKind.SET:
        return build_set(cards, rules, size)
    return build_run(cards, rules, size, start)


def _natural_rank(c: Card, position: int) -> bool:
    """Whether natural card ``c`` can stand for rank ``position`` (1..14)."""
    return c.rank == position or (c.rank == 1 and position == 14)


def lay_off(meld: Meld, c: Card, rules: RuleSet, end: End | None = None) -> Meld:
    """The meld with ``c`` laid off, or IllegalActionError.

    Jokers (where the rule set allows them) go to the end the player names, by
    default the high end where it is legal.  A natural goes to the one end its
    rank fits; a natural whose place is already held by a joker is refused.
    """
    if c.is_joker and not rules.layoff_jokers:
        raise IllegalActionError(Reason.LAYOFF_JOKER_NOT_ALLOWED, "jokers cannot be laid off")
    if meld.kind is MeldKind.SET:
        return _lay_off_on_set(meld, c, rules)
    return _lay_off_on_run(meld, c, rules, end)


def _lay_off_on_set(meld: Meld, c: Card, rules: RuleSet) -> Meld:
    if rules.set_max is not None and len(meld.cards) >= rules.set_max:
        raise IllegalActionError(Reason.LAYOFF_DOES_NOT_FIT, "that set is full")
    if c.is_joker:
        if rules.max_jokers_per_meld is not None and meld.jokers >= rules.max_jokers_per_meld:
            raise IllegalActionError(Reason.LAYOFF_DOES_NOT_FIT, "that set holds its last joker")
    else:
        if c.rank != meld.rank:
            raise IllegalActionError(
                Reason.LAYOFF_DOES_NOT_FIT, f"{c.code} is not of the set's rank"
            )
        if rules.set_distinct_suits and any(x.suit == c.suit for x in meld.cards):
            raise IllegalActionError(Reason.LAYOFF_DOES_NOT_FIT, f"the set already has a {c.code}")
    return Meld(MeldKind.SET, tuple(sorted((*meld.cards, c))), meld.rank, NO_SUIT, meld.owner)


def _lay_off_on_run(meld: Meld, c: Card, rules: RuleSet, end: End | None) -> Meld:
    if len(meld.cards) >= 13:
        raise IllegalActionError(Reason.LAYOFF_DOES_NOT_FIT, "a run holds at most 13 cards")
    low_ok = meld.rank > 1
    high_ok = meld.high < rules.highest_run_rank
    if c.is_joker:
        if rules.max_jokers_per_meld is not None and meld.jokers >= rules.max_jokers_per_meld:
            raise IllegalActionError(Reason.LAYOFF_DOES_NOT_FIT, "that run holds its last joker")
        if end is None:
            end = End.HIGH if high_ok else End.LOW
        if (end is End.HIGH and not high_ok) or (end is End.LOW and not low_ok):
            raise IllegalActionError(
                Reason.LAYOFF_DOES_NOT_FIT, f"the run cannot grow at its {end} end"
            )
    else:
        if c.suit != meld.suit:
            raise IllegalActionError(
                Reason.LAYOFF_DOES_NOT_FIT, f"{c.code} is not of the run's suit"
            )
        fits_low = low_ok and _natural_rank(c, meld.rank - 1)
        fits_high = high_ok and _natural_rank(c, meld.high + 1)
        if not fits_low and not fits_high:
            for i, held in enumerate(meld.cards):
                if held.is_joker and _natural_rank(c, meld.rank + i):
                    raise IllegalActionError(
                        Reason.POSITION_HELD_BY_JOKER,
                        f"a joker holds the place of {c.code}; a natural never takes it",
                    )
            raise IllegalActionError(
                Reason.LAYOFF_DOES_NOT_FIT, f"{c.code} does not extend that run"
            )
        if end is None:
            end = End.LOW if fits_low else End.HIGH
        elif (end is End.LOW and not fits_low) or (end is End.HIGH and not fits_high):
            raise IllegalActionError(
                Reason.LAYOFF_DOES_NOT_FIT, f"{c.code} does not fit the {end} end"
            )
    if end is End.LOW:
        return Meld(MeldKind.RUN, (c, *meld.cards), meld.rank - 1, meld.suit, meld.owner)
    return Meld(MeldKind.RUN, (*meld.cards, c), meld.rank, meld.suit, meld.owner)


_SET: Final = MeldKind.SET  # (Python 3.11 reads ``Enum.MEMBER`` through a slow hook)


def layoff_ends(meld: Meld, c: Card, rules: RuleSet) -> tuple[End | None, ...]:
    """The ``end`` values with which ``c`` may be laid off on ``meld`` (empty: it does not
    fit), as ``legal_actions`` lists them: None where there is one way (a set, a natural
    that fits one end), each end by name for a joker on a run and for an ace that fits
    both ends.  The same answers as trying :func:`lay_off`, without raising: the hot path
    of every list of legal actions."""
    cards = meld.cards
    size = len(cards)
    if c.rank == JOKER_RANK:
        if not rules.layoff_jokers:
            return ()
        most = rules.max_jokers_per_meld
        if most is not None and sum(1 for x in cards if x.rank == JOKER_RANK) >= most:
            return ()
        if meld.kind is _SET:
            if rules.set_max is not None and size >= rules.set_max:
                return ()
            return _ONE_WAY
        if size >= 13:
            return ()
        if meld.rank > 1:
            if meld.rank + size - 1 < rules.highest_run_rank:
                return _BOTH_ENDS
            return _LOW_END
        if meld.rank + size - 1 < rules.highest_run_rank:
            return _HIGH_END
        return ()
    if meld.kind is _SET:
        if c.rank != meld.rank:
            return ()
        if rules.set_max is not None and size >= rules.set_max:
            return ()
        if rules.set_distinct_suits:
            suit = c.suit
            for x in cards:
                if x.suit == suit:
                    return ()
        return _ONE_WAY
    if c.suit != meld.suit or size >= 13:
        return ()
    low = meld.rank > 1 and c.rank == meld.rank - 1
    above = meld.rank + size
    high = above <= rules.highest_run_rank and (c.rank == above or (c.rank == 1 and above == 14))
    if low and high:
        return _BOTH_ENDS
    if low or high:
        return _ONE_WAY
    return ()


def is_full(meld: Meld, rules: RuleSet) -> bool:
    """Whether no card can ever be laid off on ``meld``: a set of ``set_max`` cards, or
    a run of 13 (ace to king, or two to a high ace: neither end can grow).  Whatever its
    jokers: a full run's joker may still be swapped out, but that shrinks no hand.  A set
    short of ``set_max`` is never full, even when every card that would fit it lies
    elsewhere (a joker would fit, and fullness is the table's, not the deck's)."""
    if meld.kind is MeldKind.SET:
        return rules.set_max is not None and len(meld.cards) >= rules.set_max
    return len(meld.cards) >= 13


_ONE_WAY: tuple[End | None, ...] = (None,)
_BOTH_ENDS: tuple[End | None, ...] = (End.LOW, End.HIGH)
_LOW_END: tuple[End | None, ...] = (End.LOW,)
_HIGH_END: tuple[End | None, ...] = (End.HIGH,)


def swap_joker(meld: Meld, natural: Card, rules: RuleSet) -> tuple[Meld, Card]:
    """Replace the run joker that stands for ``natural``'s rank and suit.

    Returns the new meld and the freed joker, or IllegalActionError.
    """
    if not rules.joker_swap:
        raise IllegalActionError(Reason.SWAP_NOT_ALLOWED, "this rule set has no joker swaps")
    if natural.is_joker:
        raise IllegalActionError(Reason.SWAP_DOES_NOT_MATCH, "a joker cannot replace a joker")
    if meld.kind is not MeldKind.RUN:
        raise IllegalActionError(Reason.SWAP_NOT_ALLOWED, "jokers in sets are never swapped")
    if natural.suit == meld.suit:
        for i, held in enumerate(meld.cards):
            if held.is_joker and _natural_rank(natural, meld.rank + i):
                cards = list(meld.cards)
                cards[i] = natural
                return Meld(MeldKind.RUN, tuple(cards), meld.rank, meld.suit, meld.owner), held
    raise IllegalActionError(
        Reason.SWAP_DOES_NOT_MATCH, f"no joker in that run stands for {natural.code}"
    )


# ---------------------------------------------------------------------- forms


def meld_json(m: Meld, index: int) -> dict[str, Any]:
    """A table meld as views and events show it (``index``: its place on the table)."""
    return {
        "index": index,
        "kind": m.kind.value,
        "rank": m.rank,
        "suit": SUITS[m.suit] if m.suit >= 0 else None,
        "owner": m.owner,
        "cards": cards_json(m.cards),
    }


def meld_codes_json(m: Meld) -> dict[str, Any]:
    """A meld as the solver's answers show it (``glintwick solve``): kind and card codes."""
    return {"kind": m.kind.value, "cards": [c.code for c in m.cards]}


def meld_to_dict(m: Meld) -> dict[str, Any]:
    """A table meld's stored form (card ids, lossless; see :func:`meld_from_dict`)."""
    return {
        "kind": m.kind.value,
        "cards": [c.id for c in m.cards],
        "rank": m.rank,
        "suit": m.suit,
        "owner": m.owner,
    }


_BY_ID = attrgetter("id")


def meld_from_dict(data: Any, rules: RuleSet, seats: int, what: str) -> Meld:
    """The table meld of a stored form, validated (InvalidActionError names it ``what``).

    A set must be stored in id order, a run in rank order as laid (its jokers' places
    are its history); ``suit`` is implied by the cards.
    """
    if not isinstance(data, Mapping):
        raise InvalidActionError(f"{what} must be an object")
    kind = MeldKind(data["kind"])
    ids = data["cards"]
    if not isinstance(ids, list | tuple) or not ids:
        raise InvalidActionError(f"{what} needs cards")
    cs = tuple(card(checked_int(i, "meld card", 0, rules.deck_size - 1), rules.decks) for i in ids)
    owner = checked_int(data["owner"], "owner", 0, seats - 1)
    rank = checked_int(data["rank"], "rank", 1, 14)
    if kind is MeldKind.SET:
        built = build_set(cs, rules)
        if built.rank != rank or built.cards != tuple(sorted(cs, key=_BY_ID)):
            raise InvalidActionError(f"{what} is not a valid set")
        return built.with_owner(owner)
    built = build_run(cs, rules, start=rank)
    for mine, theirs in zip(cs, built.cards, strict=True):
        if mine.is_joker != theirs.is_joker or (not mine.is_joker and mine is not theirs):
            raise InvalidActionError(f"{what} is not a valid run in this order")
    return Meld(MeldKind.RUN, cs, rank, built.suit, owner)
