"""A join retried with its request id (JoinGameRequest.request_id): the same join again
is answered its seat with a new token (the old one stops working), anything else is
refused as before; over real gRPC (stubs generated from the proto) and HTTP, on both
stores, and the SDK's join through a lost answer (a store reply lost after its write,
a deadline passed after it) ends with a seat it can play."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import aiohttp
import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from clients.sdk import CallError, GlintwickClient
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from glintwick_cli import start_server
from services.config import ServerOptions
from services.store.base import GameStore, StoreUnavailableError, Write
from services.store.memory import MemoryStore
from services.store.redis import RedisStore
from services.usecases.moves import MAX_REQUEST_ID
from tests.e2e.support import Env

Code = grpc.StatusCode


@pytest.fixture
async def stub(server: Env) -> AsyncIterator[pb_grpc.GameServiceAsyncStub]:
    async with grpc.aio.insecure_channel(server.target) as channel:
        yield pb_grpc.GameServiceStub(channel)


def reason_of(exc: grpc.aio.AioRpcError) -> str:
    """The refusal's ErrorInfo reason, as any client reads it."""
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    assert status is not None, exc
    info = error_details_pb2.ErrorInfo()
    assert status.details and status.details[0].Unpack(info), exc
    reason: str = info.reason
    return reason


async def refusal(call: Awaitable[Any]) -> tuple[Code, str]:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc.code(), reason_of(exc)
    raise AssertionError("the call was answered")


def authorized(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


async def seat_of(stub: pb_grpc.GameServiceAsyncStub, game_id: str, token: str) -> int:
    """The seat a token is (its view's), or -1 when the token is refused BAD_TOKEN."""
    request = pb.GetViewRequest(game_id=game_id)
    try:
        view = await stub.GetView(request, metadata=authorized(token))
    except grpc.aio.AioRpcError as exc:
        assert (exc.code(), reason_of(exc)) == (Code.UNAUTHENTICATED, "BAD_TOKEN"), exc
        return -1
    assert view.HasField("seat")
    return view.seat


async def new_game(stub: pb_grpc.GameServiceAsyncStub, seats: int = 2) -> str:
    game = await stub.CreateGame(pb.CreateGameRequest(rule_set_name="whiskertrail", seats=seats))
    return game.game_id


def join(
    game_id: str, seat: int | None = None, request_id: str = "", name: str = ""
) -> pb.JoinGameRequest:
    request = pb.JoinGameRequest(game_id=game_id, request_id=request_id, name=name)
    if seat is not None:
        request.seat = seat
    return request


# --------------------------------------------------------------------------- gRPC


async def test_a_join_retried_with_its_request_id_gets_its_seat_with_a_new_token(
    stub: pb_grpc.GameServiceAsyncStub,
) -> None:
    game_id = await new_game(stub, seats=3)
    rid = uuid.uuid4().hex
    first = await stub.JoinGame(join(game_id, 1, rid, name="ann"))  # (its answer "lost")
    assert first.seat == 1
    again = await stub.JoinGame(join(game_id, 1, rid, name="ann"))
    assert again.seat == 1 and again.token and again.token != first.token
    assert [s.joined for s in again.game.seat_info] == [False, True, False]
    assert again.game.seat_info[1].name == "ann" and again.game.version == 0
    assert await seat_of(stub, game_id, again.token) == 1
    assert await seat_of(stub, game_id, first.token) == -1  # nobody can hold the old one

    # without a seat it is the seat that join took (not the first free one); the newest
    # answer is the valid one, its name the first join's
    third = await stub.JoinGame(join(game_id, None, rid, name="renamed"))
    assert third.seat == 1 and third.token not in (first.token, again.token)
    assert await seat_of(stub, game_id, third.token) == 1
    assert await seat_of(stub, game_id, again.token) == -1
    game = await stub.GetGame(pb.GetGameRequest(game_id=game_id))
    assert [(s.joined, s.name) for s in game.seat_info] == [(False, ""), (True, "ann"), (False, "")]

    # the other seats are joined as ever (a join with no request id takes the first free)
    other = await stub.JoinGame(join(game_id))
    assert other.seat == 0
    last = await stub.JoinGame(join(game_id, None, uuid.uuid4().hex))
    assert last.seat == 2
    # the table is full: the same join again still answers its seat
    fourth = await stub.JoinGame(join(game_id, 1, rid))
    assert fourth.seat == 1 and await seat_of(stub, game_id, fourth.token) == 1
    assert await seat_of(stub, game_id, third.token) == -1
    assert [await seat_of(stub, game_id, j.token) for j in (other, last)] == [0, 2]


async def test_a_join_with_another_or_no_request_id_is_still_seat_taken(
    stub: pb_grpc.GameServiceAsyncStub,
) -> None:
    game_id = await new_game(stub)
    rid = uuid.uuid4().hex
    first = await stub.JoinGame(join(game_id, 0, rid, name="ann"))
    for request_id in (uuid.uuid4().hex, "", rid.upper(), rid[:-1]):
        taken = await refusal(stub.JoinGame(join(game_id, 0, request_id)))
        assert taken == (Code.FAILED_PRECONDITION, "SEAT_TAKEN"), request_id
    # a seat joined with no request id has none to match, even an empty one
    plain = await stub.JoinGame(join(game_id, 1))
    assert await refusal(stub.JoinGame(join(game_id, 1))) == (
        Code.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    assert await refusal(stub.JoinGame(join(game_id, None, uuid.uuid4().hex))) == (
        Code.FAILED_PRECONDITION,
        "GAME_FULL",
    )
    # nothing changed: both tokens still play their seats
    assert await seat_of(stub, game_id, first.token) == 0
    assert await seat_of(stub, game_id, plain.token) == 1


async def test_a_request_id_matches_only_the_seat_and_game_its_join_took(
    stub: pb_grpc.GameServiceAsyncStub,
) -> None:
    game_a, game_b = await new_game(stub), await new_game(stub)
    rid = uuid.uuid4().hex
    a0 = await stub.JoinGame(join(game_a, 0, rid))
    # another game: a join of its own (its seat 0 is free), a new seat with a new token
    b0 = await stub.JoinGame(join(game_b, 0, rid))
    assert b0.seat == 0 and b0.game.game_id == game_b
    b1 = await stub.JoinGame(join(game_b, 1, "someone-else"))
    # another seat of the same game: taken by another join, SEAT_TAKEN
    assert await refusal(stub.JoinGame(join(game_b, 1, rid))) == (
        Code.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    # another seat, free: a new join of that seat, not seat 0 again
    a1 = await stub.JoinGame(join(game_a, 1, rid))
    assert a1.seat == 1
    assert [await seat_of(stub, game_a, j.token) for j in (a0, a1)] == [0, 1]
    assert [await seat_of(stub, game_b, j.token) for j in (b0, b1)] == [0, 1]
    assert await seat_of(stub, game_b, a0.token) == -1  # (a token is its game's)
    # a seat the game does not have is refused as ever, request id or not
    assert await refusal(stub.JoinGame(join(game_a, 5, rid))) == (
        Code.INVALID_ARGUMENT,
        "NO_SUCH_SEAT",
    )


async def test_a_too_long_request_id_is_invalid_and_changes_nothing(
    server: Env, stub: pb_grpc.GameServiceAsyncStub
) -> None:
    game_id = await new_game(stub)
    longest = "r" * MAX_REQUEST_ID
    too_long = longest + "r"
    refused = await refusal(stub.JoinGame(join(game_id, 0, too_long)))
    # the same refusal as SubmitAction's request id past the same limit
    seat = await server.client.join(game_id, seat=1)
    submit = pb.SubmitActionRequest(
        game_id=game_id, request_id=too_long, action=pb.Action(draw=pb.Draw())
    )
    assert refused == await refusal(stub.SubmitAction(submit, metadata=authorized(seat.token)))
    assert refused == (Code.INVALID_ARGUMENT, "INVALID_ARGUMENT")
    game = await stub.GetGame(pb.GetGameRequest(game_id=game_id))
    assert [s.joined for s in game.seat_info] == [False, True] and game.version == 0

    # at the limit it is a request id like any other; past it, never a retry either
    first = await stub.JoinGame(join(game_id, 0, longest))
    assert await refusal(stub.JoinGame(join(game_id, 0, too_long))) == refused
    assert await seat_of(stub, game_id, first.token) == 0
    again = await stub.JoinGame(join(game_id, 0, longest))
    assert again.seat == 0 and await seat_of(stub, game_id, again.token) == 0
    limits = await stub.GetLimits(pb.GetLimitsRequest())
    assert limits.request_id_length == MAX_REQUEST_ID


# --------------------------------------------------------------------------- HTTP


async def test_a_join_retried_over_http(server: Env) -> None:
    async with aiohttp.ClientSession(server.http) as session:

        async def post(path: str, body: object) -> tuple[int, Any]:
            async with session.post(path, json=body) as response:
                return response.status, await response.json()

        async def view_status(game_id: str, token: str) -> int:
            headers = {"Authorization": f"Bearer {token}"}
            async with session.get(f"/v1/games/{game_id}/view", headers=headers) as response:
                return response.status

        status, created = await post("/v1/games", {"ruleSetName": "whiskertrail", "seats": 2})
        assert status == 200
        game_id = created["gameId"]
        path = f"/v1/games/{game_id}:join"
        rid = uuid.uuid4().hex
        status, first = await post(path, {"seat": 1, "name": "ann", "requestId": rid})
        assert status == 200 and first["seat"] == 1
        status, again = await post(path, {"requestId": rid})
        assert status == 200 and again["seat"] == 1 and again["token"] != first["token"]
        assert again["game"]["seatInfo"][1] == {"seat": 1, "joined": True, "name": "ann", "bot": ""}
        assert await view_status(game_id, again["token"]) == 200
        assert await view_status(game_id, first["token"]) == 401

        status, taken = await post(path, {"seat": 1, "requestId": uuid.uuid4().hex})
        assert status == 409 and taken["reason"] == "SEAT_TAKEN"
        status, taken = await post(path, {"seat": 1})
        assert status == 409 and taken["reason"] == "SEAT_TAKEN"
        status, invalid = await post(path, {"seat": 0, "requestId": "x" * (MAX_REQUEST_ID + 1)})
        assert status == 400 and invalid["reason"] == "INVALID_ARGUMENT"
        assert "request_id" in invalid["message"]
        async with session.get(f"/v1/games/{game_id}") as response:
            game = await response.json()
        assert [s.get("joined", False) for s in game["seatInfo"]] == [False, True]
        assert await view_status(game_id, again["token"]) == 200

        async with session.get("/openapi.json") as response:
            schemas = (await response.json())["components"]["schemas"]
        field = schemas["glintwick.v1.JoinGameRequest"]["properties"]["requestId"]
        assert field["maxLength"] == MAX_REQUEST_ID and "unguessable" in field["description"]


# --------------------------------------------------------------------------- the SDK


class Losses:
    """What happens to the next join writes' answers (each is applied first)."""

    def __init__(self) -> None:
        self.replies_lost = 0  # the connection drops before the reply
        self.slow_replies: float = 0.0  # the next reply comes this many seconds late
        self.lost = 0  # answers lost so far

    async def after(self, written: bool) -> bool:
        if written and self.replies_lost:
            self.replies_lost -= 1
            self.lost += 1
            raise StoreUnavailableError("Connection closed by server.", write=True)
        if written and self.slow_replies:
            late, self.slow_replies = self.slow_replies, 0.0
            self.lost += 1
            await asyncio.sleep(late)
        return written


class LossyMemory(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.losses = Losses()

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        return await self.losses.after(await super().commit(game_id, expected_revision, write))


class LossyRedis(RedisStore):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.losses = Losses()

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        return await self.losses.after(await super().commit(game_id, expected_revision, write))


@pytest.fixture(params=["memory", "redis"])
async def lossy(
    request: pytest.FixtureRequest, fresh_redis: str
) -> AsyncIterator[tuple[GlintwickClient, Losses]]:
    """A server whose store loses the answers the test asks it to, and an SDK client."""
    store: GameStore
    if request.param == "memory":
        store = memory = LossyMemory()
        losses = memory.losses
    else:
        store = redis = LossyRedis(fresh_redis)
        losses = redis.losses
    options = ServerOptions(
        store=fresh_redis if request.param == "redis" else "memory",
        grpc_address="127.0.0.1:0",
        http_address="",
        sweep_seconds=0.1,
    )
    running = await start_server(options, store)
    client = GlintwickClient(f"127.0.0.1:{running.grpc_port}")
    try:
        yield client, losses
    finally:
        await client.close()
        await running.stop(grace=0.5)


async def test_the_sdk_join_through_a_lost_reply_ends_with_a_usable_seat(
    lossy: tuple[GlintwickClient, Losses],
) -> None:
    client, losses = lossy
    game = await client.create_game("whiskertrail", seats=2)
    losses.replies_lost = 1
    seat = await client.join(game.game_id, name="ann")  # (UNAVAILABLE, retried by the SDK)
    assert losses.lost == 1 and seat.seat == 0
    view = await seat.view()
    assert view.seat == 0 and len(view.hand) > 0
    # its retry took the seat the lost join had (not the next free one)
    joined = await client.game(game.game_id)
    assert [(s.joined, s.name) for s in joined.seat_info] == [(True, "ann"), (False, "")]
    other = await client.join(game.game_id, seat=1)
    assert (await other.view()).seat == 1 and (await seat.view()).seat == 0

    # without a request id (not the SDK: a bare stub) the same loss is SEAT_TAKEN
    second = await client.create_game("whiskertrail", seats=2)
    losses.replies_lost = 1
    with pytest.raises(CallError) as refused:
        await client.call(
            client.stub.JoinGame,
            pb.JoinGameRequest(game_id=second.game_id, seat=0),
            retry_on=(Code.UNAVAILABLE,),
        )
    assert (refused.value.code, refused.value.reason) == (Code.FAILED_PRECONDITION, "SEAT_TAKEN")


async def test_the_sdk_join_retried_after_its_deadline_ends_with_a_usable_seat(
    lossy: tuple[GlintwickClient, Losses],
) -> None:
    client, losses = lossy
    game = await client.create_game("whiskertrail", seats=2)
    rid = uuid.uuid4().hex
    losses.slow_replies = 3.0  # applied at once, answered past the call's deadline
    with client.deadline(0.5), pytest.raises(CallError) as late:
        await client.join(game.game_id, seat=1, request_id=rid)
    assert late.value.code is Code.DEADLINE_EXCEEDED and losses.lost == 1
    assert (await client.game(game.game_id)).seat_info[1].joined  # it landed
    seat = await client.join(game.game_id, seat=1, request_id=rid)
    assert seat.seat == 1 and (await seat.view()).seat == 1
    # a fresh join (the SDK's own new request id) of that seat is someone else's
    with pytest.raises(CallError) as taken:
        await client.join(game.game_id, seat=1)
    assert taken.value.reason == "SEAT_TAKEN"
    first = await client.join(game.game_id)
    assert first.seat == 0 and (await first.view()).seat == 0
