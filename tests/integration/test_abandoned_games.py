"""Abandoned games (docs/API.md, "Abandoned games") on both stores, on a fake clock: the
sweeper ends a game idle past its limit, once, with its event, and only such a game;
the record then expires like a finished one and the table leaves the lobby."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from engine.events import EventType
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services.api import Caller, GameService, ServiceConfig
from services.errors import ServiceError
from services.store.base import GameStore
from services.store.memory import MemoryStore
from services.store.redis import game_keys
from services.usecases.deadlines import Swept
from services.usecases.records import IDLE_STEPS, IdleLimits
from tests.integration.conftest import fresh_redis_store

ABANDON_AFTER = 600.0
UNJOINED_AFTER = 100.0
FINISHED_TTL = 60
# an idle deadline is rounded up to its limit's IDLE_STEPS-th: past it for sure (from 5
# seconds before the limit)
LATE = ABANDON_AFTER / IDLE_STEPS + 10


class Clock:
    def __init__(self) -> None:
        self.now = 2_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclasses.dataclass
class Setup:
    service: GameService
    clock: Clock
    store: GameStore
    redis_url: str | None


@pytest.fixture(params=["memory", "redis"])
async def setup(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[Setup]:
    clock = Clock()
    config = ServiceConfig(clock=clock, idle=IdleLimits(ABANDON_AFTER, UNJOINED_AFTER))
    if request.param == "memory":
        # (the memory store's expiry runs on the same fake clock)
        store = MemoryStore(finished_ttl=FINISHED_TTL, clock=clock)
        yield Setup(GameService(store, config), clock, store, None)
        return
    async with fresh_redis_store(redis_url) as redis_store:
        yield Setup(GameService(redis_store, config), clock, redis_store, redis_url)


def create(seats: int = 2, turn_seconds: int = 0) -> pb.CreateGameRequest:
    return pb.CreateGameRequest(
        rule_set_name="whiskertrail",
        seats=seats,
        seed=b"idle".hex(),
        deadlines=pb.Deadlines(turn_seconds=turn_seconds),
    )


async def full_game(service: GameService, turn_seconds: int = 0) -> tuple[str, list[Caller]]:
    game = await service.create_game(create(turn_seconds=turn_seconds), Caller())
    seats = []
    for _ in range(2):
        joined = await service.join_game(pb.JoinGameRequest(game_id=game.game_id), Caller())
        seats.append(Caller(token=joined.token))
    return game.game_id, seats


async def move(service: GameService, game_id: str, seats: list[Caller]) -> None:
    """The first legal action of the seat to act."""
    view = await service.get_view(pb.GetViewRequest(game_id=game_id), Caller())
    caller = seats[view.to_act[0]]
    legal = await service.list_legal_actions(pb.ListLegalActionsRequest(game_id=game_id), caller)
    request = pb.SubmitActionRequest(
        game_id=game_id, expected_version=legal.version, action=legal.actions[0]
    )
    await service.submit_action(request, caller)


async def log_of(store: GameStore, game_id: str) -> list[spb.LogEntry]:
    return [spb.LogEntry.FromString(i.entry) for i in await store.read_log(game_id, 0)]


async def lobby(service: GameService) -> list[str]:
    listed = await service.list_open_games(pb.ListOpenGamesRequest(), Caller())
    return [g.game_id for g in listed.games]


async def key_ttl(setup: Setup, game_id: str) -> int:
    assert setup.redis_url is not None
    client = aioredis.Redis.from_url(setup.redis_url)
    try:
        return int(await client.ttl(game_keys(game_id)[0]))
    finally:
        await client.aclose()


async def test_an_idle_game_ends_abandoned_once_and_expires(setup: Setup) -> None:
    service, clock = setup.service, setup.clock
    game_id, seats = await full_game(service)
    await move(service, game_id, seats)
    clock.now += ABANDON_AFTER - 1
    assert await service.expire_deadlines() == Swept()
    assert not (await service.get_view(pb.GetViewRequest(game_id=game_id), Caller())).game_over
    if setup.redis_url is not None:
        assert await key_ttl(setup, game_id) == -1  # an unfinished game never expires

    clock.now += LATE
    swept = await asyncio.gather(service.expire_deadlines(), service.expire_deadlines())
    assert sum(s.abandoned for s in swept) == 1 and not any(s.actions for s in swept)

    view = await service.get_view(pb.GetViewRequest(game_id=game_id), seats[0])
    assert view.game_over and view.abandoned and list(view.winners) == []
    assert view.version == 2 and view.phase == pb.PHASE_GAME_OVER and view.seed
    entries = await log_of(setup.store, game_id)
    assert [e.abandoned for e in entries] == [False, True]
    assert [e.type for e in entries[-1].events] == [EventType.GAME_ABANDONED]
    assert not entries[-1].HasField("action")
    assert await setup.store.due_deadlines(clock.now + 10**6) == []
    assert await setup.store.games_in_play() == 0

    replay = await service.get_replay(pb.GetReplayRequest(game_id=game_id), Caller())
    assert replay.abandoned and len(replay.steps) == 1 and list(replay.winners) == []
    assert [e.type for e in convert.replay_events(replay)][-1] == EventType.GAME_ABANDONED

    if setup.redis_url is not None:
        assert 0 < await key_ttl(setup, game_id) <= FINISHED_TTL
    else:
        clock.now += FINISHED_TTL + 1
        # expired: its memory is freed by the next write, whoever's
        assert isinstance(setup.store, MemoryStore) and game_id in setup.store._games
        await service.create_game(create(), Caller())
        assert game_id not in setup.store._games
        assert await setup.store.load(game_id) is None


async def test_every_move_starts_the_idle_clock_again(setup: Setup) -> None:
    service, clock = setup.service, setup.clock
    game_id, seats = await full_game(service)
    for _ in range(4):
        clock.now += ABANDON_AFTER - 5
        await move(service, game_id, seats)
        await service.expire_deadlines()
    clock.now += ABANDON_AFTER - 5
    assert (await service.expire_deadlines()).abandoned == 0
    view = await service.get_view(pb.GetViewRequest(game_id=game_id), Caller())
    assert not view.game_over and view.version == 4
    clock.now += LATE
    assert (await service.expire_deadlines()).abandoned == 1


async def test_an_unjoined_table_ends_sooner_and_leaves_the_lobby(setup: Setup) -> None:
    service, clock = setup.service, setup.clock
    waiting = await service.create_game(create(), Caller())
    joined = await service.join_game(pb.JoinGameRequest(game_id=waiting.game_id), Caller())
    full, _ = await full_game(service)
    assert await lobby(service) == [waiting.game_id]

    clock.now += UNJOINED_AFTER + UNJOINED_AFTER / IDLE_STEPS + 1
    assert (await service.expire_deadlines()).abandoned == 1
    assert await lobby(service) == []
    view = await service.get_view(pb.GetViewRequest(game_id=waiting.game_id), Caller())
    assert view.abandoned and view.game_over and view.version == 1
    with pytest.raises(ServiceError) as refused:  # its free seat went with it
        await service.join_game(pb.JoinGameRequest(game_id=waiting.game_id), Caller())
    assert refused.value.reason == "GAME_OVER"
    fill = pb.FillWithBotsRequest(game_id=waiting.game_id, strategy="greedy")
    with pytest.raises(ServiceError) as not_filled:
        await service.fill_with_bots(fill, Caller(token=joined.token))
    assert not_filled.value.reason == "GAME_OVER"
    # the full table waits for its first move for the longer limit
    assert not (await service.get_view(pb.GetViewRequest(game_id=full), Caller())).game_over


async def test_a_join_restarts_the_unjoined_clock(setup: Setup) -> None:
    service, clock = setup.service, setup.clock
    game = await service.create_game(create(seats=3), Caller())
    clock.now += UNJOINED_AFTER - 5
    await service.join_game(pb.JoinGameRequest(game_id=game.game_id), Caller())
    clock.now += UNJOINED_AFTER - 5
    assert (await service.expire_deadlines()).abandoned == 0
    assert await lobby(service) == [game.game_id]
    clock.now += LATE
    assert (await service.expire_deadlines()).abandoned == 1


async def test_a_running_deadline_plays_on_but_nobody_moving_still_ends_it(setup: Setup) -> None:
    """Default actions are no moves for the idle clock; turn deadlines apply as before."""
    service, clock = setup.service, setup.clock
    game_id, _ = await full_game(service, turn_seconds=100)
    swept = []
    for _ in range(int(ABANDON_AFTER // 100)):
        clock.now += 100
        swept.append(await service.expire_deadlines())
    assert all(s.actions >= 1 and not s.abandoned for s in swept)
    entries = await log_of(setup.store, game_id)
    assert entries and all(e.by_deadline for e in entries)
    clock.now += LATE
    assert (await service.expire_deadlines()).abandoned == 1
    assert (await log_of(setup.store, game_id))[-1].abandoned


async def test_a_game_played_against_its_deadlines_is_never_abandoned(setup: Setup) -> None:
    service, clock = setup.service, setup.clock
    game_id, seats = await full_game(service, turn_seconds=100)
    for _ in range(int(3 * ABANDON_AFTER // 30)):
        clock.now += 30
        await move(service, game_id, seats)
        assert (await service.expire_deadlines()).abandoned == 0
    entries = await log_of(setup.store, game_id)
    assert len(entries) >= 60 and not any(e.abandoned for e in entries)
    assert not (await service.get_view(pb.GetViewRequest(game_id=game_id), Caller())).game_over


async def test_zero_limits_keep_games_for_ever() -> None:
    clock = Clock()
    config = ServiceConfig(clock=clock, idle=IdleLimits(0, 0))
    service = GameService(MemoryStore(clock=clock), config)
    game = await service.create_game(create(), Caller())
    clock.now += 10**7
    assert (await service.expire_deadlines()).abandoned == 0
    assert await service.store.due_deadlines(clock.now) == []
    assert not (await service.get_view(pb.GetViewRequest(game_id=game.game_id), Caller())).game_over


async def test_a_watcher_gets_the_event_and_its_stream_ends(setup: Setup) -> None:
    service, clock = setup.service, setup.clock
    game_id, seats = await full_game(service)
    stream = await service.watch_game(pb.WatchGameRequest(game_id=game_id), seats[1])
    received: list[pb.WatchGameResponse] = []

    async def watch() -> None:
        async for item in stream:
            received.append(item)

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.2)
    clock.now += ABANDON_AFTER + LATE
    assert (await service.expire_deadlines()).abandoned == 1
    async with asyncio.timeout(10):
        await task  # the stream ends after the game's last event
    last = received[-1].event
    assert last.type == pb.EVENT_TYPE_GAME_ABANDONED and last.version == 1
    assert list(last.game_abandoned.scores) == [0, 0] and last.game_abandoned.round == 1
