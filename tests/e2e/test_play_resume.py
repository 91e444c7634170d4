"""Play sessions cut and resumed: sessions cut at random messages, also inside a version
and between an act and its result, resume on another server process over one Redis with
every event received exactly once and no act applied twice; the SDK's session resumes
the streams the server ends.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import grpc
import pytest

from clients.sdk import CallError
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from tests.e2e.conftest import SHARED_STORES_CLUSTER_SLOW
from tests.e2e.play_support import all_events, choose, mirror_from_log, raw_play
from tests.e2e.support import Env, Mirror, check_events
from tests.e2e.test_replicas import serve_process, wait_serving


async def play_with_cuts(
    targets: list[str],
    game_id: str,
    seat: int,
    token: str,
    rng: random.Random,
    received: list[pb.Event],
    stats: dict[str, int],
) -> None:
    """One seat's session over raw streams, cut after a random number of messages (1 to
    6: inside versions too) or right after an act (before its result), each time
    resumed on the other server after the last cursor received, the unanswered act
    sent again with its request id."""
    cursor = ""
    pending: pb.PlayAct | None = None
    streams = 0
    while True:
        streams += 1
        async with raw_play(targets[streams % 2]) as stream:
            subscribe = pb.PlaySubscribe(game_id=game_id, seat=seat, token=token)
            subscribe.after_cursor = cursor
            stream.send(pb.PlayRequest(subscribe=subscribe))
            if pending is not None:
                stats["resent"] += 1
                stream.send(pb.PlayRequest(act=pending))
            quota = rng.randint(1, 6)
            while quota > 0:
                message = await stream.next()
                quota -= 1
                kind = message.WhichOneof("kind")
                if kind == "snapshot":
                    assert streams == 1, "a resumed session sends no snapshot"
                elif kind == "event":
                    received.append(message.event)
                    cursor = message.event.cursor
                elif kind == "prompt":
                    version = message.prompt.version
                    if pending is None or pending.expected_version < version:
                        action = choose(
                            message.prompt.view, list(message.prompt.legal_actions), rng
                        )
                        pending = pb.PlayAct(
                            game_id=game_id,
                            seat=seat,
                            expected_version=version,
                            request_id=f"{seat}:{version}",
                            action=action,
                        )
                        stream.send(pb.PlayRequest(act=pending))
                        if rng.random() < 0.3:
                            stats["cut_after_act"] += 1
                            break  # cut before the result comes
                elif kind == "result":
                    error = message.result.error
                    if message.result.HasField("error"):
                        assert (error.code, error.reason) == ("ABORTED", "STALE_VERSION"), error
                    if pending is not None and message.result.request_id == pending.request_id:
                        pending = None
                elif kind == "closed":
                    assert not message.closed.HasField("error"), message
                    stats["streams"] += streams
                    return
                else:
                    raise AssertionError(f"unexpected {message}")


# (their Redis Cluster runs take tens of seconds each: `make test-cluster`, not `make test`)
@pytest.mark.parametrize("shared_store", SHARED_STORES_CLUSTER_SLOW, indirect=True)
async def test_sessions_cut_at_random_resume_on_another_process(
    shared_url: str, tmp_path: Path
) -> None:
    """Two ``glintwick serve`` processes over one Redis; each seat's session is cut
    again and again and resumed on the other process: each seat receives every event
    of the game exactly once, in order, and no act is applied twice."""
    seed = b"play cuts"
    with (
        serve_process(shared_url, tmp_path / "a.log") as (proc_a, port_a),
        serve_process(shared_url, tmp_path / "b.log") as (proc_b, port_b),
    ):
        await asyncio.gather(
            wait_serving(port_a, proc_a, tmp_path / "a.log"),
            wait_serving(port_b, proc_b, tmp_path / "b.log"),
        )
        targets = [f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"]
        async with grpc.aio.insecure_channel(targets[0]) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            game = await stub.CreateGame(
                pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2, seed=seed.hex())
            )
            tokens = [
                (await stub.JoinGame(pb.JoinGameRequest(game_id=game.game_id, seat=s))).token
                for s in range(2)
            ]
            received: dict[int, list[pb.Event]] = {0: [], 1: []}
            stats = {"resent": 0, "cut_after_act": 0, "streams": 0}
            async with asyncio.timeout(240):
                await asyncio.gather(
                    *(
                        play_with_cuts(
                            targets,
                            game.game_id,
                            s,
                            tokens[s],
                            random.Random(f"cuts{s}"),
                            received[s],
                            stats,
                        )
                        for s in range(2)
                    )
                )
            replay = await stub.GetReplay(pb.GetReplayRequest(game_id=game.game_id))
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    for step in replay.steps:
        mirror.apply(step.seat, convert.action_from_pb(step.action))
    assert mirror.state.is_terminal()
    assert list(replay.scores) == list(mirror.state.scores)
    for seat in (0, 1):
        assert received[seat] == all_events(mirror, seat), f"seat {seat}'s events"
        check_events(mirror, seat, received[seat], f"seat {seat}'s resumed events")
    assert stats["streams"] > 50 and stats["cut_after_act"] > 5 and stats["resent"] > 5, stats
    # no act applied twice: every step answers a different prompt (seat, version)
    assert [s.version for s in replay.steps] == list(range(1, len(replay.steps) + 1))


async def test_the_sdk_session_resumes_a_stream_the_server_ended(server: Env) -> None:
    """The server ends every play stream now and then (what stopping does: UNAVAILABLE,
    SHUTTING_DOWN) while a game is played through one SDK session: the SDK reconnects,
    resumes each seat after its last event and resends the unanswered acts; the game
    ends with every event received exactly once and no refusal but stale prompts."""
    seed = b"play sdk resume"
    game, joined = await server.new_game("whiskertrail", 2, seed)
    events: dict[int, list[pb.Event]] = {0: [], 1: []}
    session = server.client.play_session(on_event=lambda s, e: events[s.seat].append(e))
    service = server.running.service
    rng = random.Random(seed)
    prompts = 0
    async with session, asyncio.timeout(120):
        for handle in joined:
            session.add(handle)
        async for prompt in session:
            prompts += 1
            move = prompt.act(choose(prompt.view, prompt.legal_actions, rng))
            acting = asyncio.ensure_future(move)
            if prompts % 25 == 0:  # cut the stream, maybe between the act and its result
                service.end_watches()
                await asyncio.sleep(0.01)
                service._ctx.stopping.clear()  # (the server goes on serving)
            try:
                await acting
            except CallError as exc:
                assert (exc.code, exc.reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
    assert not session.errors
    assert session.streams > 5, session.streams
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    await mirror_from_log(service.store, game.game_id, mirror)
    assert mirror.state.is_terminal()
    for seat in (0, 1):
        assert events[seat] == all_events(mirror, seat), f"seat {seat}'s events"
