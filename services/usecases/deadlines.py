"""Deadlines: the default action of a seat whose time ran out, applied by any replica.

(When a deadline passes is a rule of the record: :func:`.records.next_deadline`.)
"""

from __future__ import annotations

import structlog

from engine.actions import Action, Discard, Draw, DrawSource, EndTurn, PassClaim
from engine.cards import card as card_of
from engine.game import GameState, Phase
from services.errors import ServiceError

from .context import Context
from .moves import apply_move

log = structlog.get_logger("glintwick.api")

# default actions applied to one game in one sweep at most (a seat's turn is a few)
_ACTIONS_PER_GAME = 16


def default_action(state: GameState, seat: int) -> Action:
    """The documented safe move for a seat whose deadline passed.

    Claim window: pass.  Draw: from the stock (from the discard pile where the
    stock cannot be drawn).  Play: discard the highest-penalty card it may
    (ties: the lowest id); end the turn where there are no discards.
    """
    legal = state.legal_actions(seat)
    if state.phase is Phase.CLAIM:
        return PassClaim()
    draws = [a for a in legal if isinstance(a, Draw)]
    if draws:
        stock = [a for a in draws if a.source is DrawSource.STOCK]
        return stock[0] if stock else draws[0]
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        rules = state.rules
        return max(discards, key=lambda a: (rules.penalty(card_of(a.card, rules.decks)), -a.card))
    if any(isinstance(a, EndTurn) for a in legal):
        return EndTurn()
    return legal[0]


async def expire_deadlines(ctx: Context) -> int:
    """Apply default actions for every passed deadline; returns how many were applied.

    Any replica may run this at the same time as others: each default action is
    one compare-and-set, so exactly one replica's write lands.
    """
    applied = 0
    now = ctx.config.clock()
    for game_id in await ctx.store.due_deadlines(now):
        for _ in range(_ACTIONS_PER_GAME):
            try:
                loaded = await ctx.load(game_id)
            except ServiceError:
                break
            deadline = loaded.record.deadline_unix
            if not deadline or deadline > now or loaded.state.is_terminal():
                break
            seat = loaded.state.to_act[0]
            action = default_action(loaded.state, seat)
            response = await apply_move(ctx, loaded, seat, action, by_deadline=True)
            if response is None:
                break  # another replica got there first
            applied += 1
            log.info(
                "deadline_action",
                game_id=game_id,
                seat=seat,
                action=action.KIND,
                version=response.version,
            )
    return applied
