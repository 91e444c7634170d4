"""The typed actions a seat can take.

Cards are named by physical id, melds on the table by their index.  Actions are
plain immutable values with a lossless dict form (``to_dict``/``action_from_dict``)
that the service and the replay log use.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from engine.errors import InvalidActionError
from engine.melds import End
from engine.rulesets import MeldKind


class DrawSource(StrEnum):
    STOCK = "stock"
    DISCARD = "discard"


@dataclass(frozen=True, slots=True)
class MeldSpec:
    """A meld a player names: its kind, its cards and (runs, optional) its start rank."""

    kind: MeldKind
    cards: tuple[int, ...]
    start: int | None = None


@dataclass(frozen=True, slots=True)
class Draw:
    KIND: ClassVar[str] = "draw"
    source: DrawSource = DrawSource.STOCK


@dataclass(frozen=True, slots=True)
class LayContract:
    """Lay the whole contract.  ``melds=None`` lets the engine choose (the solver)."""

    KIND: ClassVar[str] = "lay_contract"
    melds: tuple[MeldSpec, ...] | None = None


@dataclass(frozen=True, slots=True)
class LayOff:
    KIND: ClassVar[str] = "lay_off"
    card: int
    meld: int
    end: End | None = None


@dataclass(frozen=True, slots=True)
class ExtraMeld:
    KIND: ClassVar[str] = "extra_meld"
    meld: MeldSpec


@dataclass(frozen=True, slots=True)
class SwapJoker:
    KIND: ClassVar[str] = "swap_joker"
    card: int
    meld: int


@dataclass(frozen=True, slots=True)
class Discard:
    KIND: ClassVar[str] = "discard"
    card: int


@dataclass(frozen=True, slots=True)
class EndTurn:
    KIND: ClassVar[str] = "end_turn"


@dataclass(frozen=True, slots=True)
class Claim:
    """May I?: claim the card just discarded."""

    KIND: ClassVar[str] = "claim"


@dataclass(frozen=True, slots=True)
class PassClaim:
    """May I?: let the card just discarded go."""

    KIND: ClassVar[str] = "pass_claim"


Action = Draw | LayContract | LayOff | ExtraMeld | SwapJoker | Discard | EndTurn | Claim | PassClaim

ACTION_TYPES: dict[str, type[Action]] = {
    t.KIND: t
    for t in (Draw, LayContract, LayOff, ExtraMeld, SwapJoker, Discard, EndTurn, Claim, PassClaim)
}


def _spec_to_dict(spec: MeldSpec) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": spec.kind.value, "cards": list(spec.cards)}
    if spec.start is not None:
        data["start"] = spec.start
    return data


def _spec_from_dict(data: Any) -> MeldSpec:
    if not isinstance(data, dict):
        raise InvalidActionError("a meld must be an object with kind and cards")
    try:
        kind = MeldKind(data["kind"])
        cards = tuple(_card_id(c) for c in data["cards"])
        start = data.get("start")
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidActionError(f"malformed meld: {exc}") from exc
    if not cards:
        raise InvalidActionError("a meld needs cards")
    if len(set(cards)) != len(cards):
        raise InvalidActionError("a meld names the same card twice")
    if start is not None and (not isinstance(start, int) or not 1 <= start <= 14):
        raise InvalidActionError("a run's start must be a rank 1..14")
    return MeldSpec(kind, cards, start)


def _card_id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidActionError(f"a card is named by its non-negative integer id, not {value!r}")
    return value


def action_to_dict(action: Action) -> dict[str, Any]:
    data: dict[str, Any] = {"type": action.KIND}
    match action:
        case Draw(source=source):
            data["source"] = source.value
        case LayContract(melds=melds):
            if melds is not None:
                data["melds"] = [_spec_to_dict(m) for m in melds]
        case LayOff(card=c, meld=m, end=end):
            data.update(card=c, meld=m)
            if end is not None:
                data["end"] = end.value
        case ExtraMeld(meld=spec):
            data["meld"] = _spec_to_dict(spec)
        case SwapJoker(card=c, meld=m):
            data.update(card=c, meld=m)
        case Discard(card=c):
            data["card"] = c
        case EndTurn() | Claim() | PassClaim():
            pass
    return data


def action_from_dict(data: Any) -> Action:
    """Parse the plain form; anything malformed raises InvalidActionError."""
    if not isinstance(data, dict) or "type" not in data:
        raise InvalidActionError("an action is an object with a 'type'")
    kind = data["type"]
    try:
        if kind == Draw.KIND:
            return Draw(DrawSource(data.get("source", "stock")))
        if kind == LayContract.KIND:
            melds = data.get("melds")
            if melds is None:
                return LayContract()
            if not isinstance(melds, list) or not melds:
                raise InvalidActionError("melds must be a non-empty list")
            return LayContract(tuple(_spec_from_dict(m) for m in melds))
        if kind == LayOff.KIND:
            end = data.get("end")
            return LayOff(_card_id(data["card"]), _card_id(data["meld"]), End(end) if end else None)
        if kind == ExtraMeld.KIND:
            return ExtraMeld(_spec_from_dict(data["meld"]))
        if kind == SwapJoker.KIND:
            return SwapJoker(_card_id(data["card"]), _card_id(data["meld"]))
        if kind == Discard.KIND:
            return Discard(_card_id(data["card"]))
        if kind == EndTurn.KIND:
            return EndTurn()
        if kind == Claim.KIND:
            return Claim()
        if kind == PassClaim.KIND:
            return PassClaim()
    except (KeyError, ValueError, TypeError) as exc:
        if isinstance(exc, InvalidActionError):
            raise
        raise InvalidActionError(f"malformed {kind} action: {exc}") from exc
    raise InvalidActionError(f"unknown action type {kind!r}; known: {', '.join(ACTION_TYPES)}")
