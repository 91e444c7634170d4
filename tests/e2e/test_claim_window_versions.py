"""A May I? answer is judged against its window, not the version, from the user's side:
SubmitAction through the stubs generated from the proto, four seats of a contract game,
on both stores.

Each answer moves the version, and the rules make the answers' order irrelevant (the
first claimant in turn order after the discarder wins, however they arrive), so an
answer sent at any version since its window opened applies while its seat has yet to
answer: a seat answers the one prompt (or view) it got in the window.  Anything else
at an old version is still ABORTED STALE_VERSION; a resent answer gets its first
result.
"""

from __future__ import annotations

import grpc
import pytest

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from tests.e2e.support import Env

PASS = pb.Action(pass_claim=pb.PassClaim())
CLAIM = pb.Action(claim=pb.Claim())


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


async def view_of(stub: pb_grpc.GameServiceAsyncStub, game_id: str, token: str) -> pb.View:
    view: pb.View = await stub.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(token))
    return view


async def submit(
    stub: pb_grpc.GameServiceAsyncStub,
    game_id: str,
    token: str,
    version: int,
    action: pb.Action,
    request_id: str,
) -> pb.SubmitActionResponse:
    request = pb.SubmitActionRequest(
        game_id=game_id, expected_version=version, request_id=request_id, action=action
    )
    response: pb.SubmitActionResponse = await stub.SubmitAction(request, metadata=bearer(token))
    return response


async def open_window(
    stub: pb_grpc.GameServiceAsyncStub, game_id: str, tokens: list[str]
) -> pb.View:
    """The seat to act draws from the stock and discards its first legal discard: the
    window that opens, as the first seat to answer sees it."""
    view = await view_of(stub, game_id, tokens[0])
    seat = view.to_act[0]
    draw = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))
    await submit(stub, game_id, tokens[seat], view.version, draw, "draw")
    legal = await stub.ListLegalActions(
        pb.ListLegalActionsRequest(game_id=game_id), metadata=bearer(tokens[seat])
    )
    discard = next(a for a in legal.actions if a.HasField("discard"))
    await submit(stub, game_id, tokens[seat], view.version + 1, discard, "discard")
    window = await view_of(stub, game_id, tokens[0])
    assert window.phase == pb.PHASE_CLAIM and len(window.to_act) == 3, window
    return window


@pytest.mark.parametrize("server", ["memory", "redis"], indirect=True)
async def test_each_seat_answers_the_window_at_the_version_it_opened(server: Env) -> None:
    """Three seats answer a window, all at the version it opened: the second and third
    land (versions +2 and +3), where they were refused STALE_VERSION before; the
    window closes as the rules say; a resent answer gets its first result; a draw at
    that old version afterwards is refused STALE_VERSION, and changes nothing."""
    game, seats = await server.new_game("contract", 4, b"window versions")
    tokens = [seat.token for seat in seats]
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub: pb_grpc.GameServiceAsyncStub = pb_grpc.GameServiceStub(channel)
        window = await open_window(stub, game.game_id, tokens)
        opened = window.version
        first, second, third = window.to_act
        before = await view_of(stub, game.game_id, tokens[second])
        versions = []
        for seat, action in ((third, PASS), (first, PASS), (second, CLAIM)):
            answer = await submit(stub, game.game_id, tokens[seat], opened, action, f"a{seat}")
            versions.append(answer.version)
        assert versions == [opened + 1, opened + 2, opened + 3]
        after = await view_of(stub, game.game_id, tokens[second])
        assert after.phase == pb.PHASE_DRAW, "the window closed with its last answer"
        assert after.version == opened + 3
        # the claimant took the discard and its penalty card: its hand grew by two
        assert len(after.hand) == len(before.hand) + 2
        again = await submit(stub, game.game_id, tokens[first], opened, PASS, f"a{first}")
        assert again.version == opened + 2, "a resent answer: its first result"
        draw = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await submit(stub, game.game_id, tokens[after.to_act[0]], opened, draw, "late")
        assert refused.value.code() is grpc.StatusCode.ABORTED
        assert "STALE_VERSION" in str(refused.value.trailing_metadata())
        assert (await view_of(stub, game.game_id, tokens[0])).version == opened + 3


@pytest.mark.parametrize("server", ["memory"], indirect=True)
async def test_an_answer_from_before_its_window_is_stale(server: Env) -> None:
    """A claim answer sent at a version before its window opened (the discard's own)
    is refused ABORTED STALE_VERSION, and changes nothing; so is a second answer of a
    seat that already answered, sent at the window's first version."""
    game, seats = await server.new_game("contract", 4, b"window stale")
    tokens = [seat.token for seat in seats]
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub: pb_grpc.GameServiceAsyncStub = pb_grpc.GameServiceStub(channel)
        window = await open_window(stub, game.game_id, tokens)
        opened = window.version
        first, second, _ = window.to_act
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await submit(stub, game.game_id, tokens[first], opened - 1, PASS, "early")
        assert refused.value.code() is grpc.StatusCode.ABORTED
        await submit(stub, game.game_id, tokens[second], opened, PASS, "second")
        with pytest.raises(grpc.aio.AioRpcError) as twice:
            await submit(stub, game.game_id, tokens[second], opened, CLAIM, "second again")
        assert twice.value.code() is grpc.StatusCode.ABORTED, "an answered seat: stale"
        view = await view_of(stub, game.game_id, tokens[0])
        assert view.version == opened + 1 and view.phase == pb.PHASE_CLAIM
        assert list(view.to_act) == [s for s in window.to_act if s != second]
