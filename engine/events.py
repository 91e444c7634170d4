"""Events: what happened, told to each viewer only as far as it may know.

Every accepted action yields a list of :class:`Event`.  An event has a public
payload that everyone (every seat and spectators) may see, and per-seat secret
payloads that only that seat may see: the card it drew from the stock, the hand
it was dealt, the penalty card a claim gave it.  ``Event.for_seat(viewer)``
merges the two for one viewer; ``viewer=None`` is a spectator (public only).

Cards are rendered as ``{"id": int, "code": "7H"}`` and melds as
``{"index", "kind", "rank", "suit", "owner", "cards"}`` (:func:`engine.cards.card_json`
and :func:`engine.melds.meld_json`, re-exported here).  The event types and their
payloads are listed in :class:`EventType`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.cards import card_json, cards_json
from engine.errors import InvalidActionError
from engine.melds import meld_json

__all__ = ["Event", "EventType", "card_json", "cards_json", "meld_json"]


class EventType(StrEnum):
    """Event types, with their public payload (secret payloads in brackets).

    ``seat`` is the acting seat unless said otherwise.
    """

    #: seat None. round, rounds, contract {name, melds [{kind, size}], deal, discards},
    #: first_seat, commitment (hex SHA-256 of the round seed, see engine.shuffle),
    #: arranged (true when the deck order was given explicitly, not shuffled),
    #: upcard (card | None), stock_size, hand_size.  [each seat: hand (its cards)]
    ROUND_STARTED = "round_started"
    #: round.  Emitted whenever a seat's turn begins (round start, after a turn, after a
    #: claim window).
    TURN_STARTED = "turn_started"
    #: source ("stock" | "discard"), card (only when from the discard pile), stock_size,
    #: discard_size.  [the drawer, from the stock: card]
    DREW = "drew"
    #: seat None. count (exhaustions so far this round), settles (true when this one
    #: ends the round at the end of the current turn).
    STOCK_EXHAUSTED = "stock_exhausted"
    #: seat None. cards (how many went into the new stock), epoch (1, 2, … this round).
    STOCK_RESHUFFLED = "stock_reshuffled"
    #: seat None. A reshuffle found nothing to shuffle: the stock stays empty.
    STOCK_NOT_RESHUFFLED = "stock_not_reshuffled"
    #: automatic (bool), melds (list of melds, with their new table indices).
    LAID_CONTRACT = "laid_contract"
    #: card, meld (the grown meld), end ("low" | "high" | None for a set).
    LAID_OFF = "laid_off"
    #: meld (the new meld).
    EXTRA_MELD = "extra_meld"
    #: card (the natural put in), joker (the joker taken to the hand), meld (after).
    JOKER_SWAPPED = "joker_swapped"
    #: card, discard_size.
    DISCARDED = "discarded"
    #: seat = the discarder.  card, seats (who may answer, in priority order).
    CLAIM_WINDOW_OPENED = "claim_window_opened"
    #: seat = the answering seat.  claim (bool).
    CLAIM_ANSWERED = "claim_answered"
    #: seat = the winner.  card (the discard taken), penalty_cards (how many).
    #: [the winner: penalty (the cards taken from the stock)]
    CLAIM_AWARDED = "claim_awarded"
    #: seat = the discarder.  card, winner (seat | None), claimants (seats, priority order).
    CLAIM_WINDOW_CLOSED = "claim_window_closed"
    #: turns_completed (this round, including this turn).
    TURN_ENDED = "turn_ended"
    #: seat = the seat that went out, or None.  round, reason ("went_out" | "exhaustions"
    #: | "turn_cap" | "dry"), penalties (per seat, this round), scores (cumulative),
    #: round_seed (hex: reveals this round's shuffles so the commitment can be checked).
    ROUND_ENDED = "round_ended"
    #: seat None. scores, winners (seats), seed (hex: the game seed, revealed at the end).
    GAME_ENDED = "game_ended"


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
