"""House bots: the names a game may seat, and the listing of their turns for the bot pool.

The service never plays a bot: a bot pool (in process or ``glintwick bots`` workers)
lists the turns with the operator's or the bot pool's credential and submits each
move through the API like any client.
"""

from __future__ import annotations

import asyncio

from engine.errors import excerpt
from glintwick.v1 import game_pb2 as pb
from services.errors import invalid

from .access import require_operator
from .context import Caller, Context, ServiceConfig
from .records import bot_seat

MAX_STRATEGY = 64
MAX_BOT_TURNS = 1000
MAX_LEASE_SECONDS = 300
DEFAULT_BOT_TURNS = 100  # ListBotTurns limit 0


def check_strategy(config: ServiceConfig, strategy: str) -> None:
    """Refuse a house-bot name this server's bot pool does not play."""
    known = config.house_bots
    if not strategy or len(strategy) > MAX_STRATEGY:
        raise invalid(f"a house bot's strategy is a bot name of 1..{MAX_STRATEGY} characters")
    if known is not None and strategy not in known:
        raise invalid(
            f"unknown bot {excerpt(strategy)}; known: {', '.join(sorted(known))}", "UNKNOWN_BOT"
        )


async def list_bot_turns(
    ctx: Context, request: pb.ListBotTurnsRequest, caller: Caller
) -> pb.ListBotTurnsResponse:
    require_operator(ctx.config, caller, "listing house-bot turns")
    limit = min(request.limit or DEFAULT_BOT_TURNS, MAX_BOT_TURNS)
    lease = min(request.lease_seconds, MAX_LEASE_SECONDS)
    ids = await ctx.store.bot_turns(limit, float(lease))
    found = await asyncio.gather(*(ctx.load_if_any(i) for i in ids))
    response = pb.ListBotTurnsResponse()
    for loaded in found:
        seat = None if loaded is None else bot_seat(loaded.record, loaded.state)
        if loaded is None or seat is None:
            continue  # gone, or moved on since the index was read
        response.turns.append(
            pb.BotTurn(
                game_id=loaded.record.game_id,
                seat=seat,
                strategy=loaded.record.seats[seat].bot,
                version=loaded.version,
            )
        )
    return response
