"""What a seat or a spectator sees of a game, and a seat's legal actions."""

from __future__ import annotations

from engine.views import build_seat_view, build_spectator_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb

from .access import acting_seat, requested_seat
from .context import Caller, Context
from .records import Loaded


def view_of(loaded: Loaded, seat: int | None) -> pb.View:
    """The view of ``seat`` (None: a spectator's)."""
    message = pb.View()
    fill_view(message, loaded, seat)
    return message


def fill_view(message: pb.View, loaded: Loaded, seat: int | None) -> None:
    """:func:`view_of` written into ``message`` (an empty one: a prompt's, say, rather
    than a copy of a new one)."""
    state = loaded.state
    view = build_seat_view(state, seat) if seat is not None else build_spectator_view(state)
    convert.fill_view_pb(
        message, view, loaded.record.game_id, loaded.version, loaded.record.deadline_unix
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
    # (no seat may act before every seat is taken: nothing is legal yet)
    actions = loaded.state.legal_actions(seat) if loaded.table_full() else []
    return pb.ListLegalActionsResponse(
        version=loaded.version, seat=seat, actions=convert.legal_actions_to_pb(actions)
    )
