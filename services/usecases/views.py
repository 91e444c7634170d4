"""What a seat or a spectator sees of a game, and a seat's legal actions."""

from __future__ import annotations

from engine.views import seat_view, spectator_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb

from .access import acting_seat, requested_seat
from .context import Caller, Context
from .records import Loaded


def view_of(loaded: Loaded, seat: int | None) -> pb.View:
    """The view of ``seat`` (None: a spectator's)."""
    plain = seat_view(loaded.state, seat) if seat is not None else spectator_view(loaded.state)
    return convert.view_to_pb(
        plain, loaded.record.game_id, loaded.version, loaded.record.deadline_unix
    )


async def get_view(ctx: Context, request: pb.GetViewRequest, caller: Caller) -> pb.View:
    loaded = await ctx.load(request.game_id)
    seat = acting_seat(ctx.config, loaded, caller, requested_seat(request), required=False)
    return view_of(loaded, seat)


async def list_legal_actions(
    ctx: Context, request: pb.ListLegalActionsRequest, caller: Caller
) -> pb.ListLegalActionsResponse:
    loaded = await ctx.load(request.game_id)
    seat = acting_seat(ctx.config, loaded, caller, requested_seat(request), required=True)
    assert seat is not None
    actions = loaded.state.legal_actions(seat)
    return pb.ListLegalActionsResponse(
        version=loaded.version, seat=seat, actions=convert.legal_actions_to_pb(actions)
    )
