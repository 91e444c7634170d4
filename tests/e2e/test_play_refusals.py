"""Refused and malformed messages on a Play stream: each is answered on the stream with
the unary calls' code and reason, and the stream stays usable; an act on an ended
session fails at once; acts past the seat's rate limit are refused on the stream.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from clients.sdk import CallError, Seat
from engine.rulesets import PRESETS
from glintwick.v1 import game_pb2 as pb
from tests.e2e.conftest import StartServer
from tests.e2e.play_support import DRAW, act, raw_play
from tests.e2e.support import Env, Mirror


async def test_refused_and_malformed_messages_leave_the_stream_usable(server: Env) -> None:
    """Bytes that are no PlayRequest, an empty one, an act of no session, an illegal, a
    malformed and a stale act, a subscribe with a bad token: each is answered on the
    stream with the unary calls' code and reason; then a legal act is applied, once
    though it is sent twice."""
    game, joined = await server.new_game("whiskertrail", 2, b"play errors")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play errors")
    actor = joined[mirror.state.current]
    gid = game.game_id
    async with raw_play(server.target, actor.token) as stream:
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid)))
        snapshot = await stream.next()
        assert snapshot.WhichOneof("kind") == "snapshot" and snapshot.seat == actor.seat
        prompt = (await stream.next("prompt")).prompt
        assert prompt.version == 0

        def refusal(message: pb.PlayResponse) -> tuple[str, str]:
            kind = message.WhichOneof("kind")
            error = message.error if kind == "error" else message.result.error
            assert error.message, message
            return error.code, error.reason

        stream.send(b"\xff\xff\xff")
        assert refusal(await stream.next("error")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        stream.send(pb.PlayRequest())
        assert refusal(await stream.next("error")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        stream.send(act("no-such-game", 0, "r0", DRAW))
        assert refusal(await stream.next("result")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        discard = pb.Action(discard=pb.Discard(card=prompt.view.hand[0].id))
        stream.send(act(gid, 0, "r1", discard))  # no discard before the draw
        code, reason = refusal(await stream.next("result"))
        assert code == "FAILED_PRECONDITION" and reason not in ("", "INTERNAL"), reason
        stream.send(act(gid, 0, "r2", pb.Action()))
        assert refusal(await stream.next("result")) == ("INVALID_ARGUMENT", "MALFORMED_ACTION")
        stream.send(act(gid, 5, "r3", DRAW))
        assert refusal(await stream.next("result")) == ("ABORTED", "STALE_VERSION")
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, token="nope")))
        closed = await stream.next("closed")
        assert (closed.closed.error.code, closed.closed.error.reason) == (
            "UNAUTHENTICATED",
            "BAD_TOKEN",
        )
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid, seat=9)))
        closed = await stream.next("closed")
        assert closed.closed.error.reason == "NO_SUCH_SEAT"
        # the stream still plays: the draw lands once, though sent twice
        stream.send(act(gid, 0, "draw-1", DRAW))
        stream.send(act(gid, 0, "draw-1", DRAW))
        results: list[pb.PlayResult] = []
        events: list[pb.Event] = []
        prompts: list[pb.PlayPrompt] = []
        while len(results) < 2 or not prompts:
            message = await stream.next()
            kind = message.WhichOneof("kind")
            if kind == "result":
                results.append(message.result)
            elif kind == "event":
                events.append(message.event)
            elif kind == "prompt":
                prompts.append(message.prompt)
        assert results[0] == results[1] == pb.PlayResult(request_id="draw-1", version=1)
        assert [(e.version, e.type) for e in events] == [(1, pb.EVENT_TYPE_DREW)]
        assert [p.version for p in prompts] == [1]
        for subscribe, reason in [
            (pb.PlaySubscribe(game_id="no-such-game"), "GAME_NOT_FOUND"),
            (pb.PlaySubscribe(game_id=gid, after_cursor="9.9"), "INVALID_ARGUMENT"),
        ]:
            stream.send(pb.PlayRequest(subscribe=subscribe))
            assert (await stream.next("closed")).closed.error.reason == reason
        # a second subscribe of the seat replaces the first: a snapshot, one prompt
        again_subscribe = pb.PlaySubscribe(game_id=gid, seat=actor.seat)
        stream.send(pb.PlayRequest(subscribe=again_subscribe))
        assert (await stream.next()).snapshot.version == 1
        assert (await stream.next()).prompt.version == 1
        stream.send(pb.PlayRequest(unsubscribe=pb.PlayUnsubscribe(game_id=gid)))
        closed = await stream.next()
        assert closed.HasField("closed") and not closed.closed.HasField("error")
        stream.send(act(gid, 1, "after", DRAW))  # no session any more
        assert refusal(await stream.next("result")) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        # the server stopping ends the stream: UNAVAILABLE, SHUTTING_DOWN
        server.running.service.end_watches()
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await stream.next()
        assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
    view = await actor.view()
    assert view.version == 1


@pytest.mark.parametrize("server", ["memory"], indirect=True)
async def test_an_act_on_an_ended_session_fails_at_once(server: Env) -> None:
    """Once a session's stream has ended (here: its one seat refused), an act on it
    has nothing to carry it: CallError at once, not a wait for its whole timeout (a
    client that resends a given-up act there would otherwise wait for nothing)."""
    game, joined = await server.new_game("whiskertrail", 2, b"play ended")
    seat = Seat(server.client, game.game_id, joined[0].seat, "not-a-token")
    session = server.client.play_session()
    session.add(seat)
    assert [p async for p in session] == []
    assert session.ended and session.errors[(game.game_id, seat.seat)].reason == "BAD_TOKEN"
    started = asyncio.get_running_loop().time()
    with pytest.raises(CallError) as refused:
        await session.act(seat, DRAW, 0, timeout=5)
    assert refused.value.code is grpc.StatusCode.CANCELLED
    assert asyncio.get_running_loop().time() - started < 1.0
    await session.close()


async def test_acts_past_the_rate_limit_are_refused_on_the_stream(
    start_server: StartServer,
) -> None:
    """The seat's rate limit holds on the stream: with a burst of 2 and a slow refill,
    the third act at once is RESOURCE_EXHAUSTED / RATE_LIMITED, answered on the stream,
    which goes on playing once the bucket refills."""
    env = await start_server("memory", rate_per_second=5.0, rate_burst=2)
    game, joined = await env.new_game("whiskertrail", 2, b"play rate")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play rate")
    actor = joined[mirror.state.current]
    gid = game.game_id
    async with raw_play(env.target, actor.token) as stream:
        stream.send(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid)))
        await stream.next("prompt")
        for n in range(3):  # stale, so nothing changes, but each takes a token
            stream.send(act(gid, 7, f"r{n}", DRAW))
        reasons = [(await stream.next("result")).result.error.reason for _ in range(3)]
        assert sorted(reasons) == ["RATE_LIMITED", "STALE_VERSION", "STALE_VERSION"], reasons
        await asyncio.sleep(0.5)  # the bucket refills
        stream.send(act(gid, 0, "draw", DRAW))
        result = (await stream.next("result")).result
        assert not result.HasField("error") and result.version == 1
