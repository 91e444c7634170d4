"""Events: what happened, told to each viewer only as far as it may know.

Every accepted action yields a list of :class:`Event`.  An event has a public
payload that everyone (every seat and spectators) may see, and per-seat secret
payloads that only that seat may see: the card it drew from the stock, the hand
it was dealt, the penalty card a claim gave it.  ``Event.for_seat(viewer)``
merges the two for one viewer; ``viewer=None`` is a spectator (public only).

Cards are rendered as ``{"id": int, "code": "7H"}`` and melds as
``{"index", "kind", "rank", "suit", "owner", "cards"}`` (:func:`engine.cards.card_json`
and :func:`engine.melds.meld_json`, re-exported here).  The event types are listed in
:class:`EventType`; each type's payload is a typed class below, of the same name, whose
fields are the payload's keys (:data:`PAYLOADS`; secret parts: :data:`SECRETS`):
``event.payload(decks)`` reads the public payload as one, and its ``to_dict()`` gives
the payload again.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar, Self, get_args, get_origin, get_type_hints

from engine.actions import DrawSource
from engine.cards import Card, card, card_json, cards_json
from engine.errors import InvalidActionError
from engine.melds import End, Meld, meld_from_json, meld_json
from engine.rulesets import Contract, MeldKind, MeldRequirement

__all__ = [
    "GAME_ENDINGS",
    "PAYLOADS",
    "SECRETS",
    "Event",
    "EventType",
    "Payload",
    "PlacedMeld",
    "card_json",
    "cards_json",
    "meld_json",
]


class EventType(StrEnum):
    """Event types.  Each one's payload is the class of the same name below
    (:data:`PAYLOADS`; the seat's secret part in :data:`SECRETS`).

    ``seat`` is the acting seat unless its payload class says otherwise.
    """

    ROUND_STARTED = "round_started"
    TURN_STARTED = "turn_started"
    DREW = "drew"
    STOCK_EXHAUSTED = "stock_exhausted"
    STOCK_RESHUFFLED = "stock_reshuffled"
    STOCK_NOT_RESHUFFLED = "stock_not_reshuffled"
    LAID_CONTRACT = "laid_contract"
    LAID_OFF = "laid_off"
    EXTRA_MELD = "extra_meld"
    JOKER_SWAPPED = "joker_swapped"
    DISCARDED = "discarded"
    CLAIM_WINDOW_OPENED = "claim_window_opened"
    CLAIM_ANSWERED = "claim_answered"
    CLAIM_AWARDED = "claim_awarded"
    CLAIM_WINDOW_CLOSED = "claim_window_closed"
    TURN_ENDED = "turn_ended"
    ROUND_ENDED = "round_ended"
    GAME_ENDED = "game_ended"
    GAME_ABANDONED = "game_abandoned"


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    seat: int | None
    public: Mapping[str, Any]
    secret: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)

    def for_seat(self, viewer: int | None) -> dict[str, Any]:
        """The event as ``viewer`` may see it (None: a spectator, public payload only)."""
        data: dict[str, Any] = {"type": str(self.type), "seat": self.seat}
        data.update(self.public)
        if viewer is not None:
            extra = self.secret.get(viewer)
            if extra:
                data.update(extra)
        return data

    def payload(self, decks: int) -> Payload:
        """The public payload, typed (``decks``: the rule set's, to name the cards)."""
        return PAYLOADS[EventType(self.type)].from_dict(self.public, decks)

    def secret_payload(self, seat: int, decks: int) -> Payload | None:
        """``seat``'s secret payload, typed (None: it has none in this event)."""
        data = self.secret.get(seat)
        if not data:
            return None
        return SECRETS[EventType(self.type)].from_dict(data, decks)

    def to_dict(self) -> dict[str, Any]:
        """The whole event, secrets included (for the store, never for a client)."""
        return {
            "type": str(self.type),
            "seat": self.seat,
            "public": dict(self.public),
            "secret": {str(k): dict(v) for k, v in sorted(self.secret.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        try:
            seat = data["seat"]
            if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)):
                raise TypeError("seat must be an integer or null")
            return cls(
                type=str(data["type"]),
                seat=seat,
                public=dict(data.get("public", {})),
                secret={int(k): dict(v) for k, v in dict(data.get("secret", {})).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidActionError(f"malformed event: {exc}") from exc


# ---------------------------------------------------------------------- payloads
#
# One frozen class per payload; its fields, in order, are the payload's keys.  How a
# field is written and read follows from its type alone (_codec), so a payload's key
# list is written once.  The engine's transitions still write the plain payloads (a
# move's events are on the hot path); tests/unit/test_views.py checks that every
# payload a game produces reads as its class and writes back unchanged.


@dataclass(frozen=True, slots=True)
class PlacedMeld:
    """A table meld and its place there (what LayOff and SwapJoker name)."""

    index: int
    meld: Meld


class Payload:
    """The base of the payload classes: the plain form is ``to_dict()``."""

    __slots__ = ()
    TYPE: ClassVar[EventType]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, (write, _, omit_none) in _codec(type(self)).items():
            value = getattr(self, name)
            if value is None and omit_none:
                continue
            data[name] = write(value)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], decks: int) -> Self:
        """The payload of a plain form; InvalidActionError when it is not one."""
        try:
            values = {
                name: None if data.get(name) is None and omit_none else read(data[name], decks)
                for name, (_, read, omit_none) in _codec(cls).items()
            }
            return cls(**values)
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidActionError(f"malformed {cls.__name__} payload: {exc}") from exc


#: the metadata of a field the plain form leaves out (rather than null) when it is None
ABSENT_WHEN_NONE: Mapping[str, bool] = {"omit_none": True}


@dataclass(frozen=True, slots=True)
class RoundStarted(Payload):
    """seat None.  ``commitment``: hex SHA-256 of the round seed (engine.shuffle);
    ``arranged``: the deck order was given, not shuffled."""

    TYPE = EventType.ROUND_STARTED
    round: int
    rounds: int
    contract: Contract
    first_seat: int
    commitment: str
    arranged: bool
    upcard: Card | None
    stock_size: int
    hand_size: int


@dataclass(frozen=True, slots=True)
class DealtHand(Payload):
    """ROUND_STARTED's secret, for each seat: its hand."""

    TYPE = EventType.ROUND_STARTED
    hand: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class TurnStarted(Payload):
    """Whenever a seat's turn begins (round start, after a turn, after a claim window)."""

    TYPE = EventType.TURN_STARTED
    round: int


@dataclass(frozen=True, slots=True)
class Drew(Payload):
    """``card``: only when drawn from the discard pile (from the stock it is secret)."""

    TYPE = EventType.DREW
    source: DrawSource
    stock_size: int
    discard_size: int
    card: Card | None = field(default=None, metadata=ABSENT_WHEN_NONE)


@dataclass(frozen=True, slots=True)
class DrewFromStock(Payload):
    """DREW's secret, for the drawer, from the stock: the card."""

    TYPE = EventType.DREW
    card: Card


@dataclass(frozen=True, slots=True)
class StockExhausted(Payload):
    """seat None.  ``count``: exhaustions so far this round; ``settles``: this one ends
    the round at the end of the current turn."""

    TYPE = EventType.STOCK_EXHAUSTED
    count: int
    settles: bool


@dataclass(frozen=True, slots=True)
class StockReshuffled(Payload):
    """seat None.  ``cards``: how many went into the new stock; ``epoch``: 1, 2, … this
    round."""

    TYPE = EventType.STOCK_RESHUFFLED
    cards: int
    epoch: int


@dataclass(frozen=True, slots=True)
class StockNotReshuffled(Payload):
    """seat None.  A reshuffle found nothing to shuffle (``cards`` 0): the stock stays
    empty."""

    TYPE = EventType.STOCK_NOT_RESHUFFLED
    cards: int


@dataclass(frozen=True, slots=True)
class LaidContract(Payload):
    """``melds``: with their new table places."""

    TYPE = EventType.LAID_CONTRACT
    automatic: bool
    melds: tuple[PlacedMeld, ...]


@dataclass(frozen=True, slots=True)
class LaidOff(Payload):
    """``meld``: the grown meld; ``end``: None for a set."""

    TYPE = EventType.LAID_OFF
    card: Card
    meld: PlacedMeld
    end: End | None


@dataclass(frozen=True, slots=True)
class ExtraMeld(Payload):
    TYPE = EventType.EXTRA_MELD
    meld: PlacedMeld


@dataclass(frozen=True, slots=True)
class JokerSwapped(Payload):
    """``card``: the natural put in; ``joker``: the joker taken to the hand; ``meld``:
    after the swap."""

    TYPE = EventType.JOKER_SWAPPED
    card: Card
    joker: Card
    meld: PlacedMeld


@dataclass(frozen=True, slots=True)
class Discarded(Payload):
    TYPE = EventType.DISCARDED
    card: Card
    discard_size: int


@dataclass(frozen=True, slots=True)
class ClaimWindowOpened(Payload):
    """seat: the discarder.  ``seats``: who may answer, in priority order."""

    TYPE = EventType.CLAIM_WINDOW_OPENED
    card: Card
    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClaimAnswered(Payload):
    """seat: the answering seat."""

    TYPE = EventType.CLAIM_ANSWERED
    claim: bool


@dataclass(frozen=True, slots=True)
class ClaimAwarded(Payload):
    """seat: the winner.  ``card``: the discard taken; ``penalty_cards``: how many."""

    TYPE = EventType.CLAIM_AWARDED
    card: Card
    penalty_cards: int


@dataclass(frozen=True, slots=True)
class PenaltyCards(Payload):
    """CLAIM_AWARDED's secret, for the winner: the cards taken from the stock."""

    TYPE = EventType.CLAIM_AWARDED
    penalty: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class ClaimWindowClosed(Payload):
    """seat: the discarder.  ``claimants``: seats, in priority order."""

    TYPE = EventType.CLAIM_WINDOW_CLOSED
    card: Card
    winner: int | None
    claimants: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TurnEnded(Payload):
    """``turns_completed``: this round, this turn included."""

    TYPE = EventType.TURN_ENDED
    turns_completed: int


@dataclass(frozen=True, slots=True)
class RoundEnded(Payload):
    """seat: the seat that went out, or None.  ``reason``: "went_out" | "exhaustions" |
    "turn_cap" | "dry"; ``penalties``: per seat, this round; ``scores``: cumulative;
    ``round_seed``: hex, reveals this round's shuffles (the commitment can be checked)."""

    TYPE = EventType.ROUND_ENDED
    round: int
    reason: str
    penalties: tuple[int, ...]
    scores: tuple[int, ...]
    round_seed: str


@dataclass(frozen=True, slots=True)
class GameEnded(Payload):
    """seat None.  ``seed``: hex, the game seed, revealed at the end."""

    TYPE = EventType.GAME_ENDED
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    seed: str


@dataclass(frozen=True, slots=True)
class GameAbandoned(Payload):
    """seat None: the game ended without a winner in ``round`` (nobody moved for the
    server's abandonment time: :meth:`engine.game.GameState.abandon`).  ``scores``:
    the completed rounds' (the round in play is not scored); ``seed``: hex, revealed."""

    TYPE = EventType.GAME_ABANDONED
    round: int
    scores: tuple[int, ...]
    seed: str


_PUBLIC_CLASSES: tuple[type[Payload], ...] = (
    RoundStarted,
    TurnStarted,
    Drew,
    StockExhausted,
    StockReshuffled,
    StockNotReshuffled,
    LaidContract,
    LaidOff,
    ExtraMeld,
    JokerSwapped,
    Discarded,
    ClaimWindowOpened,
    ClaimAnswered,
    ClaimAwarded,
    ClaimWindowClosed,
    TurnEnded,
    RoundEnded,
    GameEnded,
    GameAbandoned,
)
#: the event types that end a game (the last event of its last version)
GAME_ENDINGS: frozenset[str] = frozenset({EventType.GAME_ENDED, EventType.GAME_ABANDONED})
#: each event type's public payload class
PAYLOADS: Mapping[EventType, type[Payload]] = {c.TYPE: c for c in _PUBLIC_CLASSES}
#: the event types with a secret part, and its class
SECRETS: Mapping[EventType, type[Payload]] = {
    c.TYPE: c for c in (DealtHand, DrewFromStock, PenaltyCards)
}


# ------------------------------------------------------------ fields by their type

_Write = Callable[[Any], Any]
_Read = Callable[[Any, int], Any]


def _same(value: Any) -> Any:
    return value


def contract_json(contract: Contract) -> dict[str, Any]:
    """A contract as events and views show it."""
    return {
        "name": contract.name,
        "melds": [{"kind": m.kind.value, "size": m.size} for m in contract.melds],
        "deal": contract.deal,
        "discards": contract.discards,
    }


def _contract_from_json(data: Mapping[str, Any], decks: int) -> Contract:
    return Contract(
        str(data["name"]),
        tuple(MeldRequirement(MeldKind(m["kind"]), int(m["size"])) for m in data["melds"]),
        int(data["deal"]),
        bool(data["discards"]),
    )


_BY_TYPE: dict[Any, tuple[_Write, _Read]] = {
    int: (_same, lambda v, decks: int(v)),
    bool: (_same, lambda v, decks: bool(v)),
    str: (_same, lambda v, decks: str(v)),
    Card: (card_json, lambda v, decks: card(int(v["id"]), decks)),
    PlacedMeld: (
        lambda p: meld_json(p.meld, p.index),
        lambda v, decks: PlacedMeld(int(v["index"]), meld_from_json(v, decks)),
    ),
    Contract: (contract_json, _contract_from_json),
    DrawSource: (lambda v: v.value, lambda v, decks: DrawSource(v)),
    End: (lambda v: v.value, lambda v, decks: End(v)),
}


def _field_codec(hint: Any) -> tuple[_Write, _Read]:
    """How a field of type ``hint`` is written to the plain form and read back."""
    if hint in _BY_TYPE:
        return _BY_TYPE[hint]
    args = get_args(hint)
    if get_origin(hint) is tuple:
        write, read = _field_codec(args[0])
        return (
            lambda vs: [write(v) for v in vs],
            lambda vs, decks: tuple(read(v, decks) for v in vs),
        )
    if get_origin(hint) is types.UnionType and len(args) == 2 and type(None) in args:
        write, read = _field_codec(next(a for a in args if a is not type(None)))
        return (
            lambda v: None if v is None else write(v),
            lambda v, decks: None if v is None else read(v, decks),
        )
    raise TypeError(f"no plain form for a payload field of type {hint!r}")


_CODECS: dict[type[Payload], dict[str, tuple[_Write, _Read, bool]]] = {}


def _codec(cls: type[Payload]) -> dict[str, tuple[_Write, _Read, bool]]:
    """Per field, in order: how it is written and read, and whether None is left out."""
    codec = _CODECS.get(cls)
    if codec is None:
        hints = get_type_hints(cls)
        codec = {
            f.name: (*_field_codec(hints[f.name]), bool(f.metadata.get("omit_none")))
            for f in fields(cls)  # type: ignore[arg-type]
        }
        _CODECS[cls] = codec
    return codec
