"""The solver's answers: Selection (the melds a hand lays) and Analysis."""

from __future__ import annotations

from typing import Final

from engine.melds import Meld


class Selection:
    """The melds a hand lays for its contract, best first by the solver's order.

    A value, compared and hashed by its fields, and read-only: its attributes are
    final (type checkers refuse an assignment; the compiled class raises
    AttributeError).  A plain class rather than a frozen dataclass: compiled
    (setup.py), it is a native class built in a tenth of the time the
    dataclass's generated __init__ takes, which the compiled module would still
    run interpreted.
    """

    __slots__ = ("jokers", "melds", "points")

    def __init__(self, melds: tuple[Meld, ...], points: int, jokers: int) -> None:
        self.melds: Final = melds  # one per contract requirement, in the contract's order
        self.points: Final = points  # penalty points laid
        self.jokers: Final = jokers  # jokers used

    def _fields(self) -> tuple[tuple[Meld, ...], int, int]:
        return (self.melds, self.points, self.jokers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selection) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Selection(melds={self.melds!r}, points={self.points!r}, jokers={self.jokers!r})"


class Analysis:
    """Everything ``analyse`` says of a hand: a read-only value like Selection."""

    __slots__ = ("best", "feasible", "missing", "outs")

    def __init__(
        self,
        feasible: bool,
        best: Selection | None,
        missing: int | None,
        outs: tuple[tuple[int, int], ...],
    ) -> None:
        self.feasible: Final = feasible
        self.best: Final = best
        # fewest extra cards (from the rest of the deck) that make the contract
        # layable; 0 when it already is, None when more than the asked limit
        self.missing: Final = missing
        # (rank, suit) kinds, (0, -1) for a joker, one of which lowers ``missing``
        self.outs: Final = outs

    def _fields(
        self,
    ) -> tuple[bool, Selection | None, int | None, tuple[tuple[int, int], ...]]:
        return (self.feasible, self.best, self.missing, self.outs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Analysis) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Analysis(feasible={self.feasible!r}, best={self.best!r}, "
            f"missing={self.missing!r}, outs={self.outs!r})"
        )
