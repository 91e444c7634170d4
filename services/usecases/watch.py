"""Watching a game: a snapshot, then every event from the log as the viewer may see it.

Every event has a position, ``(version, index)``: the version of the action that
produced it and its place among that action's events (version 0 is round 1's deal,
which the game's creation stores no log entry for: it is dealt again from the seed).
A watch starts at a position and sends every event after it, in order, exactly once;
a client that resumes after the cursor of the last event it received misses nothing
and sees nothing twice, even when its stream was cut in the middle of a version.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc

from engine.events import GAME_ENDINGS
from engine.game import GameState
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import ServiceError, invalid
from services.store.base import LogItem

from .access import seat_of
from .context import Caller, Context
from .quotas import HeldStream, hold_stream
from .records import Loaded
from .views import view_of


@dataclass(frozen=True, slots=True)
class _Start:
    """Where a watch begins: a snapshot or not, then the events of ``version`` on,
    less the first ``skip`` of that version (already received)."""

    snapshot: bool
    version: int
    skip: int = 0


def shutting_down() -> ServiceError:
    """What an open watch ends with when its server stops: UNAVAILABLE, the code
    clients reconnect on (another replica, or this one restarted, resumes the watch)."""
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        "SHUTTING_DOWN",
        "the server is shutting down: reconnect, after the last cursor received",
    )


async def watch_game(
    ctx: Context, request: pb.WatchGameRequest, caller: Caller
) -> AsyncIterator[pb.WatchGameResponse]:
    """The watch's stream, once the request is checked: every refusal is raised here,
    before anything is sent (the HTTP face answers it as an error, and sends a good
    stream's headers at once, before its first event)."""
    loaded = await ctx.load(request.game_id)
    seat = seat_of(loaded, caller, required=False)
    start = await _start(ctx, request, loaded)
    # (the game's watchers and the client's streams: a lease while the stream is open)
    hold = await hold_stream(ctx, "watch", request.game_id, caller)
    return HeldStream(_stream(ctx, loaded, seat, start), hold)


async def _start(ctx: Context, request: pb.WatchGameRequest, loaded: Loaded) -> _Start:
    if not request.after_cursor:
        after = request.from_version
        if after > loaded.version:
            raise invalid(f"from_version {after} is ahead of the game (version {loaded.version})")
        if after > 0:
            return _Start(snapshot=False, version=after + 1)
        # a snapshot at version 0 is followed by version 0's events: the deal's
        # round_started (with the commitment) is seen like every later round's
        return _Start(snapshot=True, version=loaded.version + 1 if loaded.version else 0)
    if request.from_version:
        raise invalid("give from_version or after_cursor, not both")
    position = convert.cursor_position(request.after_cursor)
    if position is None:
        raise invalid(f"after_cursor {request.after_cursor[:40]!r} is not an event's cursor")
    version, index = position
    if version > loaded.version:
        raise invalid(f"after_cursor is ahead of the game (version {loaded.version})")
    count = await _event_count(ctx, loaded, version)
    if index >= count:
        raise invalid(f"after_cursor names no event: version {version} has {count}")
    if index + 1 < count:
        return _Start(snapshot=False, version=version, skip=index + 1)
    return _Start(snapshot=False, version=version + 1)


async def _event_count(ctx: Context, loaded: Loaded, version: int) -> int:
    if version == 0:
        return len(_deal_events(loaded.state, None))
    items = await ctx.store.read_log(loaded.record.game_id, version - 1, limit=1)
    if not items or items[0].version != version:
        return 0
    return len(spb.LogEntry.FromString(items[0].entry).events)


def _deal_events(state: GameState, seat: int | None) -> list[pb.Event]:
    """Version 0's events: round 1 dealt again from the game's seed (and decks)."""
    _, events = GameState.new_game_with_events(
        state.rules, state.seats, state.seed, dict(state.stock_orders)
    )
    return [
        convert.place_event(convert.event_to_pb(event, seat, 0), index)
        for index, event in enumerate(events)
    ]


async def _stream(
    ctx: Context, loaded: Loaded, seat: int | None, start: _Start
) -> AsyncIterator[pb.WatchGameResponse]:
    game_id = loaded.record.game_id
    if start.snapshot:
        yield pb.WatchGameResponse(snapshot=view_of(loaded, seat))
    version, skip = start.version, start.skip
    if version == 0:
        for event in _deal_events(loaded.state, seat)[skip:]:
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
