"""Issue 19: limits on every call and quotas, through two replicas over one real Redis.

Every client here is told apart by ``x-forwarded-for`` (the servers trust the tests'
own address, 127.0.0.1, as a proxy): a flood from one client is refused
RESOURCE_EXHAUSTED / 429 RATE_LIMITED with a retry-after, wherever it lands, while
another client's game keeps playing (its latency is measured and printed, not
asserted: no timed tests); N replicas admit what one does (the cell is the store's);
the quotas refuse with their own reasons and are counted in the metrics.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import grpc
import pytest
import redis.asyncio as aioredis
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from engine.rulesets import PRESETS
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from services.config import Quotas, Rate, trusted_proxies
from services.usecases.quotas import PRUNE_SECONDS
from tests.e2e.conftest import StartServer
from tests.e2e.support import Env, Mirror, play_game

Code = grpc.StatusCode
LOCAL = trusted_proxies("127.0.0.1/32")
DRAW = pb.Action(draw=pb.Draw())


def headers(client: str, token: str | None = None) -> tuple[tuple[str, str], ...]:
    found = [("x-forwarded-for", client)]
    if token:
        found.append(("authorization", f"Bearer {token}"))
    return tuple(found)


def stub(env: Env) -> Any:
    """A raw stub of the aio channel (the SDK would retry what is refused here)."""
    return pb_grpc.GameServiceStub(grpc.aio.insecure_channel(env.target))


def refusal(exc: grpc.aio.AioRpcError) -> tuple[str, float | None]:
    """The ErrorInfo reason and the RetryInfo delay of a refusal (as any client reads them)."""
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    assert status is not None, exc
    reason, delay = "", None
    for detail in status.details:
        info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            reason = info.reason
        elif detail.Unpack(retry):
            delay = retry.retry_delay.ToTimedelta().total_seconds()
    return reason, delay


async def outcomes(calls: list[Awaitable[Any]]) -> list[grpc.aio.AioRpcError | None]:
    """Each call's refusal (None: answered, or refused for anything but a limit)."""

    async def one(call: Awaitable[Any]) -> grpc.aio.AioRpcError | None:
        try:
            await call
        except grpc.aio.AioRpcError as exc:
            if exc.code() is Code.RESOURCE_EXHAUSTED:
                return exc
        return None

    return list(await asyncio.gather(*(one(c) for c in calls)))


async def two_replicas(start_server: StartServer, **options: object) -> tuple[Env, Env]:
    first = await start_server("redis", trusted_proxies=LOCAL, **options)
    second = await start_server("redis", trusted_proxies=LOCAL, **options)
    return first, second


async def seated_game(env: Env, client: str) -> tuple[str, list[str]]:
    """A 2-seat whiskertrail game of ``client``'s, both seats joined: (id, tokens)."""
    api = stub(env)
    game = await api.CreateGame(
        pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2, seed=b"limits".hex()),
        metadata=headers(client),
    )
    tokens = []
    for seat in range(2):
        joined = await api.JoinGame(
            pb.JoinGameRequest(game_id=game.game_id, seat=seat, name=f"p{seat}"),
            metadata=headers(client),
        )
        tokens.append(joined.token)
    return game.game_id, tokens


# ------------------------------------------------------------------ a flood per call class

BURST = 6
# the calls of each class a flood sends (the client, the replica's stub, a game and its
# tokens), each class limited to 1/s with a burst of BURST
Flood = Callable[[Any, str, str, list[str]], Awaitable[Any]]
FLOODS: dict[str, Flood] = {
    "create": lambda api, who, gid, tokens: api.CreateGame(
        pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2), metadata=headers(who)
    ),
    "join": lambda api, who, gid, tokens: api.JoinGame(
        pb.JoinGameRequest(game_id=gid, seat=0), metadata=headers(who)
    ),
    "read": lambda api, who, gid, tokens: api.GetView(
        pb.GetViewRequest(game_id=gid), metadata=headers(who, tokens[0])
    ),
    "act": lambda api, who, gid, tokens: api.SubmitAction(
        pb.SubmitActionRequest(game_id=gid, expected_version=99, action=DRAW),
        metadata=headers(who, tokens[0]),
    ),
    "analyse": lambda api, who, gid, tokens: api.AnalyseHand(
        pb.AnalyseHandRequest(rule_set_name="whiskertrail", hand=["7H", "8H", "9H"]),
        metadata=headers(who),
    ),
    "stream": lambda api, who, gid, tokens: api.WatchGame(
        pb.WatchGameRequest(game_id=gid), metadata=headers(who)
    ).read(),
}


@pytest.mark.parametrize("call", list(FLOODS))
async def test_a_flood_of_each_call_class_is_refused_across_two_replicas(
    start_server: StartServer, call: str
) -> None:
    """40 calls at once, alternating between two replicas: the class's burst is admitted
    (plus what its rate refills meanwhile), not twice it; every other call is
    RESOURCE_EXHAUSTED with RATE_LIMITED and a retry-after; another client is not
    touched.  (The act class is --rate/--burst, per seat.)"""
    rate = Rate(1.0, BURST)
    options: dict[str, object] = (
        {"rate_per_second": 1.0, "rate_burst": BURST} if call == "act" else {"rates": {call: rate}}
    )
    first, second = await two_replicas(start_server, **options)
    gid, tokens = await seated_game(first, "198.51.100.1")
    apis = [stub(first), stub(second)]
    flooder = "203.0.113.66"
    started = time.monotonic()
    calls = [FLOODS[call](apis[i % 2], flooder, gid, tokens) for i in range(40)]
    refused = await outcomes(calls)
    elapsed = time.monotonic() - started
    admitted = sum(r is None for r in refused)
    # one cell for both replicas: the burst and the refill, never a burst per replica
    assert BURST <= admitted <= BURST + int(elapsed * rate.per_second) + 1, (admitted, elapsed)
    for exc in (r for r in refused if r is not None):
        reason, delay = refusal(exc)
        assert reason == "RATE_LIMITED", exc
        assert delay is not None and 0 < delay <= BURST / rate.per_second + 0.1, exc
    # another client (another address; for the calls keyed by a seat token, another
    # seat) has its own limit
    other = FLOODS[call](apis[1], "198.51.100.2", gid, tokens[::-1])
    assert (await outcomes([other])) == [None]
    print(f"\n{call}: {admitted} of 40 admitted in {elapsed:.2f} s (burst {BURST}, 1/s)")


async def test_a_refused_call_over_http_is_429_with_retry_after(
    start_server: StartServer,
) -> None:
    first, second = await two_replicas(start_server, rates={"create": Rate(0.5, 2)})
    statuses = []
    async with aiohttp.ClientSession() as http:
        for env in (first, second, first, second):
            async with http.post(
                f"{env.http}/v1/games",
                json={"ruleSetName": "whiskertrail", "seats": 2},
                headers={"X-Forwarded-For": "203.0.113.9"},
            ) as response:
                statuses.append(response.status)
                if response.status == 429:
                    body = await response.json()
                    assert body["code"] == "RESOURCE_EXHAUSTED"
                    assert body["reason"] == "RATE_LIMITED"
                    assert 1 <= int(response.headers["Retry-After"]) <= 4
    assert statuses == [200, 200, 429, 429]


# ------------------------------------------------------------------ who the client is


async def test_forwarded_for_is_believed_from_trusted_proxies_only(
    start_server: StartServer,
) -> None:
    """Behind a trusted proxy each forwarded client has its own limit; a server that
    trusts no proxy charges whoever connects (the header is anyone's to send)."""
    create = {"create": Rate(0.1, 2)}
    trusting = await start_server("memory", trusted_proxies=LOCAL, rates=create)
    trusting_none = await start_server("memory", rates=create)
    for env, expected in ((trusting, [None] * 6), (trusting_none, ["refused"] * 4)):
        api = stub(env)
        answers = []
        for client in ("203.0.113.1", "203.0.113.2", "203.0.113.3"):
            for _ in range(2):
                (exc,) = await outcomes([FLOODS["create"](api, client, "", [])])
                answers.append(exc)
        got = [None if a is None else "refused" for a in answers]
        assert got[-len(expected) :] == expected, got
    # a client cannot pose as another by sending the header through the proxy: the
    # proxy appends the address it saw, the rightmost untrusted hop is the client's
    api = stub(trusting)
    spoofed = [("x-forwarded-for", "203.0.113.1, 203.0.113.50")]
    (first,) = await outcomes(
        [api.CreateGame(pb.CreateGameRequest(rule_set_name="whiskertrail"), metadata=spoofed)]
    )
    assert first is None  # 203.0.113.50's own first create, not 203.0.113.1's third


# ------------------------------------------------------------------ a flood and a game


async def test_a_create_flood_leaves_redis_bounded_and_another_game_playing(
    start_server: StartServer, fresh_redis: str
) -> None:
    """Issue 19's flood (2,000 creates as fast as one client sends them) with the
    default limits on: refused past the create burst and the open-games quota, Redis's
    memory grows by the few games admitted, and another client keeps playing meanwhile
    (its calls' latency printed, during the flood and after)."""
    first, second = await two_replicas(start_server)
    redis = aioredis.Redis.from_url(fresh_redis)
    await redis.flushdb(asynchronous=False)  # (nothing stored yet: what earlier tests freed)
    before = int((await redis.info("memory"))["used_memory"])
    gid, tokens = await seated_game(first, "198.51.100.7")
    apis = [stub(first), stub(second)]
    flooder = "203.0.113.99"
    player_latency: list[float] = []
    quiet_latency: list[float] = []  # the same calls before the flood: the baseline

    async def flood() -> list[grpc.aio.AioRpcError | None]:
        refusals: list[grpc.aio.AioRpcError | None] = []
        for start in range(0, 2000, 100):
            batch = [
                FLOODS["create"](apis[i % 2], flooder, "", []) for i in range(start, start + 100)
            ]
            refusals += await outcomes(batch)
        return refusals

    async def play(until: asyncio.Task[Any] | None, into: list[float]) -> None:
        api = apis[1]
        for n in itertools.count():
            if (until is None or until.done()) and n >= 20:
                return
            started = time.perf_counter()
            view = await api.GetView(
                pb.GetViewRequest(game_id=gid), metadata=headers("198.51.100.7", tokens[0])
            )
            into.append(time.perf_counter() - started)
            assert view.game_id == gid
            await asyncio.sleep(0.01)

    await play(None, quiet_latency)
    started = time.monotonic()
    flooding = asyncio.create_task(flood())
    await play(flooding, player_latency)
    refused = await flooding
    elapsed = time.monotonic() - started
    after = int((await redis.info("memory"))["used_memory"])
    games = await first.running.service.store.games_in_play()
    admitted = sum(r is None for r in refused)
    reasons = {refusal(r)[0] for r in refused if r is not None}
    assert admitted <= Quotas().open_games, admitted  # the quota bounds what is stored
    assert games <= Quotas().open_games + 1
    assert reasons <= {"RATE_LIMITED", "QUOTA_OPEN_GAMES"} and reasons, reasons
    grown = after - before
    keys = await redis.dbsize()
    # what a refusal leaves behind: nothing (the admitted games' records, the indexes,
    # a few rate cells and sets); the flood's 2,000 games would be 2,000 records
    assert keys <= admitted + 20, (keys, admitted)
    assert grown < 8_000_000, grown
    await redis.aclose()
    latency, quiet = sorted(player_latency), sorted(quiet_latency)
    print(
        f"\ncreate flood: {len(refused)} sent in {elapsed:.2f} s, {admitted} admitted"
        f" ({sorted(reasons)}); Redis used_memory {before} -> {after} (+{grown} B), {keys}"
        f" keys, {games} games in play; the other client's GetView during the flood:"
        f" median {statistics.median(latency) * 1e3:.2f} ms, p90"
        f" {latency[int(len(latency) * 0.9)] * 1e3:.2f} ms over {len(latency)} calls (before"
        f" it: median {statistics.median(quiet) * 1e3:.2f} ms; servers, flood and client"
        " share this test's one event loop)"
    )


# ------------------------------------------------------------------ quotas


async def metric(env: Env, name: str) -> float:
    async with aiohttp.ClientSession() as http, http.get(f"{env.http}/metrics") as response:
        text = await response.text()
    found = 0.0
    for line in text.splitlines():
        if line.startswith("glintwick_limit_refusals_total{") and f'name="{name}"' in line:
            found += float(line.rsplit(" ", 1)[1])
    return found


async def test_open_games_per_client_and_games_in_play(start_server: StartServer) -> None:
    """A client's unfinished games are capped (QUOTA_OPEN_GAMES) across replicas, and
    the whole service's games in play (QUOTA_GAMES_IN_PLAY); both counted in the metrics."""
    first, second = await two_replicas(start_server, quotas=Quotas(open_games=3, games_in_play=5))
    apis = [stub(first), stub(second)]
    before = await metric(first, "QUOTA_OPEN_GAMES")
    mine = [FLOODS["create"](apis[i % 2], "203.0.113.5", "", []) for i in range(5)]
    refused = [r for r in await outcomes(mine) if r is not None]
    assert [refusal(r)[0] for r in refused] == ["QUOTA_OPEN_GAMES"] * 2
    assert await metric(first, "QUOTA_OPEN_GAMES") - before >= 1  # (per process: ≥ its share)
    # the service holds 3: two more clients' games reach 5, then nobody creates
    assert await outcomes([FLOODS["create"](apis[0], "203.0.113.6", "", []) for _ in range(2)]) == [
        None,
        None,
    ]
    (full,) = await outcomes([FLOODS["create"](apis[1], "203.0.113.7", "", [])])
    assert full is not None and refusal(full)[0] == "QUOTA_GAMES_IN_PLAY"
    assert refusal(full)[1] is not None  # with a retry-after


async def test_a_finished_game_stops_counting_towards_its_clients_open_games(
    start_server: StartServer,
) -> None:
    first, second = await two_replicas(start_server, quotas=Quotas(open_games=1))
    seed = b"quota end"
    game, seats = await first.new_game("whiskertrail", 2, seed)  # (the tests' own address)
    (refused,) = await outcomes([FLOODS["create"](stub(second), "127.0.0.1", "", [])])
    assert refused is not None and refusal(refused)[0] == "QUOTA_OPEN_GAMES"
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    await play_game(game.game_id, [seats], mirror, random.Random(19))
    await asyncio.sleep(PRUNE_SECONDS)  # (a full client's games are re-checked once a second)
    (admitted,) = await outcomes([FLOODS["create"](stub(second), "127.0.0.1", "", [])])
    assert admitted is None


async def test_watchers_per_game_and_streams_per_client(start_server: StartServer) -> None:
    """Open watches hold leases in the store: a game's watchers and a client's streams
    are capped across replicas, and a closed watch frees its place."""
    first, second = await two_replicas(
        start_server, quotas=Quotas(game_watchers=2, client_streams=3)
    )
    gid, _ = await seated_game(first, "198.51.100.3")
    apis = [stub(first), stub(second)]

    async def watch(api: Any, client: str, game_id: str) -> Any:
        call = api.WatchGame(pb.WatchGameRequest(game_id=game_id), metadata=headers(client))
        await call.read()  # the snapshot: the watch is open (and holds its leases)
        return call

    a = await watch(apis[0], "203.0.113.20", gid)
    b = await watch(apis[1], "203.0.113.21", gid)
    with pytest.raises(grpc.aio.AioRpcError) as third:
        await watch(apis[0], "203.0.113.22", gid)
    assert refusal(third.value)[0] == "QUOTA_GAME_WATCHERS"
    a.cancel()
    await asyncio.sleep(0.3)  # (the server sees the cancel and releases the lease)
    c = await watch(apis[0], "203.0.113.22", gid)
    # a client's streams: three games' watches, the fourth refused
    others = [(await seated_game(first, "198.51.100.4"))[0] for _ in range(3)]
    held = [await watch(apis[i % 2], "203.0.113.30", g) for i, g in enumerate(others)]
    extra_gid = (await seated_game(first, "198.51.100.4"))[0]
    with pytest.raises(grpc.aio.AioRpcError) as fourth:
        await watch(apis[1], "203.0.113.30", extra_gid)
    assert refusal(fourth.value)[0] == "QUOTA_CLIENT_STREAMS"
    for call in [b, c, *held]:
        call.cancel()


async def test_play_sessions_per_game_are_capped(start_server: StartServer) -> None:
    first, second = await two_replicas(start_server, quotas=Quotas(game_sessions=1))
    gid, tokens = await seated_game(first, "198.51.100.5")
    streams = []
    closed_reasons = []
    for env, token in ((first, tokens[0]), (second, tokens[1])):
        call = stub(env).Play(metadata=headers("203.0.113.40", token))
        await call.write(pb.PlayRequest(subscribe=pb.PlaySubscribe(game_id=gid)))
        message = await call.read()
        if message.HasField("closed"):
            closed_reasons.append(message.closed.error.reason)
        streams.append(call)
    assert closed_reasons == ["QUOTA_GAME_SESSIONS"]
    for call in streams:
        call.cancel()


async def test_the_load_generators_users_are_clients_of_their_own(
    start_server: StartServer,
) -> None:
    """Each locust user names an address of its own (x-forwarded-for, believed from a
    trusted load generator, as `make loadtest` starts the server): two users each hold
    their one open game where one address would hold one in all."""
    from types import SimpleNamespace

    from loadtests.grpc_user import LocustInterceptor, simulated_client_address

    env = await start_server("memory", trusted_proxies=LOCAL, quotas=Quotas(open_games=1))
    reported: list[dict[str, Any]] = []
    events = SimpleNamespace(request=SimpleNamespace(fire=lambda **k: reported.append(k)))
    request = pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2)

    def create(address: str | None) -> str:
        """CreateGame through a locust user's interceptor: "" or the refusal's reason."""
        interceptor = LocustInterceptor(SimpleNamespace(events=events), forwarded_for=address)  # type: ignore[arg-type]
        with grpc.insecure_channel(env.target) as channel:
            api = pb_grpc.GameServiceStub(grpc.intercept_channel(channel, interceptor))
            try:
                api.CreateGame(request, timeout=10)
                return ""
            except grpc.RpcError as exc:
                status = rpc_status.from_call(exc)  # type: ignore[arg-type]
                info = error_details_pb2.ErrorInfo()
                assert status is not None and status.details[0].Unpack(info), exc
                return str(info.reason)

    users = [simulated_client_address(), simulated_client_address()]
    assert users[0] != users[1]
    made = [await asyncio.to_thread(create, user) for user in [*users, users[0]]]
    assert made == ["", "", "QUOTA_OPEN_GAMES"]  # one each; the first user's second refused
    assert await asyncio.to_thread(create, None) == ""  # (the generator's own address)
    assert await asyncio.to_thread(create, None) == "QUOTA_OPEN_GAMES"
    assert len(reported) == 5  # every call reported to locust


async def test_the_sdk_waits_out_a_rate_limit_it_is_told_of(start_server: StartServer) -> None:
    """The SDK retries a RATE_LIMITED refusal after the server's retry-after (nothing
    was applied), and raises it, with its delay, when the delay is over its patience."""
    from clients.sdk import CallError, GlintwickClient, RetryPolicy

    env = await start_server("memory", rates={"create": Rate(2.0, 1)})
    async with GlintwickClient(env.target) as patient:
        started = time.monotonic()
        first = await patient.create_game("whiskertrail", seats=2)
        second = await patient.create_game("whiskertrail", seats=2)  # refused, then waited
        assert first.game_id != second.game_id
        assert time.monotonic() - started >= 0.3  # (it waited for the limit's next slot)
    impatient = GlintwickClient(env.target, retry=RetryPolicy(rate_limited_wait=0.01))
    async with impatient:
        with pytest.raises(CallError) as refused:
            for _ in range(3):
                await impatient.create_game("whiskertrail", seats=2)
    assert refused.value.reason == "RATE_LIMITED"
    assert refused.value.retry_after is not None and 0 < refused.value.retry_after <= 0.5
