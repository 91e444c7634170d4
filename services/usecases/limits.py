"""Every limit the server checks requests against, readable through GetLimits.

The numbers are not restated here: each is the constant the check itself uses (the
engine's rule-set bounds, the use cases' string lengths and pages, the server's
configured rate), imported from where it lives; the transport limits (an HTTP body,
a gRPC message) live here, and the HTTP and gRPC faces take them from here.
"""

from __future__ import annotations

from engine import rulesets
from engine.cards import MAX_DECKS, MAX_JOKERS, NATURALS_PER_DECK, RANK_CODES
from glintwick.v1 import game_pb2 as pb

from . import analysis, house_bots, lobby, moves
from .context import MAX_GAME_ID, Caller, Context

#: the largest HTTP request body read (a larger one is answered 413, BODY_TOO_LARGE)
MAX_HTTP_BODY_BYTES = 1 << 20
#: the largest gRPC request message (gRPC's own default, set explicitly so it is ours)
MAX_GRPC_MESSAGE_BYTES = 4 << 20

#: the length bounds (characters; None: no least) of request strings, by field, which
#: the OpenAPI document states (services/openapi.py); a path's game_id is 1..MAX_GAME_ID
STRING_LENGTHS: dict[str, tuple[int | None, int]] = {
    "glintwick.v1.RuleSet.name": (1, rulesets.MAX_NAME),
    "glintwick.v1.Contract.name": (None, rulesets.MAX_NAME),
    "glintwick.v1.JoinGameRequest.name": (None, lobby.MAX_PLAYER_NAME),
    "glintwick.v1.FillWithBotsRequest.strategy": (None, house_bots.MAX_STRATEGY),
    "glintwick.v1.SubmitActionRequest.request_id": (None, moves.MAX_REQUEST_ID),
    "glintwick.v1.JoinGameRequest.request_id": (None, moves.MAX_REQUEST_ID),
    "glintwick.v1.ListOpenGamesRequest.page_token": (None, lobby.MAX_PAGE_TOKEN),
}

_HIGHEST_RANK = len(RANK_CODES)  # a run ends at the king (at the ace with ace_high)


def limits(ctx: Context) -> pb.GetLimitsResponse:
    """The limits of this server (the rate is its configuration)."""
    return pb.GetLimitsResponse(
        decks=pb.Range(min=1, max=MAX_DECKS),
        jokers=pb.Range(min=0, max=MAX_JOKERS),
        seats=pb.Range(min=rulesets.MIN_SEATS, max=rulesets.MAX_SEATS),
        contracts=pb.Range(min=1, max=rulesets.MAX_ROUNDS),
        penalty=pb.Range(min=0, max=rulesets.MAX_PENALTY),
        set_min=pb.Range(min=rulesets.MIN_MELD, max=rulesets.MAX_MELD),
        run_min=pb.Range(min=rulesets.MIN_MELD, max=_HIGHEST_RANK),
        meld_cards=rulesets.MAX_MELD,
        claim_penalty_cards=pb.Range(min=0, max=rulesets.MAX_CLAIM_PENALTY_CARDS),
        max_exhaustions=pb.Range(min=1, max=rulesets.MAX_EXHAUSTIONS),
        turn_cap=pb.Range(min=1, max=rulesets.MAX_TURN_CAP),
        rule_set_name_length=pb.Range(min=1, max=rulesets.MAX_NAME),
        contract_name_length=rulesets.MAX_NAME,
        deck_cards=MAX_DECKS * NATURALS_PER_DECK + MAX_JOKERS,
        analyse_hand_cards=analysis.MAX_HAND,
        player_name_length=lobby.MAX_PLAYER_NAME,
        strategy_length=pb.Range(min=1, max=house_bots.MAX_STRATEGY),
        game_id_length=pb.Range(min=1, max=MAX_GAME_ID),
        seed_bytes=lobby.MAX_SEED_BYTES,
        request_id_length=moves.MAX_REQUEST_ID,
        bot_turns_max=house_bots.MAX_BOT_TURNS,
        bot_turns_default=house_bots.DEFAULT_BOT_TURNS,
        lease_seconds_max=house_bots.MAX_LEASE_SECONDS,
        lobby_page_max=lobby.MAX_LOBBY_PAGE,
        lobby_page_default=lobby.DEFAULT_LOBBY_PAGE,
        page_token_length=lobby.MAX_PAGE_TOKEN,
        rate_per_second=ctx.config.rate_per_second,
        rate_burst=ctx.config.rate_burst,
        http_body_bytes=MAX_HTTP_BODY_BYTES,
        grpc_message_bytes=MAX_GRPC_MESSAGE_BYTES,
    )


async def get_limits(
    ctx: Context, request: pb.GetLimitsRequest, caller: Caller
) -> pb.GetLimitsResponse:
    return limits(ctx)
