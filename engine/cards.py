"""Cards with physical identity.

Two decks mean two 7♥: each physical card has a stable integer id, so that the
engine, the API and every client can tell them apart.  The id layout is part of
the public contract (documented in docs/RULES.md):

* natural cards: ``deck * 52 + suit * 13 + (rank - 1)`` with suits C=0, D=1,
  H=2, S=3 and ranks A=1 … K=13;
* jokers come after every natural card: ``decks * 52 + joker_index``.

Cards are interned: ``card(i)`` always returns the same object for the same id,
so identity comparison, hashing and sorting are all cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from engine.errors import InvalidActionError, excerpt

SUITS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
RANK_CODES = "A23456789TJQK"  # index + 1 == rank
JOKER_CODE = "JK"
JOKER_RANK = 0
NO_SUIT = -1
NATURALS_PER_DECK = 52
MAX_DECKS = 4
MAX_JOKERS = 16


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One physical card.  Order is by id, which is the canonical card order."""

    id: int
    rank: int  # 1..13; 0 for a joker
    suit: int  # 0..3; -1 for a joker

    @property
    def is_joker(self) -> bool:
        return self.rank == JOKER_RANK

    @property
    def code(self) -> str:
        """Short human code: ``7H``, ``TD``, ``AS``, ``JK`` (ambiguous between twins)."""
        if self.rank == JOKER_RANK:
            return JOKER_CODE
        return _NATURAL_CODES[self.suit * 13 + self.rank - 1]

    @property
    def kind(self) -> tuple[int, int]:
        """(rank, suit): what twins from different decks have in common."""
        return (self.rank, self.suit)

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code}#{self.id})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), field_values(self))  # copy and pickle (engine/cards.py)


def field_values(value: Any) -> tuple[Any, ...]:
    """The values of a dataclass's ``__init__`` fields, in order: what its ``__reduce__``
    rebuilds it from for copy and pickle (compiled, a frozen class refuses the attribute
    writes they would make otherwise, and a class with a required ``__init__`` argument
    cannot be made empty first)."""
    return tuple([getattr(value, f.name) for f in fields(value) if f.init])


# the code of each natural kind, by kind index suit * 13 + rank - 1 (built once:
# responses write a code for every card they carry)
_NATURAL_CODES = tuple(
    RANK_CODES[rank - 1] + SUITS[suit] for suit in range(4) for rank in range(1, 14)
)


def kind_code(rank: int, suit: int) -> str:
    """The code of a kind (rank, suit): ``7H``, ``JK`` for (0, -1)."""
    if rank == JOKER_RANK:
        return JOKER_CODE
    return _NATURAL_CODES[suit * 13 + rank - 1]


def _build_table() -> tuple[Card, ...]:
    cards: list[Card] = []
    for deck in range(MAX_DECKS):
        for suit in range(4):
            for rank in range(1, 14):
                cards.append(Card(deck * NATURALS_PER_DECK + suit * 13 + rank - 1, rank, suit))
    return tuple(cards)


_NATURALS = _build_table()
_JOKER_CACHE: dict[int, Card] = {}


def card(card_id: int, decks: int = 2) -> Card:
    """The interned card with this id, for a game played with ``decks`` decks."""
    naturals = decks * NATURALS_PER_DECK
    if 0 <= card_id < naturals:
        return _NATURALS[card_id]
    if naturals <= card_id < naturals + MAX_JOKERS:
        found = _JOKER_CACHE.get(card_id)
        if found is None:
            found = _JOKER_CACHE[card_id] = Card(card_id, JOKER_RANK, NO_SUIT)
        return found
    raise InvalidActionError(f"no card has id {card_id}")


def full_deck(decks: int, jokers: int) -> tuple[Card, ...]:
    """Every physical card of a game, in id order."""
    return tuple(card(i, decks) for i in range(decks * NATURALS_PER_DECK + jokers))


# the canonical codes (what the engine itself writes): one dict look-up on the hot path
_KIND_OF_CODE: dict[str, tuple[int, int]] = {
    RANK_CODES[rank - 1] + SUITS[suit]: (rank, suit) for suit in range(4) for rank in range(1, 14)
} | {JOKER_CODE: (JOKER_RANK, NO_SUIT)}
# the same codes to a kind index: suit * 13 + rank - 1, and NATURALS_PER_DECK for a joker
_KIND_INDEX_OF_CODE: dict[str, int] = {
    code: (NATURALS_PER_DECK if rank == JOKER_RANK else suit * 13 + rank - 1)
    for code, (rank, suit) in _KIND_OF_CODE.items()
}


def parse_code(code: str) -> tuple[int, int]:
    """``"7h"`` → (7, 2).  Returns (0, -1) for a joker.  Case-insensitive; ``10`` means ``T``."""
    kind = _KIND_OF_CODE.get(code)
    if kind is not None:
        return kind
    text = code.strip().upper()
    if text in (JOKER_CODE, "JOKER", "*"):
        return (JOKER_RANK, NO_SUIT)
    if len(text) == 3 and text.startswith("10"):
        text = "T" + text[2]
    if len(text) != 2 or text[0] not in RANK_CODES or text[1] not in SUITS:
        raise InvalidActionError(f"not a card code: {excerpt(code)} (expected e.g. 7H, TD, AS, JK)")
    return (RANK_CODES.index(text[0]) + 1, SUITS.index(text[1]))


def cards_from_codes(codes: Iterable[str], decks: int = 2, jokers: int = 4) -> list[Card]:
    """Physical cards for a list of codes: the first 7H is deck 0's, the second deck 1's.

    Raises InvalidActionError when a code is malformed or more copies are asked for
    than the game holds.
    """
    # (on every AnalyseHand call: one dict look-up per canonical code, counts in a list)
    used = [0] * (NATURALS_PER_DECK + 1)  # per natural kind, then the jokers
    result: list[Card] = []
    for code in codes:
        kind = _KIND_INDEX_OF_CODE.get(code)
        if kind is None:
            rank, suit = parse_code(code)
            kind = NATURALS_PER_DECK if rank == JOKER_RANK else suit * 13 + rank - 1
        copy = used[kind]
        used[kind] = copy + 1
        if kind == NATURALS_PER_DECK:
            if copy >= jokers:
                raise InvalidActionError(f"more than {jokers} jokers")
            result.append(card(decks * NATURALS_PER_DECK + copy, decks))
        else:
            if copy >= decks:
                raise InvalidActionError(f"more than {decks} copies of {code}")
            result.append(_NATURALS[copy * NATURALS_PER_DECK + kind])
    return result


def codes(cards: Sequence[Card]) -> list[str]:
    return [c.code for c in cards]


def card_json(c: Card) -> dict[str, Any]:
    """A card as views and events show it: ``{"id": 7, "code": "8C"}``."""
    rank = c.rank  # (Card.code, without a property's call: every event carries cards)
    return {"id": c.id, "code": _NATURAL_CODES[c.suit * 13 + rank - 1] if rank else JOKER_CODE}


def cards_json(cards: Iterable[Card]) -> list[dict[str, Any]]:
    return [{"id": c.id, "code": c.code} for c in cards]
