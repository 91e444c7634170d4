"""A Redis outage under a running server: calls answer UNAVAILABLE with the reason
``STORE_UNAVAILABLE``, health says NOT_SERVING (gRPC and ``/healthz``) and SERVING
again once Redis is back, with no restart, and the log has one line per change.

Real processes: a redis-server that the test stops (SIGTERM, SIGKILL), freezes
(SIGSTOP) and restarts on the same port, with an append-only file in a temporary
directory so that the games outlive a restart; and ``glintwick serve`` over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2
from grpc_status import rpc_status

from clients.sdk import CallError, GlintwickClient, RetryPolicy, Seat
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from glintwick_cli import start_server
from loadtests.processes.redis import RedisProcess
from loadtests.processes.server import ServerProcess
from services.config import ServerOptions
from services.server import LIVENESS_SERVICE, SERVICE_NAME
from services.store.base import WHOLE, Snapshot, StoreUnavailableError, Write
from services.store.health import MonitoredStore, StoreMonitor, redacted
from services.store.memory import MemoryStore
from services.store.redis import RedisStore
from tests.e2e.support import health_status, until

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
# how long health may take to follow the store (a probe a second, 2 s probe deadline)
HEALTH_FOLLOWS = 10.0
# how long a `glintwick serve` process may take to start on a busy machine
STARTS = 30.0
PASSWORD = "outage-test-secret"


@contextlib.contextmanager
def redis(tmp_path: Path, *, started: bool = True, password: str = "") -> Iterator[RedisProcess]:
    """A redis-server on a fixed port, stopped and restarted by the test (AOF, fsync on
    every write: even a SIGKILL keeps every acknowledged game); SIGKILLed at the end."""
    store = RedisProcess(tmp_path / "redis", "always", password=password)
    if started:
        store.start()
    try:
        yield store
    finally:
        store.kill()


def serve(store_url: str, tmp_path: Path) -> ServerProcess:
    """``glintwick serve`` over ``store_url`` in its own process (HTTP too), its JSON log
    lines in a file; as a context manager, started until it serves, then stopped."""
    return ServerProcess(tmp_path, "--no-bots", store=store_url, http=True)


async def wait_health(
    served: ServerProcess, wanted: int, service: str = "", timeout: float = HEALTH_FOLLOWS
) -> None:
    deadline = time.monotonic() + timeout
    last: object = None
    async with grpc.aio.insecure_channel(served.address) as channel:
        while time.monotonic() < deadline:
            assert served.poll() is None, served.text()
            try:
                last = await health_status(channel, service)
                if last == wanted:
                    return
            except grpc.aio.AioRpcError as exc:
                last = exc.code()
            await asyncio.sleep(0.1)
    raise AssertionError(f"health of {service!r} is {last}, not {wanted}: {served.text()}")


@contextlib.asynccontextmanager
async def client(served: ServerProcess, timeout: float = 5.0) -> AsyncIterator[GlintwickClient]:
    """A client that tries each call once (the test looks at each answer)."""
    made = GlintwickClient(served.address, retry=RetryPolicy(attempts=1, timeout=timeout))
    try:
        yield made
    finally:
        await made.close()


async def play_one_move(
    seats: list[Seat], request_id: str | None = None
) -> pb.SubmitActionResponse:
    """The first legal action of the seat to act."""
    view = await seats[0].view()
    mover = seats[view.to_act[0]]
    actions = await mover.legal_actions()
    return await mover.act(actions[0], request_id=request_id)


async def http_get(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.json(content_type=None)


def assert_store_unavailable(error: CallError) -> None:
    assert error.code is grpc.StatusCode.UNAVAILABLE, error
    assert error.reason == "STORE_UNAVAILABLE", error


def assert_unavailable_status(exc: grpc.aio.AioRpcError) -> None:
    """UNAVAILABLE with ErrorInfo STORE_UNAVAILABLE and a RetryInfo delay, read from the
    status details as a client in any language would."""
    assert exc.code() is grpc.StatusCode.UNAVAILABLE, exc
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    assert status is not None, exc
    reasons, delays = [], []
    for detail in status.details:
        info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            reasons.append(info.reason)
        elif detail.Unpack(retry):
            delays.append(retry.retry_delay.ToTimedelta().total_seconds())
    assert reasons == ["STORE_UNAVAILABLE"] and delays and delays[0] > 0, status


def assert_quiet(served: ServerProcess) -> None:
    """No traceback, and no failure line other than the outage's own."""
    text = served.text()
    assert "Traceback" not in text, text
    for line in served.lines():
        assert "exception" not in line, line
        if line.get("level") == "error":
            assert line["event"] == "store_unavailable", line


# --------------------------------------------------------------------------- stopped


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_a_stopped_redis_is_unavailable_and_health_follows_it_back(
    tmp_path: Path, signum: int
) -> None:
    with redis(tmp_path) as store, serve(store.url, tmp_path) as served:
        await wait_health(served, SERVING, timeout=STARTS)
        async with client(served) as sdk:
            game = await sdk.create_game("whiskertrail", seats=2, seed=b"outage")
            seats = [await sdk.join(game.game_id, seat=s, name=f"p{s}") for s in range(2)]
            first = await play_one_move(seats)
            channel = grpc.aio.insecure_channel(served.address)
            stub = pb_grpc.GameServiceStub(channel)
            watch = stub.WatchGame(pb.WatchGameRequest(game_id=game.game_id), timeout=60)
            opening = await watch.read()
            assert isinstance(opening, pb.WatchGameResponse) and opening.HasField("snapshot")

            if signum == signal.SIGTERM:
                store.stop()
            else:
                store.kill()
            # an open watch ends UNAVAILABLE (the SDK reconnects from where it was)
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                await asyncio.wait_for(watch.read(), HEALTH_FOLLOWS)
            assert_unavailable_status(ended.value)
            with pytest.raises(grpc.aio.AioRpcError) as raw:
                await stub.GetGame(pb.GetGameRequest(game_id=game.game_id), timeout=5)
            assert_unavailable_status(raw.value)
            await channel.close()
            for service in ("", SERVICE_NAME):
                await wait_health(served, NOT_SERVING, service)
            await wait_health(served, SERVING, LIVENESS_SERVICE)  # alive: no restart wanted
            status, body = await http_get(f"{served.http_url}/healthz")
            assert status == 503
            assert body["code"] == "UNAVAILABLE" and body["reason"] == "STORE_UNAVAILABLE"

            # every call that needs the store, many times over: UNAVAILABLE, no log line
            for _ in range(10):
                with pytest.raises(CallError) as refused:
                    await sdk.game(game.game_id)
                assert_store_unavailable(refused.value)
                with pytest.raises(CallError) as refused:
                    await play_one_move(seats)
                assert_store_unavailable(refused.value)
                with pytest.raises(CallError) as refused:
                    await sdk.create_game("whiskertrail", seats=2)
                assert_store_unavailable(refused.value)
            game_url = f"{served.http_url}/v1/games/{game.game_id}"
            async with aiohttp.ClientSession() as session, session.get(game_url) as response:
                body = await response.json()
                assert response.status == 503 and body["reason"] == "STORE_UNAVAILABLE"
                assert int(response.headers["Retry-After"]) >= 1
            await sdk.ping()  # what needs no store still answers
            await asyncio.sleep(1.5)  # (the sweeper would have failed six times by now)

            store.start()
            for service in ("", SERVICE_NAME):
                await wait_health(served, SERVING, service)
            status, body = await http_get(f"{served.http_url}/healthz")
            assert (status, body) == (200, {"status": "SERVING"})
            again = await sdk.game(game.game_id)
            assert again.version == first.version  # the game is where it was
            second = await play_one_move(seats)
            assert second.version == first.version + 1

    assert len(served.events("store_unavailable")) == 1, served.text()
    (down,) = served.events("store_unavailable")
    assert down["store"] == store.url and down["error"]
    assert len(served.events("store_available")) == 1, served.text()
    assert_quiet(served)


# --------------------------------------------------------------------------- frozen


async def test_a_frozen_redis_answers_within_the_deadline_and_a_retry_is_applied_once(
    tmp_path: Path,
) -> None:
    with redis(tmp_path) as store, serve(store.url, tmp_path) as served:
        await wait_health(served, SERVING, timeout=STARTS)
        async with client(served, timeout=5.0) as sdk:
            game = await sdk.create_game("whiskertrail", seats=2, seed=b"frozen")
            seats = [await sdk.join(game.game_id, seat=s, name=f"p{s}") for s in range(2)]
            before = await play_one_move(seats)
            view = await seats[0].view()
            mover = seats[view.to_act[0]]
            action = (await mover.legal_actions())[0]

            store.freeze()
            started = time.monotonic()
            with pytest.raises(CallError) as refused:
                await mover.act(action, request_id="frozen-move")
            assert refused.value.code in (
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.DEADLINE_EXCEEDED,
            ), refused.value
            assert time.monotonic() - started < 6.0  # (the call's own deadline is 5 s)
            await wait_health(served, NOT_SERVING)
            started = time.monotonic()
            with pytest.raises(CallError) as refused:
                await sdk.game(game.game_id)
            assert_store_unavailable(refused.value)  # judged down: at once
            assert time.monotonic() - started < 2.0

            store.thaw()
            await wait_health(served, SERVING)
            # the frozen move may have landed when Redis woke: the same request id is
            # applied once whatever happened
            retried = await mover.act(
                action, request_id="frozen-move", expected_version=before.version
            )
            assert retried.version == before.version + 1
            replayed = await mover.act(
                action, request_id="frozen-move", expected_version=before.version
            )
            assert replayed == retried
            assert (await sdk.game(game.game_id)).version == before.version + 1
    assert len(served.events("store_unavailable")) == 1, served.text()
    assert_quiet(served)


# --------------------------------------------------------------------------- start-up


async def test_serve_without_its_store_says_so_and_waits_not_serving(tmp_path: Path) -> None:
    with (
        redis(tmp_path, started=False, password=PASSWORD) as store,
        serve(store.url, tmp_path) as served,
    ):
        await wait_health(served, NOT_SERVING, timeout=STARTS)
        await wait_health(served, SERVING, LIVENESS_SERVICE)
        (down,) = served.events("store_unavailable")
        assert down["store"] == f"redis://127.0.0.1:{store.port}/0"  # no password
        assert str(store.port) in down["error"]
        assert PASSWORD not in served.text()
        (serving,) = served.events("serving")
        assert serving["health"].startswith("NOT_SERVING")
        status, body = await http_get(f"{served.http_url}/healthz")
        assert status == 503 and body["reason"] == "STORE_UNAVAILABLE"
        async with client(served) as sdk:
            with pytest.raises(CallError) as refused:
                await sdk.create_game("whiskertrail", seats=2)
            assert_store_unavailable(refused.value)

            store.start()
            await wait_health(served, SERVING)
            game = await sdk.create_game("whiskertrail", seats=2)
            assert game.game_id
    assert_quiet(served)


# --------------------------------------------------------------------------- lost reply


class ReplyLostOnce(RedisStore):
    """Redis applies the first move's write, then the connection drops before the reply."""

    lost = False

    async def commit(self, game_id: str, expected_revision: int, write: Write) -> bool:
        written = await super().commit(game_id, expected_revision, write)
        if write.idempotency_key is not None and not self.lost:
            self.lost = True
            raise StoreUnavailableError("Connection closed by server.", write=True)
        return written


async def test_a_write_whose_reply_is_lost_is_unavailable_and_its_retry_is_applied_once(
    fresh_redis: str,
) -> None:
    options = ServerOptions(
        store=fresh_redis, grpc_address="127.0.0.1:0", http_address="", sweep_seconds=0.1
    )
    running = await start_server(options, ReplyLostOnce(fresh_redis))
    sdk = GlintwickClient(f"127.0.0.1:{running.grpc_port}", retry=RetryPolicy(attempts=1))
    try:
        game = await sdk.create_game("whiskertrail", seats=2, seed=b"lost reply")
        seats = [await sdk.join(game.game_id, seat=s, name=f"p{s}") for s in range(2)]
        view = await seats[0].view()
        mover = seats[view.to_act[0]]
        action = (await mover.legal_actions())[0]
        with pytest.raises(CallError) as refused:
            await mover.act(action, expected_version=0, request_id="lost-reply")
        assert_store_unavailable(refused.value)
        assert "same request_id" in refused.value.message
        # the client retries the same request (the SDK would: UNAVAILABLE is retried)
        retried = await mover.act(action, expected_version=0, request_id="lost-reply")
        assert retried.version == 1
        replayed = await mover.act(action, expected_version=0, request_id="lost-reply")
        assert replayed == retried
        assert (await sdk.game(game.game_id)).version == 1
        items = await running.service.store.read_log(game.game_id, 0)
        assert [item.version for item in items] == [1]
    finally:
        await sdk.close()
        await running.stop(grace=0.5)


# --------------------------------------------------------------------------- the monitor


class Flaky(MemoryStore):
    """A memory store whose reachability the test sets."""

    def __init__(self) -> None:
        super().__init__()
        self.down = ""  # the error while down
        self.pings = 0

    async def ping(self) -> bool:
        self.pings += 1
        if self.down:
            raise StoreUnavailableError(self.down)
        return True

    async def load(self, game_id: str) -> Snapshot | None:
        if self.down:
            raise StoreUnavailableError(self.down)
        return await super().load(game_id)


def test_a_store_url_is_logged_without_its_credentials() -> None:
    assert redacted("redis://:secret@redis:6379/0") == "redis://redis:6379/0"
    assert redacted("rediss://user:secret@[::1]:6380/2") == "rediss://[::1]:6380/2"
    assert redacted("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert redacted("unix:///run/redis.sock?db=1&password=secret") == "unix:///run/redis.sock?db=1"
    assert redacted("memory") == "memory"


async def test_the_monitor_judges_once_per_change_and_calls_fail_fast_while_down() -> None:
    inner = Flaky()
    monitor = StoreMonitor(inner, "flaky", interval=60, down_interval=60)
    changes: list[bool] = []

    async def listen(healthy: bool) -> None:
        changes.append(healthy)

    monitor.on_change(listen)
    store = MonitoredStore(inner, monitor)
    assert await monitor.probe() and changes == []
    assert await store.load("nothing") is None

    running = asyncio.create_task(monitor.run())
    try:
        await until(lambda: inner.pings == 2, "the loop's first probe")
        inner.down = "Connection refused."
        with pytest.raises(StoreUnavailableError):
            await store.load("nothing")  # a failed call wakes the monitor …
        await until(lambda: not monitor.healthy, "the store judged down")  # … at once
        assert changes == [False] and monitor.error == "Connection refused."
        assert not await store.ping()
        before = inner.pings
        for _ in range(3):
            with pytest.raises(StoreUnavailableError):
                await store.load("nothing")  # judged down: not even tried
        assert inner.pings == before and changes == [False]

        inner.down = ""
        assert await monitor.probe()
        assert changes == [False, True] and await store.ping()
        assert await store.load("nothing") is None
        await asyncio.wait_for(monitor.wait_available(), 1)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running


class Parted(MemoryStore):
    """A memory store of two parts, "a" and "b" (a game's part: its id's first
    letter), either of which the test takes down."""

    def __init__(self) -> None:
        super().__init__()
        self.parts_down: dict[str, str] = {}

    async def ping_parts(self) -> dict[str, str]:
        if len(self.parts_down) == 2:
            return {WHOLE: "no part answers"}
        return dict(self.parts_down)

    def part_of_game(self, game_id: str) -> str:
        return game_id[0]


async def test_a_store_of_parts_refuses_only_the_calls_of_a_part_down() -> None:
    inner = Parted()
    monitor = StoreMonitor(inner, "parted", interval=60, down_interval=60)
    changes: list[bool] = []

    async def listen(serving: bool) -> None:
        changes.append(serving)

    monitor.on_change(listen)
    store = MonitoredStore(inner, monitor)
    inner.parts_down = {"a": "a is down"}
    assert not await monitor.probe()
    assert await store.ping() and changes == []  # (serving: part b answers)
    assert await store.ping_parts() == {"a": "a is down"}
    with pytest.raises(StoreUnavailableError, match="a is down"):
        await store.load("a-game")
    assert await store.load("b-game") is None
    with pytest.raises(StoreUnavailableError):
        await store.open_games()  # (across parts: refused while any is down)
    inner.parts_down = {"a": "a is down", "b": "b is down"}
    await monitor.probe()
    assert not await store.ping() and changes == [False]
    with pytest.raises(StoreUnavailableError):
        await store.load("b-game")
    inner.parts_down = {}
    assert await monitor.probe()
    assert changes == [False, True] and await store.open_games() == []
    async with asyncio.timeout(1):
        await monitor.wait_available()
