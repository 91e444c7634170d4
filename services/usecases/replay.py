"""The replay of a finished game (with its seed); :func:`replay_events` re-runs one on
the engine (in :mod:`glintwick.convert`, which clients share)."""

from __future__ import annotations

from glintwick.convert import replay_events
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services.errors import precondition

from .context import Caller, Context
from .records import game_message


async def get_replay(ctx: Context, request: pb.GetReplayRequest, caller: Caller) -> pb.Replay:
    loaded = await ctx.load(request.game_id)
    if not loaded.state.is_terminal():
        raise precondition(
            "GAME_NOT_FINISHED", "the replay (with the seed) is published once the game is over"
        )
    replay = pb.Replay(
        game=game_message(loaded),
        seed=loaded.state.seed.hex(),
        scores=loaded.state.scores,
        winners=loaded.state.winners(),
        abandoned=loaded.state.abandoned,
        decks=[
            pb.DeckOrder(round=o.round, cards=o.cards) for o in loaded.record.state.stock_orders
        ],
    )
    after = 0
    while True:
        items = await ctx.store.read_log(request.game_id, after)
        if not items:
            break
        for item in items:
            entry = spb.LogEntry.FromString(item.entry)
            after = item.version
            if entry.abandoned:  # (the ending of no seat: no step; `abandoned` says it)
                continue
            replay.steps.append(
                pb.ReplayStep(
                    version=item.version,
                    seat=entry.seat,
                    action=entry.action,
                    by_deadline=entry.by_deadline,
                )
            )
    return replay


__all__ = ["get_replay", "replay_events"]
