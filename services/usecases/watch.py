"""Watching a game: a snapshot, then every event from the log as the viewer may see it."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import invalid

from .access import seat_of
from .context import Caller, Context
from .views import view_of


async def watch_game(
    ctx: Context, request: pb.WatchGameRequest, caller: Caller
) -> AsyncGenerator[pb.WatchGameResponse, None]:
    loaded = await ctx.load(request.game_id)
    seat = seat_of(loaded, caller, required=False)
    after = request.from_version
    if after > loaded.version:
        raise invalid(f"from_version {after} is ahead of the game (version {loaded.version})")
    if after == 0:
        yield pb.WatchGameResponse(snapshot=view_of(loaded, seat))
        after = loaded.version
    # a finished game's log ends with its last version: stop once that is sent
    last = loaded.version if loaded.state.is_terminal() else None
    while True:
        if last is not None and after >= last:
            return
        items = await ctx.store.wait_log(request.game_id, after, ctx.config.watch_poll_seconds)
        for item in items:
            entry = spb.LogEntry.FromString(item.entry)
            for stored in entry.events:
                yield pb.WatchGameResponse(
                    event=codec.stored_event_to_pb(stored, seat, item.version)
                )
            after = item.version
            if any(e.type == "game_ended" for e in entry.events):
                last = item.version
        if last is not None and not items:
            return
        if not items:
            snapshot = await ctx.store.load(request.game_id)
            if snapshot is None:
                return
