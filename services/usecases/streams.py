"""What a watch (:mod:`.watch`) and a play session (:mod:`.play`) share: where a
stream of events starts, version 0's events, and how an open stream ends when its
server stops.

Every event has a position, ``(version, index)``: the version of the action that
produced it and its place among that action's events (version 0 is round 1's deal,
which the game's creation stores no log entry for: it is dealt again from the seed).
A stream starts at a position and sends every event after it, in order, exactly once;
a client that resumes after the cursor of the last event it received misses nothing
and sees nothing twice, even when its stream was cut in the middle of a version.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from engine.game import GameState
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services.errors import ServiceError, invalid

from .context import Context
from .records import Loaded


@dataclass(frozen=True, slots=True)
class StreamStart:
    """Where a stream begins: a snapshot or not, then the events of ``version`` on,
    less the first ``skip`` of that version (already received)."""

    snapshot: bool
    version: int
    skip: int = 0


def shutting_down() -> ServiceError:
    """What an open stream ends with when its server stops: UNAVAILABLE, the code
    clients reconnect on (another replica, or this one restarted, resumes the stream)."""
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        "SHUTTING_DOWN",
        "the server is shutting down: reconnect, after the last cursor received",
    )


async def stream_start(ctx: Context, request: pb.WatchGameRequest, loaded: Loaded) -> StreamStart:
    """Where the stream ``request`` asks for starts (``from_version`` or ``after_cursor``),
    checked against the game as ``loaded``: INVALID_ARGUMENT past its end."""
    if not request.after_cursor:
        after = request.from_version
        if after > loaded.version:
            raise invalid(f"from_version {after} is ahead of the game (version {loaded.version})")
        if after > 0:
            return StreamStart(snapshot=False, version=after + 1)
        # a snapshot at version 0 is followed by version 0's events: the deal's
        # round_started (with the commitment) is seen like every later round's
        return StreamStart(snapshot=True, version=loaded.version + 1 if loaded.version else 0)
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
        return StreamStart(snapshot=False, version=version, skip=index + 1)
    return StreamStart(snapshot=False, version=version + 1)


async def _event_count(ctx: Context, loaded: Loaded, version: int) -> int:
    if version == 0:
        return len(deal_events(loaded.state, None))
    items = await ctx.store.read_log(loaded.record.game_id, version - 1, limit=1)
    if not items or items[0].version != version:
        return 0
    return len(spb.LogEntry.FromString(items[0].entry).events)


def deal_events(state: GameState, seat: int | None) -> list[pb.Event]:
    """Version 0's events: round 1 dealt again from the game's seed (and decks)."""
    _, events = GameState.new_game_with_events(
        state.rules, state.seats, state.seed, dict(state.stock_orders)
    )
    return [
        convert.place_event(convert.event_to_pb(event, seat, 0), index)
        for index, event in enumerate(events)
    ]
