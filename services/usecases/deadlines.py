"""Deadlines: the default action of a seat whose time ran out, and the end of a
game nobody plays any more, applied by any replica.

(When a deadline passes is a rule of the record: :func:`.records.next_deadline`;
when an idle game ends, :func:`.records.idle_deadline`.  Both share the store's one
deadline index, at the earlier of the two: :func:`.records.indexed_deadline`.)
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from engine.actions import Action, Discard, Draw, DrawSource, EndTurn, PassClaim
from engine.cards import card as card_of
from engine.game import GameState, Phase
from glintwick.storage.v1 import storage_pb2 as spb
from services import codec
from services.errors import ServiceError
from services.store.base import LogItem

from .context import Context
from .moves import apply_move
from .records import Loaded, store_write

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


@dataclass(frozen=True, slots=True)
class Swept:
    """What one sweep applied: default actions, and games ended as abandoned."""

    actions: int = 0
    abandoned: int = 0


async def expire_deadlines(ctx: Context) -> Swept:
    """Apply default actions for every passed deadline, and end every game idle past
    its idle deadline as abandoned.

    Any replica may run this at the same time as others: each write is one
    compare-and-set, so exactly one replica's write lands.  Every due game is
    checked against its record, whose idle deadline (no move since) comes first.
    """
    applied = abandoned = 0
    now = ctx.config.clock()
    for game_id in await ctx.store.due_deadlines(now):
        for _ in range(_ACTIONS_PER_GAME):
            try:
                loaded = await ctx.load(game_id)
            except ServiceError:
                break
            if loaded.state.is_terminal():
                break
            idle = loaded.record.idle_deadline_unix
            if idle and idle <= now:
                if await abandon(ctx, loaded, now):
                    abandoned += 1
                break
            deadline = loaded.record.deadline_unix
            if not deadline or deadline > now:
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
    return Swept(applied, abandoned)


async def abandon(ctx: Context, loaded: Loaded, now: float) -> bool:
    """End the game as abandoned (``GameState.abandon``): one more version, logged
    with its game_abandoned event, written like a finished game's last move (out of
    every index, expiring).  False when another writer changed the game first."""
    state, events = loaded.state.abandon()
    record = spb.StoredGame()
    record.CopyFrom(loaded.record)
    codec.update_state_pb(record.state, loaded.state, state)
    record.deadline_unix = 0.0
    entry = spb.LogEntry(version=state.action_count, abandoned=True)
    for event in events:
        codec.fill_stored_event(entry.events.add(), event)
    write = store_write(
        loaded,
        record,
        state,
        idle=ctx.config.idle,
        now=now,
        entry=LogItem(state.action_count, entry.SerializeToString()),
    )
    if not await ctx.store.commit(record.game_id, loaded.revision, write):
        return False
    ctx.committed(loaded, record, state)
    log.info(
        "game_abandoned",
        game_id=record.game_id,
        version=state.action_count,
        late_seconds=round(now - loaded.record.idle_deadline_unix, 3),
    )
    return True
