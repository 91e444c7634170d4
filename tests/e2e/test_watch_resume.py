"""Watches resume exactly: every event has a unique, ordered cursor, and a watch
resumed after one (gRPC ``after_cursor``; SSE ``Last-Event-ID`` or ``?after=``)
delivers every later event once, even when it was cut in the middle of a version.
And watches do not hold a stopping server up: SIGTERM of ``glintwick serve`` with an
SSE and a gRPC watch open at the game's version ends within the documented grace.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from clients.sdk import GlintwickClient, Seat
from clients.sdk.errors import call_error
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.processes.server import ServerProcess
from tests.e2e.support import Env, Mirror, play_game, read_sse, sse_item

ROOT = Path(__file__).resolve().parents[2]

DRAW = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))


@contextlib.asynccontextmanager
async def game_stub(env: Env) -> AsyncIterator[pb_grpc.GameServiceAsyncStub]:
    """A raw stub (the SDK's watch resumes by itself: these tests resume by hand)."""
    channel = grpc.aio.insecure_channel(env.target)
    try:
        stub: pb_grpc.GameServiceAsyncStub = pb_grpc.GameServiceStub(channel)
        yield stub
    finally:
        await channel.close()


def bearer(token: str | None) -> tuple[tuple[str, str | bytes], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


async def grpc_items(
    stub: pb_grpc.GameServiceAsyncStub, request: pb.WatchGameRequest, token: str | None, count: int
) -> list[pb.WatchGameResponse]:
    """The first ``count`` messages of a watch (then it is cancelled)."""
    got: list[pb.WatchGameResponse] = []
    call = stub.WatchGame(request, metadata=bearer(token))
    try:
        async with asyncio.timeout(10):
            async for item in call:
                got.append(item)
                if len(got) == count:
                    break
    finally:
        call.cancel()
    return got


async def sse_items(
    base: str, path: str, count: int, headers: dict[str, str], params: dict[str, str]
) -> list[tuple[str, pb.WatchGameResponse]]:
    """The first ``count`` SSE events of a watch as (id, item)."""
    got: list[tuple[str, pb.WatchGameResponse]] = []
    async with (
        aiohttp.ClientSession(base) as http,
        asyncio.timeout(10),
        http.get(path, headers=headers, params=params) as response,
    ):
        assert response.status == 200, await response.text()
        async for kind, ident, data in read_sse(response):
            got.append((ident, sse_item(kind, data)))
            if len(got) == count:
                break
    return got


async def draw_and_discard(seat: Seat, mirror: Mirror) -> pb.SubmitActionResponse:
    """The acting seat draws (one version) and discards its newest card (the next)."""
    actor = mirror.state.current
    await seat.act(DRAW, expected_version=mirror.version)
    mirror.apply(actor, convert.action_from_pb(DRAW))
    view = await seat.view()
    discard = pb.Action(discard=pb.Discard(card=view.hand[-1].id))
    response = await seat.act(discard, expected_version=mirror.version)
    mirror.apply(actor, convert.action_from_pb(discard))
    return response


async def test_a_watch_resumed_inside_a_version_gets_the_rest_once(server: Env) -> None:
    """whiskertrail, 2 seats: Draw (v1), Discard (v2: discarded, turn_ended,
    turn_started).  Resumed after (2, discarded), gRPC and SSE deliver turn_ended and
    turn_started once, then the next move's events."""
    seed = b"cut inside"
    game, joined = await server.new_game("whiskertrail", 2, seed)
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    actor = mirror.state.current
    watcher = 1 - actor
    response = await draw_and_discard(joined[actor], mirror)
    assert [e.type for e in response.events] == [
        pb.EVENT_TYPE_DISCARDED,
        pb.EVENT_TYPE_TURN_ENDED,
        pb.EVENT_TYPE_TURN_STARTED,
    ]
    assert [(e.version, e.index, e.cursor) for e in response.events] == [
        (2, 0, "2.0"),
        (2, 1, "2.1"),
        (2, 2, "2.2"),
    ]
    token = joined[watcher].token
    game_id = game.game_id
    path = f"/v1/games/{game_id}:watch"
    auth = {"Authorization": f"Bearer {token}"}
    async with game_stub(server) as stub:
        # the watch that dropped after (2, discarded): what is left of version 2, then v3
        after = pb.WatchGameRequest(game_id=game_id, after_cursor="2.0")
        grpc_task = asyncio.create_task(grpc_items(stub, after, token, 3))
        sse_tasks = [
            asyncio.create_task(sse_items(server.http, path, 3, headers, params))
            for headers, params in [
                ({**auth, "Last-Event-ID": "2.0"}, {}),
                (auth, {"after": "2.0"}),
                # an EventSource reconnects with its first URL: Last-Event-ID wins
                ({**auth, "Last-Event-ID": "2.0"}, {"from_version": "0"}),
            ]
        ]
        await asyncio.sleep(0.3)  # the watches are open before the next move
        next_seat = mirror.state.current
        await joined[next_seat].act(DRAW, expected_version=mirror.version)
        mirror.apply(next_seat, convert.action_from_pb(DRAW))
        expected = mirror.expected_events(watcher, 2)[1:] + mirror.expected_events(watcher, 3)
        assert [e.type for e in expected] == [
            pb.EVENT_TYPE_TURN_ENDED,
            pb.EVENT_TYPE_TURN_STARTED,
            pb.EVENT_TYPE_DREW,
        ]
        assert [item.event for item in await grpc_task] == expected
        for got in await asyncio.gather(*sse_tasks):
            assert [item.event for _, item in got] == expected
            assert [ident for ident, _ in got] == ["2.1", "2.2", "3.0"]

        # whole versions still resume with from_version: after 1, version 2 whole
        whole = await grpc_items(
            stub, pb.WatchGameRequest(game_id=game_id, from_version=1), token, 4
        )
        assert [i.event for i in whole] == [
            *mirror.expected_events(watcher, 2),
            *mirror.expected_events(watcher, 3),
        ]


async def test_round_one_deal_is_seen_by_a_watcher_from_version_zero(server: Env) -> None:
    """A watch from version 0 of a new game: the snapshot, then round 1's round_started
    (its commitment, the seat's own hand only) and turn_started, at version 0."""
    seed = b"deal seen"
    game, joined = await server.new_game("whiskertrail", 2, seed)
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    async with game_stub(server) as stub:
        for viewer in (0, 1, None):
            token = None if viewer is None else joined[viewer].token
            request = pb.WatchGameRequest(game_id=game.game_id)
            snapshot, *events = await grpc_items(stub, request, token, 3)
            assert snapshot.HasField("snapshot") and snapshot.snapshot.version == 0
            got = [e.event for e in events]
            assert got == mirror.expected_events(viewer, 0)
            started = got[0]
            assert (started.type, started.cursor) == (pb.EVENT_TYPE_ROUND_STARTED, "0.0")
            assert got[1].type == pb.EVENT_TYPE_TURN_STARTED and got[1].cursor == "0.1"
            commitment = started.round_started.commitment
            assert commitment == snapshot.snapshot.commitment != ""
            hand = [c.id for c in started.round_started.hand]
            assert hand == ([] if viewer is None else [c.id for c in snapshot.snapshot.hand])
        resumed = await grpc_items(
            stub, pb.WatchGameRequest(game_id=game.game_id, after_cursor="0.0"), None, 1
        )
        assert [i.event for i in resumed] == mirror.expected_events(None, 0)[1:]


async def test_bad_resume_points_are_refused(server: Env) -> None:
    game, joined = await server.new_game("whiskertrail", 2, b"bad cursors")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"bad cursors")
    await draw_and_discard(joined[mirror.state.current], mirror)
    game_id = game.game_id
    bad = [
        pb.WatchGameRequest(game_id=game_id, after_cursor="x"),
        pb.WatchGameRequest(game_id=game_id, after_cursor="2"),
        pb.WatchGameRequest(game_id=game_id, after_cursor="3.0"),  # ahead of the game
        pb.WatchGameRequest(game_id=game_id, after_cursor="2.3"),  # version 2 has 3 events
        pb.WatchGameRequest(game_id=game_id, after_cursor="1.0", from_version=1),
        pb.WatchGameRequest(game_id=game_id, from_version=3),
    ]
    async with game_stub(server) as stub:
        for request in bad:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await grpc_items(stub, request, None, 1)
            assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, request
    async with aiohttp.ClientSession(server.http) as http:
        for params, headers in [
            ({"after": "x"}, {}),
            ({"after": "9.0"}, {}),
            ({}, {"Last-Event-ID": "2.7"}),
            ({"from_version": "-1"}, {}),
            ({"from_version": "1e3"}, {}),
            ({"from_version": "9" * 30}, {}),
            ({"nope": "1"}, {}),
        ]:
            async with http.get(
                f"/v1/games/{game_id}:watch", params=params, headers=headers
            ) as response:
                assert response.status == 400, (params, headers)
                body = await response.json()
                assert body["code"] == "INVALID_ARGUMENT", body
                assert set(body) == {"code", "reason", "message"}


# --------------------------------------------------------------------------- random cuts


async def cut_grpc_watcher(
    stub: pb_grpc.GameServiceAsyncStub,
    game_id: str,
    token: str | None,
    rng: random.Random,
    opened: asyncio.Event,
) -> tuple[list[pb.Event], int]:
    """A watch from version 0 cut after a random number of events (1 to 8) again and
    again, each time resumed after the last cursor received, until the game's stream
    ends (``opened`` is set once its snapshot came).  Returns every event received and
    how many streams it took."""
    events: list[pb.Event] = []
    request = pb.WatchGameRequest(game_id=game_id)
    streams = 0
    while True:
        streams += 1
        quota = rng.randint(1, 8)
        call = stub.WatchGame(request, metadata=bearer(token))
        ended = True
        try:
            async for item in call:
                if item.HasField("snapshot"):
                    assert streams == 1, "a resumed watch sends no snapshot"
                    opened.set()
                    continue
                events.append(item.event)
                request = pb.WatchGameRequest(game_id=game_id, after_cursor=item.event.cursor)
                quota -= 1
                if quota == 0:
                    ended = False
                    break
        except grpc.aio.AioRpcError as exc:
            # (resubscribing this fast can meet the stream calls' rate limit on a quick
            # machine: as any client, wait what the refusal's RetryInfo says and resume)
            refusal = call_error(exc)
            if refusal.reason != "RATE_LIMITED" or refusal.retry_after is None:
                raise
            await asyncio.sleep(refusal.retry_after + 0.01)
            ended = False
        finally:
            call.cancel()
        if ended:
            return events, streams


async def cut_sse_watcher(
    base: str, game_id: str, token: str | None, rng: random.Random, opened: asyncio.Event
) -> tuple[list[pb.Event], int]:
    """:func:`cut_grpc_watcher` over SSE, resuming as an EventSource does (the first
    URL again, with ``Last-Event-ID``) or with ``?after=``, at random."""
    events: list[pb.Event] = []
    last = ""
    streams = 0
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession(base) as http:
        while True:
            streams += 1
            quota = rng.randint(1, 8)
            headers, params = dict(auth), {}
            if last and rng.random() < 0.5:
                headers["Last-Event-ID"] = last
            elif last:
                params["after"] = last
            ended = True
            async with http.get(
                f"/v1/games/{game_id}:watch", headers=headers, params=params
            ) as response:
                if response.status == 429:  # (the rate limit, as over gRPC: wait, resume)
                    await asyncio.sleep(float(response.headers["Retry-After"]) + 0.01)
                    continue
                assert response.status == 200
                async for kind, ident, data in read_sse(response):
                    if kind == "snapshot":
                        assert streams == 1, "a resumed watch sends no snapshot"
                        opened.set()
                        continue
                    event = sse_item(kind, data).event
                    assert ident == event.cursor
                    events.append(event)
                    last = ident
                    quota -= 1
                    if quota == 0:
                        ended = False
                        break
            if ended:
                return events, streams


async def uncut_watcher(
    stub: pb_grpc.GameServiceAsyncStub, game_id: str, token: str | None, opened: asyncio.Event
) -> Any:
    call = stub.WatchGame(pb.WatchGameRequest(game_id=game_id), metadata=bearer(token))
    events = []
    async for item in call:
        if item.HasField("snapshot"):
            opened.set()
        else:
            events.append(item.event)
    return events


@pytest.mark.parametrize(
    "server", ["memory", "redis", pytest.param("cluster", marks=pytest.mark.slow)], indirect=True
)
async def test_watchers_cut_at_random_events_miss_nothing(server: Env) -> None:
    """Random legal play with watchers (a seat's and a spectator's, on gRPC and SSE)
    cut at random events and resumed after their last cursor: each sees every event
    exactly once, in order, the same as an uncut watcher and the engine."""
    seed = b"random cuts"
    seats = 3
    game, joined = await server.new_game("whiskertrail", seats, seed)
    mirror = Mirror(PRESETS["whiskertrail"], seats, seed)
    rng = random.Random(14)
    viewers: list[int | None] = [1, None]
    async with game_stub(server) as stub:
        tokens = {v: (None if v is None else joined[v].token) for v in viewers}
        opened = [asyncio.Event() for _ in range(len(viewers) * 4)]
        uncut = {
            v: asyncio.create_task(uncut_watcher(stub, game.game_id, tokens[v], opened[i]))
            for i, v in enumerate(viewers)
        }
        cut = [
            (
                v,
                face,
                asyncio.create_task(
                    cut_grpc_watcher(
                        stub, game.game_id, tokens[v], random.Random(f"{v}{n}"), opened[-1 - n]
                    )
                    if face == "grpc"
                    else cut_sse_watcher(
                        server.http, game.game_id, tokens[v], random.Random(n), opened[-1 - n]
                    )
                ),
            )
            for n, (v, face) in enumerate(
                (v, face) for v in viewers for face in ("grpc", "sse", "grpc")
            )
        ]
        async with asyncio.timeout(30):  # every watch took its snapshot at version 0
            for event in opened:
                await event.wait()
        await play_game(game.game_id, [joined], mirror, rng)
        assert mirror.state.is_terminal()
        async with asyncio.timeout(60):
            whole = {v: await task for v, task in uncut.items()}
            results = [(v, face, await task) for v, face, task in cut]
    for viewer in viewers:
        expected = [
            e for v in range(0, mirror.version + 1) for e in mirror.expected_events(viewer, v)
        ]
        assert whole[viewer] == expected, f"the uncut watch of {viewer}"
        cursors = [e.cursor for e in expected]
        assert len(set(cursors)) == len(cursors), "cursors are unique"
    for viewer, face, (events, streams) in results:
        what = f"the cut {face} watch of {viewer} ({streams} streams)"
        assert streams > 10, what
        assert events == whole[viewer], what


# --------------------------------------------------------------------------- shutdown


#: docs/OPERATIONS.md: "in-flight calls get five seconds"
GRACE_SECONDS = 5.0


async def test_sigterm_with_watches_open_stops_within_the_grace(tmp_path: Path) -> None:
    """``glintwick serve`` with an SSE watch and a gRPC watch open at the game's current
    version (nothing to send): a new SSE stream answers its headers at once, and
    SIGTERM ends the process (exit 0) within the grace; the gRPC watch ends
    UNAVAILABLE (clients resume), the SSE stream ends."""
    with ServerProcess(tmp_path, "--no-bots", http=True) as child:
        grpc_port, http_port = child.grpc_port, child.http_port
        async with GlintwickClient(child.address) as client:
            game = await client.create_game("whiskertrail", seats=2, seed=b"sigterm")
            # seat 0 plays first in round 1
            seat = await client.join(game.game_id, name="ann", seat=0)
            await client.join(game.game_id, name="bob", seat=1)
            await seat.act(DRAW, expected_version=0)  # the game is at version 1
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
            stub: pb_grpc.GameServiceAsyncStub = pb_grpc.GameServiceStub(channel)
            watch = stub.WatchGame(pb.WatchGameRequest(game_id=game.game_id, from_version=1))
            path = f"http://127.0.0.1:{http_port}/v1/games/{game.game_id}:watch"
            async with aiohttp.ClientSession() as http:
                # headers at once, though there is no event to send
                async with asyncio.timeout(2):
                    idle = await http.get(path, params={"from_version": "1"})
                assert idle.status == 200
                assert idle.headers["Content-Type"].startswith("text/event-stream")
                # a watch from 0: its snapshot at once
                async with asyncio.timeout(2):
                    fresh = await http.get(path)
                    kind, ident, _ = await anext(read_sse(fresh))
                assert (kind, ident) == ("snapshot", "1")
                await asyncio.sleep(0.5)  # the gRPC watch is open at the server
                started = time.monotonic()
                child.send_signal(signal.SIGTERM)
                code = await asyncio.to_thread(child.wait, 30)
                took = time.monotonic() - started
                assert code == 0, child.text()
                assert took < GRACE_SECONDS, f"SIGTERM took {took:.1f} s with watches open"
                idle.release()
                fresh.release()
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                async for _ in watch:
                    pass
            assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
            await channel.close()
