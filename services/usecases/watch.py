"""Watching a game: a snapshot, then every event from the log as the viewer may see it.

A watch starts at a position (:mod:`.streams`: ``from_version`` or ``after_cursor``)
and sends every event after it, in order, exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from engine.events import GAME_ENDINGS
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.store.base import LogItem

from .access import seat_of
from .context import Caller, Context
from .leases import HeldStream
from .quotas import hold_stream
from .records import Loaded
from .streams import StreamStart, deal_events, shutting_down, stream_start
from .views import view_of


async def watch_game(
    ctx: Context, request: pb.WatchGameRequest, caller: Caller
) -> AsyncIterator[pb.WatchGameResponse]:
    """The watch's stream, once the request is checked: every refusal is raised here,
    before anything is sent (the HTTP face answers it as an error, and sends a good
    stream's headers at once, before its first event)."""
    loaded = await ctx.load(request.game_id)
    seat = seat_of(loaded, caller, required=False)
    start = await stream_start(ctx, request, loaded)
    # (the game's watchers and the client's streams: a lease while the stream is open)
    hold = await hold_stream(ctx, "watch", request.game_id, caller)
    return HeldStream(_stream(ctx, loaded, seat, start), hold)


async def _stream(
    ctx: Context, loaded: Loaded, seat: int | None, start: StreamStart
) -> AsyncIterator[pb.WatchGameResponse]:
    game_id = loaded.record.game_id
    if start.snapshot:
        yield pb.WatchGameResponse(snapshot=view_of(loaded, seat))
    version, skip = start.version, start.skip
    if version == 0:
        for event in deal_events(loaded.state, seat)[skip:]:
            yield pb.WatchGameResponse(event=event)
        version, skip = 1, 0
    # a finished game's log ends with its last version: stop once that is sent
    last = loaded.version if loaded.state.is_terminal() else None
    while last is None or version <= last:
        items = await _wait_log(ctx, game_id, version - 1)
        for item in items:
            entry = spb.LogEntry.FromString(item.entry)
            first = skip if item.version == version else 0
            for index in range(first, len(entry.events)):
                event = codec.stored_event_to_pb(entry.events[index], seat, item.version)
                yield pb.WatchGameResponse(event=convert.place_event(event, index))
            version, skip = item.version + 1, 0
            if any(e.type in GAME_ENDINGS for e in entry.events):
                last = item.version
        if not items and (last is not None or await ctx.store.load(game_id) is None):
            return  # finished, or expired from the store


async def _wait_log(
    ctx: Context, game_id: str, after_version: int, timeout: float | None = None
) -> list[LogItem]:
    """The store's entries after ``after_version`` (waiting a while for one: ``timeout``
    seconds, else the configured poll), unless the server stops first: then the watch
    ends with :func:`shutting_down`."""
    if ctx.stopping.is_set():
        raise shutting_down()
    wait = ctx.config.watch_poll_seconds if timeout is None else timeout
    waiting = asyncio.ensure_future(ctx.store.wait_log(game_id, after_version, wait))
    stopping = asyncio.ensure_future(ctx.stopping.wait())
    try:
        await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (waiting, stopping):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if not waiting.done() or waiting.cancelled():
        raise shutting_down()
    return waiting.result()
