"""Several replicas on one Redis, and on a Redis Cluster (``shared_store``): deadlines
fire exactly once with two sweepers running, and two server processes serve one game
alternately without a difference."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from clients.sdk import GlintwickClient, Seat, actions
from engine.game import GameState, Phase
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from loadtests.processes.server import ServerProcess
from services.api import GameService
from tests.e2e.conftest import SHARED_STORES_CLUSTER_SLOW, StartServer
from tests.e2e.support import Env, Mirror, health_status, play_game, race_writers


async def logged_steps(env: Env, game_id: str) -> list[spb.LogEntry]:
    """The game's action log, read from the store (the replay is only published at the end)."""
    items = await env.running.service.store.read_log(game_id, 0)
    entries = [spb.LogEntry.FromString(i.entry) for i in items]
    assert [i.version for i in items] == [e.version for e in entries]
    return entries


def check_default_actions(mirror: Mirror, entries: list[spb.LogEntry]) -> None:
    """The log is contiguous and every deadline step is the seat's documented default,
    applied once, by the seat whose deadline it was."""
    assert [e.version for e in entries] == list(range(1, len(entries) + 1))
    for entry in entries:
        state = mirror.states[entry.version - 1]
        action = convert.action_from_pb(entry.action)
        if entry.by_deadline:
            assert entry.seat == state.to_act[0], f"v{entry.version}: not the seat's deadline"
            expected = GameService.default_action(state, entry.seat)
            assert action == expected, f"v{entry.version}: {action} is not the default"
        if entry.version > mirror.version:
            mirror.apply(entry.seat, action)


async def turn_starts(env: Env, game_id: str, until: float) -> list[float]:
    """When each turn_started event arrived (a spectator's watch), until ``until``."""
    seen: list[float] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(until - time.monotonic()):
            async for item in env.client.watch(game_id):
                if item.HasField("event") and item.event.type == "turn_started":
                    seen.append(time.monotonic())
    return seen


async def test_turn_deadline_fires_exactly_once_with_two_replicas(
    start_server: StartServer,
    shared_store: str,
) -> None:
    first = await start_server(shared_store)
    second = await start_server(shared_store)
    seed = b"deadlines"
    game, joined = await first.new_game("whiskertrail", 2, seed, turn_seconds=1)
    started = time.monotonic()
    watch = asyncio.create_task(turn_starts(second, game.game_id, started + 3.7))
    view = await joined[0].view()
    assert view.deadline_unix > 0 and view.deadline_unix - time.time() <= 1.05
    times = await watch
    elapsed = time.monotonic() - started

    entries = await logged_steps(second, game.game_id)
    assert all(e.by_deadline for e in entries)
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    check_default_actions(mirror, entries)
    # each expired turn: one draw and one discard by its seat, then the next seat's turn
    kinds = [e.action.WhichOneof("kind") for e in entries]
    turns = len(entries) // 2
    assert kinds == ["draw", "discard"] * turns
    assert [e.seat for e in entries[::2]] == [(view.current + t) % 2 for t in range(turns)]
    assert 2 <= turns <= elapsed + 1, (turns, elapsed)
    # one turn per deadline: never two in a row without a wait (arrival times are rough)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) >= 2 and min(gaps) > 0.5, gaps
    assert mirror.state.phase is Phase.DRAW and mirror.state.action_count == len(entries)
    again = await second.client.spectate(game.game_id)
    assert again.version >= len(entries)  # and the game goes on


async def test_claim_deadline_passes_each_silent_seat_once(
    start_server: StartServer, shared_store: str
) -> None:
    first = await start_server(shared_store)
    second = await start_server(shared_store)
    seed = b"claims"
    game, joined = await second.new_game("contract", 4, seed, claim_seconds=1)
    mirror = Mirror(PRESETS["contract"], 4, seed)
    actor = mirror.state.current
    await joined[actor].act(actions.draw(), expected_version=0)
    mirror.apply(actor, convert.action_from_pb(actions.draw()))
    card = mirror.state.hands[actor][0].id
    await joined[actor].act(actions.discard(card), expected_version=1)
    mirror.apply(actor, convert.action_from_pb(actions.discard(card)))
    assert mirror.state.phase is Phase.CLAIM
    order = [(actor + k) % 4 for k in (1, 2, 3)]
    claimant = order[1]
    await joined[claimant].act(actions.claim(), expected_version=2)
    view = await joined[claimant].view()
    assert view.phase == "claim" and 0 < view.deadline_unix - time.time() <= 1.05
    opened = time.monotonic()
    for _ in range(100):
        if len(await logged_steps(first, game.game_id)) >= 5:
            break
        await asyncio.sleep(0.05)
    assert time.monotonic() - opened > 0.8  # not before the deadline
    await asyncio.sleep(0.3)  # (nothing more may come: the next turn has no deadline)

    entries = await logged_steps(first, game.game_id)
    check_default_actions(mirror, entries)
    deadline_steps = [e for e in entries if e.by_deadline]
    assert [e.seat for e in deadline_steps] == [order[0], order[2]]
    assert all(e.action.WhichOneof("kind") == "pass_claim" for e in deadline_steps)
    assert len(entries) == 5
    # the claim went to the seat that claimed; the next seat's turn has no deadline
    state: GameState = mirror.state
    assert state.phase is Phase.DRAW and state.current == order[0]
    assert card in {c.id for c in state.hands[claimant]}
    view = await joined[order[0]].view()
    assert view.version == 5 and view.deadline_unix == 0 and view.may_act
    await asyncio.sleep(0.3)
    assert len(await logged_steps(second, game.game_id)) == 5


async def test_racing_writers_on_two_replicas(start_server: StartServer, shared_store: str) -> None:
    """The compare-and-set race across replicas: submits at one version to both."""
    first = await start_server(shared_store)
    second = await start_server(shared_store)
    game, joined = await first.new_game("whiskertrail", 2, b"replica race")
    twins = [second.client.seat(game.game_id, s.seat, s.token) for s in joined]
    reasons = await race_writers(joined, twins, attempts=20)
    assert sum(reasons.values()) == 20


# --------------------------------------------------------------------------- processes


@contextlib.contextmanager
def serve_process(redis_url: str, logs: Path) -> Iterator[tuple[ServerProcess, int]]:
    """``glintwick serve`` on a free port, its log in ``logs``, started (not waited
    for): the process and its gRPC port; SIGTERM (its exit code kept) at the end."""
    server = ServerProcess(logs.parent, store=redis_url, name=logs.stem)
    with server.start(wait=False):
        yield server, server.grpc_port


async def wait_serving(port: int, process: ServerProcess, logs: Path) -> None:
    """Until the server on ``port`` says it serves (health SERVING: its store answers)."""
    deadline = time.monotonic() + 30
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        while time.monotonic() < deadline:
            assert process.poll() is None, logs.read_text()
            with contextlib.suppress(grpc.aio.AioRpcError):
                if await health_status(channel) == health_pb2.HealthCheckResponse.SERVING:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError(f"the server on port {port} never became healthy: {logs.read_text()}")


@contextlib.asynccontextmanager
async def clients(*ports: int) -> AsyncIterator[list[GlintwickClient]]:
    made = [GlintwickClient(f"127.0.0.1:{p}") for p in ports]
    try:
        yield made
    finally:
        for client in made:
            await client.close()


# (their Redis Cluster runs take tens of seconds each: `make test-cluster`, not `make test`)
@pytest.mark.parametrize("shared_store", SHARED_STORES_CLUSTER_SLOW, indirect=True)
async def test_two_processes_serve_one_game_alternately(shared_url: str, tmp_path: Path) -> None:
    seed = b"two processes"
    rules = PRESETS["whiskertrail"]
    with (
        serve_process(shared_url, tmp_path / "a.log") as (proc_a, port_a),
        serve_process(shared_url, tmp_path / "b.log") as (proc_b, port_b),
    ):
        await asyncio.gather(
            wait_serving(port_a, proc_a, tmp_path / "a.log"),
            wait_serving(port_b, proc_b, tmp_path / "b.log"),
        )
        assert proc_a.pid != proc_b.pid
        async with clients(port_a, port_b) as (a, b):
            game = await a.create_game("whiskertrail", seats=2, seed=seed)
            first = await a.join(game.game_id, seat=0)
            second = await b.join(game.game_id, seat=1)
            tokens = [first.token, second.token]
            handles: list[list[Seat]] = [
                [c.seat(game.game_id, s, tokens[s]) for s in range(2)] for c in (a, b)
            ]
            mirror = Mirror(rules, 2, seed)
            played = await play_game(game.game_id, handles, mirror, random.Random(10))
            assert played.calls == 2 * mirror.version  # every other call on each process

            views = [await h[s].view() for h in handles for s in range(2)]
            assert views[0] == views[2] and views[1] == views[3]
            assert views[0] == mirror.expected_view(0, mirror.version, game.game_id)
            assert views[0].game_over
            replays = [await a.replay(game.game_id), await b.replay(game.game_id)]
            assert replays[0] == replays[1]
            replay = replays[0]
        # the same seed and actions, replayed by the engine alone, give the same game
        state = GameState.new_game(rules, 2, seed)
        for seat, action in played.submitted:
            state, _ = state.apply_action(seat, convert.action_from_pb(action))
        assert [(s.seat, s.action) for s in replay.steps] == played.submitted
        assert list(replay.scores) == list(state.scores) == list(mirror.state.scores)
        assert list(replay.winners) == list(state.winners())
        assert state.to_dict() == mirror.state.to_dict()
        for process in (proc_a, proc_b):
            process.send_signal(signal.SIGTERM)
        codes = [proc_a.wait(20), proc_b.wait(20)]
    assert codes == [0, 0], [(tmp_path / n).read_text()[-2000:] for n in ("a.log", "b.log")]
    # graceful: each said it was shutting down (JSON log lines)
    for name in ("a.log", "b.log"):
        text = (tmp_path / name).read_text()
        records = [json.loads(line) for line in text.splitlines() if line[:1] == "{"]
        events = [r.get("event") for r in records]
        assert "shutting_down" in events, text[-2000:]
        # served on uvloop (a dependency where it builds; asyncio's loop otherwise)
        (serving,) = [r for r in records if r.get("event") == "serving"]
        assert serving["event_loop"] == "uvloop"
