"""The bot-turn index as the service keeps it (in process, the embedded store): a game
is listed exactly while a house-bot seat may act, whichever write got it there."""

from __future__ import annotations

import argparse
import dataclasses
import random
from types import SimpleNamespace
from typing import Any

import pytest

from clients.bots import BOTS
from engine.game import GameState
from engine.rulesets import WHISKERTRAIL
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services.api import Caller, GameService, ServiceConfig
from services.config import ServerOptions, add_arguments, options_from
from services.errors import ServiceError
from services.server import bot_pool_wanted
from services.store.memory import MemoryStore

SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])
OPERATOR = Caller(token="operator-unit")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def make_service(clock: Clock | None = None) -> GameService:
    config = ServiceConfig(
        operator_token=OPERATOR.token,
        house_bots=frozenset(BOTS),
        default_house_bot="greedy",
        clock=clock or Clock(),
    )
    return GameService(MemoryStore(), config)


def request(
    seats: int, seed: bytes, bots: dict[int, str], turn_seconds: int = 0
) -> pb.CreateGameRequest:
    return pb.CreateGameRequest(
        custom_rule_set=convert.rules_to_pb(SHORT),
        seats=seats,
        seed=seed.hex(),
        bots=bots,
        deadlines=pb.Deadlines(turn_seconds=turn_seconds),
    )


def first_to_act(seats: int, seed: bytes) -> int:
    return GameState.new_game(SHORT, seats, seed).to_act[0]


async def listed(service: GameService) -> list[tuple[str, int, str, int]]:
    response = await service.list_bot_turns(pb.ListBotTurnsRequest(), OPERATOR)
    return [(t.game_id, t.seat, t.strategy, t.version) for t in response.turns]


async def act(
    service: GameService, game_id: str, caller: Caller, seat: int | None, pick: int = 0
) -> None:
    """Submit a legal action (the ``pick``-th, wrapped) for the caller (naming ``seat``)."""
    legal_request = pb.ListLegalActionsRequest(game_id=game_id)
    if seat is not None:
        legal_request.seat = seat
    legal = await service.list_legal_actions(legal_request, caller)
    submit = pb.SubmitActionRequest(
        game_id=game_id,
        expected_version=legal.version,
        request_id=f"r{legal.version}",
        action=legal.actions[pick % len(legal.actions)],
    )
    if seat is not None:
        submit.seat = seat
    await service.submit_action(submit, caller)


async def test_bots_wait_for_a_full_table_then_are_listed_while_they_may_act() -> None:
    service = make_service()
    seed = b"index-1"
    first = first_to_act(3, seed)
    human = (first + 1) % 3
    bots = {s: "random" for s in range(3) if s != human}
    game = await service.create_game(request(3, seed, bots), Caller())
    assert [s.bot for s in game.seat_info] == [bots.get(s, "") for s in range(3)]
    assert await listed(service) == []  # the human seat is still empty
    joined = await service.join_game(pb.JoinGameRequest(game_id=game.game_id, name="ann"), Caller())
    assert joined.seat == human
    assert await listed(service) == [(game.game_id, first, "random", 0)]
    # the operator plays the bot's turn; listed again while that seat may still act
    for version in range(1, 20):
        await act(service, game.game_id, OPERATOR, first)
        state = (await service.load(game.game_id)).state
        if first not in state.to_act:
            break
        assert await listed(service) == [(game.game_id, first, "random", version)]
    else:
        pytest.fail("the bot's turn never ended")
    assert state.to_act == (human,)  # whiskertrail: no claim window, the next seat's turn
    assert await listed(service) == []
    me = Caller(token=joined.token)
    while (await service.load(game.game_id)).state.to_act == (human,):
        await act(service, game.game_id, me, None, pick=-1)
    assert [t[1] for t in await listed(service)] == [(human + 1) % 3]


async def test_fill_with_bots_completes_the_table() -> None:
    service = make_service()
    seed = b"fill"
    game = await service.create_game(request(4, seed, {}), Caller())
    joined = await service.join_game(
        pb.JoinGameRequest(game_id=game.game_id, seat=first_to_act(4, seed) ^ 1, name="ann"),
        Caller(),
    )
    me = Caller(token=joined.token)
    with pytest.raises(ServiceError) as refused:
        await service.fill_with_bots(pb.FillWithBotsRequest(game_id=game.game_id), Caller())
    assert refused.value.reason == "BAD_TOKEN"  # only a seated player fills the table
    with pytest.raises(ServiceError) as refused:
        await service.fill_with_bots(
            pb.FillWithBotsRequest(game_id=game.game_id, strategy="nope"), me
        )
    assert refused.value.reason == "UNKNOWN_BOT"
    filled = await service.fill_with_bots(pb.FillWithBotsRequest(game_id=game.game_id), me)
    expected = ["" if s == joined.seat else "greedy" for s in range(4)]
    assert [s.bot for s in filled.seat_info] == expected
    assert all(s.joined for s in filled.seat_info)
    assert [t[1:3] for t in await listed(service)] == [(first_to_act(4, seed), "greedy")]
    again = await service.fill_with_bots(
        pb.FillWithBotsRequest(game_id=game.game_id, strategy="random"), me
    )
    assert again == filled  # idempotent: the table was full already


async def test_deadline_actions_keep_the_index() -> None:
    clock = Clock()
    service = make_service(clock)
    seed = b"deadline"
    human = first_to_act(2, seed)
    game = await service.create_game(
        request(2, seed, {1 - human: "greedy"}, turn_seconds=5), Caller()
    )
    await service.join_game(pb.JoinGameRequest(game_id=game.game_id), Caller())
    assert await listed(service) == []
    clock.now += 6
    assert (await service.expire_deadlines()).actions == 2  # the human's default draw and discard
    assert [t[1] for t in await listed(service)] == [1 - human]


async def test_a_bots_only_game_is_listed_until_it_ends() -> None:
    service = make_service()
    rng = random.Random(3)
    games = [
        await service.create_game(
            request(2, f"solo{i}".encode(), {0: "random", 1: "random"}), Caller()
        )
        for i in range(2)
    ]
    ids = {g.game_id for g in games}
    steps = 0
    while turns := await listed(service):
        assert {t[0] for t in turns} <= ids
        game_id, seat, _, version = rng.choice(turns)
        loaded = await service.load(game_id)
        assert loaded.version == version and seat in loaded.state.to_act
        await act(service, game_id, OPERATOR, seat, pick=rng.randrange(1000))
        steps += 1
        assert steps < 5000
    for game_id in ids:
        assert (await service.load(game_id)).state.is_terminal()
    assert await service.store.bot_turns() == []
    # longest waiting first; every move re-queues its game behind those waiting longer
    older = await service.create_game(request(2, b"a", {0: "random", 1: "random"}), Caller())
    newer = await service.create_game(request(2, b"b", {0: "random", 1: "random"}), Caller())
    assert [t[0] for t in await listed(service)] == [older.game_id, newer.game_id]
    await act(service, older.game_id, OPERATOR, first_to_act(2, b"a"))
    assert [t[0] for t in await listed(service)] == [newer.game_id, older.game_id]
    # a worker's claim hides its turns from the others until the game moves
    claim = pb.ListBotTurnsRequest(limit=1, lease_seconds=60)
    claimed = await service.list_bot_turns(claim, OPERATOR)
    assert [t.game_id for t in claimed.turns] == [newer.game_id]
    assert [t[0] for t in await listed(service)] == [older.game_id]
    await act(service, newer.game_id, OPERATOR, claimed.turns[0].seat)
    assert [t[0] for t in await listed(service)] == [older.game_id, newer.game_id]


@pytest.mark.parametrize(
    ("argv", "env", "wanted"),
    [
        ([], {}, True),
        (["--store", "redis://127.0.0.1:1/0"], {}, False),
        (["--store", "redis://127.0.0.1:1/0", "--bot-pool", "on"], {}, True),
        (["--bot-pool", "off"], {}, False),
        ([], {"GLINTWICK_BOT_POOL": "off"}, False),
        (["--no-bots", "--bot-pool", "on"], {}, False),
    ],
)
def test_serve_runs_the_pool_in_process_with_the_embedded_store_by_default(
    argv: list[str], env: dict[str, str], wanted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GLINTWICK_BOT_POOL", "GLINTWICK_STORE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert bot_pool_wanted(options_from(parser.parse_args(argv))) is wanted


async def test_a_turn_leased_while_its_game_has_a_move_in_flight_is_played_next() -> None:
    """The pool's bookkeeping alone (a fake client is enough): a turn listed for a game
    whose previous move is still awaiting its answer is played right after that move,
    not left to wait out the lease it was just given."""
    import asyncio

    from clients.botpool import BotPool

    class Listing:
        target = "fake"
        version = 0

        async def bot_turns(
            self, token: str, limit: int = 0, *, lease_seconds: int = 0
        ) -> list[pb.BotTurn]:
            self.version += 1
            return [pb.BotTurn(game_id="g", seat=0, strategy="greedy", version=self.version)]

    # (the unary transport's bookkeeping: a play-stream pool subscribes seats instead)
    pool = BotPool(Listing(), "token", concurrency=2, transport="unary")  # type: ignore[arg-type]
    played: list[int] = []
    answer = asyncio.Event()

    async def play(turn: pb.BotTurn) -> None:
        played.append(turn.version)
        if turn.version == 1:
            await answer.wait()  # the first move awaits the server's answer

    pool._play = play  # type: ignore[method-assign]
    await pool._fill()  # version 1 starts
    await asyncio.sleep(0)
    await pool._fill()  # version 2 is listed (and leased) while 1 is in flight
    await asyncio.sleep(0)
    assert played == [1]
    answer.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert played == [1, 2]
    assert not pool._inflight and not pool._pending


async def test_house_bots_are_the_cheap_fair_bots_unless_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``glintwick serve`` hands the service the house bots it may seat: by default the
    cheap fair ones, else the registered bots --house-bots names."""
    from glintwick_cli import build_parser, with_house_bots

    def serving(*argv: str) -> ServerOptions:
        return with_house_bots(options_from(build_parser().parse_args(["serve", *argv])))

    monkeypatch.delenv("GLINTWICK_HOUSE_BOTS", raising=False)
    options = serving()
    allowed = options.house_bots
    assert allowed == frozenset({"random", "greedy", "strong", "expert", "best"})
    assert options.default_house_bot == "greedy"
    service = GameService(MemoryStore(), ServiceConfig(house_bots=allowed))
    request = pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2, bots={1: "montecarlo"})
    with pytest.raises(ServiceError) as caught:
        await service.create_game(request, Caller())
    assert caught.value.reason == "UNKNOWN_BOT"
    wider = serving("--house-bots", "greedy,montecarlo").house_bots
    assert wider is not None and "montecarlo" in wider
    game = await GameService(MemoryStore(), ServiceConfig(house_bots=wider)).create_game(
        request, Caller()
    )
    assert game.seat_info[1].bot == "montecarlo"
    monkeypatch.setenv("GLINTWICK_HOUSE_BOTS", "random")
    assert serving().house_bots == frozenset({"random"})
    with pytest.raises(ValueError, match="unknown bot 'nobody'"):
        serving("--house-bots", "greedy,nobody")


async def test_a_play_stream_pool_acts_on_a_prompt_only_with_the_lease_of_its_version() -> None:
    """The play transport's bookkeeping (no server): a prompt is played when the worker
    holds the lease of that very version; a prompt not leased makes it list at once; a
    lease the game has moved past is dropped, never acted on."""
    import asyncio
    import time
    from types import SimpleNamespace

    from clients.botpool import BotPool

    pool = BotPool(SimpleNamespace(target="fake"), "token", lease_seconds=10)  # type: ignore[arg-type]
    played: list[tuple[str, int]] = []

    async def play(prompt: Any, strategy: str) -> None:
        played.append((prompt.seat.game_id, prompt.version))

    pool._play_prompt = play  # type: ignore[method-assign]

    def prompted(game_id: str, version: int) -> None:
        seat = SimpleNamespace(game_id=game_id, seat=0)
        pool._seats[(game_id, 0)] = (seat, "greedy")  # type: ignore[assignment]
        pool._prompts[(game_id, 0)] = SimpleNamespace(seat=seat, version=version)  # type: ignore[assignment]
        pool._match((game_id, 0))

    prompted("a", 3)  # no lease yet: not played, the lister is woken
    assert pool._wake.is_set() and not played
    pool._wake.clear()
    pool._leases[("a", 0)] = (pb.BotTurn(game_id="a", seat=0, version=3), time.monotonic() + 10)
    pool._match(("a", 0))
    await asyncio.sleep(0)
    assert played == [("a", 3)] and ("a", 0) not in pool._leases
    await asyncio.sleep(0)  # (its move done: the game is free again)
    pool._leases[("b", 0)] = (pb.BotTurn(game_id="b", seat=0, version=4), time.monotonic() + 10)
    prompted("b", 6)  # the game moved on past the lease: dropped, listed again
    await asyncio.sleep(0)
    assert played == [("a", 3)] and ("b", 0) not in pool._leases and pool._wake.is_set()


@pytest.mark.parametrize(
    ("code", "open_session", "counted"),
    [
        ("CANCELLED", False, "races"),  # the stream ended with the game: a race lost
        ("INVALID_ARGUMENT", False, "races"),  # the server had no session of the seat
        ("CANCELLED", True, "errors"),  # the seat's session still open: a failure
        ("INVALID_ARGUMENT", True, "refused"),
    ],
)
async def test_an_act_whose_session_ended_with_its_game_is_a_race_lost(
    code: str, open_session: bool, counted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers race for a turn; the other's move ends the game, and with it every
    session of this worker's stream, so this act meets an ended session (CANCELLED from
    the SDK, or INVALID_ARGUMENT from the server): a lost race, as an ABORTED one is,
    not an error (a CI run counted it as one)."""
    import grpc

    from clients.botpool import BotPool
    from clients.sdk import CallError

    pool = BotPool(SimpleNamespace(target="fake"), "token")  # type: ignore[arg-type]
    seat = SimpleNamespace(game_id="g", seat=1)

    async def act(action: Any, request_id: str) -> int:
        status = getattr(grpc.StatusCode, code)
        raise CallError(status, code, "session closed")

    async def bot(turn: Any) -> Any:
        return SimpleNamespace(name="fake")

    pool._bot = bot  # type: ignore[method-assign]
    monkeypatch.setattr("clients.table.wire_choice", lambda *_: pb.Action())  # (its choice)
    prompt = SimpleNamespace(
        seat=seat,
        version=7,
        legal_actions=[pb.Action()],
        view=pb.View(),
        act=act,
        session=SimpleNamespace(is_open=lambda seat: open_session),
    )
    await pool._play_prompt(prompt, "greedy")  # type: ignore[arg-type]
    counts = {"races": pool.stats.races, "errors": pool.stats.errors, "refused": pool.stats.refused}
    assert counts == {name: int(name == counted) for name in counts}
