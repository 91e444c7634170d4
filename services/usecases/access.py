"""Who may act or see for which seat: seat tokens and the operator credentials."""

from __future__ import annotations

import functools
import hmac

from glintwick.v1 import game_pb2 as pb
from services.errors import denied, invalid, unauthenticated

from .context import Caller, ServiceConfig
from .records import Loaded, token_hash

#: the token of a caller whose ``authorization`` header is not ``Bearer <token>``: it
#: never matches (a real token has no spaces), and every call that reads the
#: token refuses it, so a typo never silently makes the caller a spectator
MALFORMED_AUTHORIZATION = " malformed authorization"


def bearer_token(header: str) -> str | None:
    """The token of an ``authorization`` header (None: no header), the same on gRPC and HTTP."""
    if not header.strip():
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return MALFORMED_AUTHORIZATION
    return token.strip()


def caller_token(caller: Caller) -> str | None:
    """The caller's token; UNAUTHENTICATED when its header was malformed."""
    if caller.token == MALFORMED_AUTHORIZATION:
        raise unauthenticated("the authorization header must read 'Bearer <token>'")
    return caller.token


def seat_of(loaded: Loaded, caller: Caller, required: bool) -> int | None:
    """The seat whose token the caller brings (None: a spectator, when allowed)."""
    token = caller_token(caller)
    if token is None:
        if required:
            raise unauthenticated("this call needs a seat token (authorization: Bearer …)")
        return None
    digest = _token_digest(token)
    for seat, joined in enumerate(loaded.seated().token_hashes):
        if joined is not None and hmac.compare_digest(joined, digest):
            return seat
    raise unauthenticated("the token does not belong to a seat of this game")


#: a token's hash, by token, for the tokens of the last moves: a session's every act
#: brings the same token, and a SHA-256 a move was about 1 % of the server's samples
#: on a Play stream (BENCHMARKS.md)
_token_digest = functools.lru_cache(maxsize=4096)(token_hash)


def is_operator(config: ServiceConfig, token: str, *, bots: bool) -> bool:
    """The operator credential (or, for the house-bot calls, the bot pool's)."""
    accepted = [config.operator_token]
    if bots:
        accepted.append(config.bot_pool_token)
    return any(a and hmac.compare_digest(token.encode(), a.encode()) for a in accepted)


def require_operator(config: ServiceConfig, caller: Caller, what: str) -> None:
    """The house-bot calls: the operator's or the bot pool's credential."""
    if not (config.operator_token or config.bot_pool_token):
        raise denied(
            f"{what} is disabled on this server (no operator credential)", "OPERATOR_DISABLED"
        )
    token = caller_token(caller)
    if token is None or not is_operator(config, token, bots=True):
        raise unauthenticated(f"{what} needs the operator credential")


def require_deck_operator(config: ServiceConfig, caller: Caller) -> None:
    """Explicit decks: the operator credential only (never the bot pool's)."""
    operator = config.operator_token
    if not operator:
        raise denied(
            "explicit decks are disabled on this server (no operator credential)",
            "OPERATOR_DISABLED",
        )
    token = caller_token(caller)
    if token is None or not hmac.compare_digest(token.encode(), operator.encode()):
        raise unauthenticated("explicit decks need the operator credential")


def acting_seat(
    config: ServiceConfig, loaded: Loaded, caller: Caller, requested: int | None, required: bool
) -> int | None:
    """The seat a request acts or sees for.

    Without ``requested``: the token's seat (None for a spectator).  With it: the
    operator credential may name a house-bot seat (never a human's), a seat token
    only its own seat.
    """
    if requested is None:
        return seat_of(loaded, caller, required)
    seats = loaded.record.seats
    if requested >= len(seats):
        raise invalid(f"no seat {requested} in a game of {len(seats)}", "NO_SUCH_SEAT")
    token = caller_token(caller)
    if token is None:
        raise unauthenticated("naming a seat needs its token or the operator credential")
    if is_operator(config, token, bots=True):
        if not seats[requested].bot:
            raise denied(
                f"seat {requested} is not a house bot: the operator acts for house bots only",
                "NOT_A_HOUSE_BOT",
            )
        return requested
    own = seat_of(loaded, caller, required=True)
    if own != requested:
        raise denied(f"this token is seat {own}'s, not seat {requested}'s", "NOT_YOUR_SEAT")
    return requested


def requested_seat(
    request: pb.GetViewRequest
    | pb.ListLegalActionsRequest
    | pb.SubmitActionRequest
    | pb.ValidateActionRequest
    | pb.PlayAct,
) -> int | None:
    return request.seat if request.HasField("seat") else None
