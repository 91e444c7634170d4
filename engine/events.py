"""Events: what happened, told to each viewer only as far as it may know.

Every accepted action yields a list of :class:`Event`.  An event has a public
payload that everyone (every seat and spectators) may see, and per-seat secret
payloads that only that seat may see: the card it drew from the stock, the hand
it was dealt, the penalty card a claim gave it.  ``Event.for_seat(viewer)``
merges the two for one viewer; ``viewer=None`` is a spectator (public only).

Payloads are plain (JSON-shaped): cards are rendered as ``{"id": int, "code": "7H"}``
and melds as ``{"index", "kind", "rank", "suit", "owner", "cards"}``
(:func:`engine.cards.card_json` and :func:`engine.melds.meld_json`, re-exported here).
The event types are listed in :class:`EventType`; each type's payload keys are the
fields of its message in the public API (``Event.payload``'s case of the type's name,
proto/glintwick/v1/game.proto), and docs/API.md's event table says what each means
and which are secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.cards import card_json, cards_json
from engine.errors import InvalidActionError
from engine.melds import meld_json
from engine.rulesets import Contract

__all__ = [
    "GAME_ENDINGS",
    "Event",
    "EventType",
    "card_json",
    "cards_json",
    "contract_json",
    "meld_json",
]


class EventType(StrEnum):
    """Event types (docs/API.md's event table: each one's payload and its seat).

    ``seat`` is the acting seat, except: none for ``round_started``, the stock's
    events, ``game_ended`` and ``game_abandoned``; the discarder for a claim window's
    opening and closing; the winner for ``claim_awarded``; who went out (or none) for
    ``round_ended``.
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


_NO_SECRET: Any = object()


@dataclass(slots=True, init=False, unsafe_hash=True)
class Event:
    type: str
    seat: int | None
    public: Mapping[str, Any]
    secret: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)

    def __init__(
        self,
        type: str,
        seat: int | None,
        public: Mapping[str, Any],
        secret: Mapping[int, Mapping[str, Any]] = _NO_SECRET,
    ) -> None:
        self.type = type
        self.seat = seat
        self.public = public
        self.secret = {} if secret is _NO_SECRET else secret

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle rebuild an event from its fields (engine.cards.field_values)
        return (type(self), (self.type, self.seat, self.public, self.secret))

    def for_seat(self, viewer: int | None) -> dict[str, Any]:
        """The event as ``viewer`` may see it (None: a spectator, public payload only)."""
        data: dict[str, Any] = {"type": str(self.type), "seat": self.seat}
        data.update(self.public)
        if viewer is not None:
            extra = self.secret.get(viewer)
            if extra:
                data.update(extra)
        return data

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


#: the event types that end a game (the last event of its last version)
GAME_ENDINGS: frozenset[str] = frozenset({EventType.GAME_ENDED, EventType.GAME_ABANDONED})


def contract_json(contract: Contract) -> dict[str, Any]:
    """A contract as events and views show it."""
    return {
        "name": contract.name,
        "melds": [{"kind": m.kind.value, "size": m.size} for m in contract.melds],
        "deal": contract.deal,
        "discards": contract.discards,
    }
