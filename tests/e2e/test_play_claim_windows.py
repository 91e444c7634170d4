"""May I? windows over prompts-only play sessions with results in prompts, from the
user's side: stubs generated from the proto over real gRPC, four seats of a contract
game on one stream, on both stores.

A claim window prompts every seat but the discarder once, and each answers that one
prompt: a claim answer is judged against its window, not the version (the answers
before it moved the version; their order never changes who wins), so none is
overtaken and no seat is prompted again in the window.  Every act is answered once:
the result of one that landed rides in the next prompt of the game on the stream (any
seat's), never alone (but the game's last act's, before closed).  So a seat receives
one message per window (before: 1, 2 and 3 for a window's three seats answering in
turn order, each prompted again at every answer before its own; 3.9 a seat answering
at once, with the overtaken answers' refusals).  A stream dropped right after a pass
resumes from the versions seen, the pass resent by its request id: answered once,
applied once, every seat prompted on until the game's end.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bench.bench_claims import Client, play
from engine.rulesets import PRESETS
from glintwick.v1 import game_pb2 as pb
from services.usecases import play_results
from tests.e2e.play_support import mirror_from_log, raw_play
from tests.e2e.support import Env, Mirror


async def new_client(
    server: Env, seed: bytes, *, in_turn_order: bool, once: bool = True
) -> tuple[Client, Mirror]:
    game, joined = await server.new_game("contract", 4, seed)
    tokens = [s.token for s in joined]
    client = Client(game.game_id, tokens, random.Random(seed), in_turn_order, once)
    return client, Mirror(PRESETS["contract"], 4, seed)


@pytest.mark.parametrize("in_turn_order", [True, False], ids=["in_turn_order", "at_once"])
async def test_a_claim_window_sends_each_seat_its_prompts_and_no_result_alone(
    server: Env, in_turn_order: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A four-seat contract game, every seat on one prompts-only stream, answering in
    turn order outside the windows (as the bot runner and the tournaments do) or every
    prompt at once: each seat of a window gets one prompt there and its answer lands,
    whatever the order; the results of each window's answers (and of the discard that
    opened it) ride in prompts, each act answered once."""
    # The server's grace (5 ms) is how long a client answering a window's seats at once
    # takes to send them; on a machine busy enough to stall this process longer, results
    # go alone and the counts below measure the scheduler, not the server. This client
    # never waits for a result before it answers, so a longer grace changes only when a
    # result may go alone, never what a message holds or when a prompt goes.
    monkeypatch.setattr(play_results, "GRACE_SECONDS", 0.25)
    seed = f"claim windows/{in_turn_order}/{server.store}".encode()
    client, mirror = await new_client(server, seed, in_turn_order=in_turn_order)
    async with raw_play(server.target) as stream:
        for seat in range(4):
            client.subscribe(stream, seat)
        await play(stream, client)
    entries = await mirror_from_log(server.running.service.store, client.game_id, mirror)
    assert mirror.state.is_terminal()
    assert set(client.answers) == set(client.sent), "an act never answered"
    assert max(client.answers.values()) == 1, "an act answered twice"
    # (the log keeps each act's request id under its seat: "seat:request id")
    assert sorted(client.applied) == sorted(e.request_id.split(":", 1)[1] for e in entries)
    windows = client.windows()
    claim_answers = sum(1 for s in client.sent.values() if s.window is not None)
    assert len(windows) > 20 and claim_answers == 3 * len(windows), (len(windows), claim_answers)
    # an applied act's result rides in a prompt (but the game's last, before closed,
    # and those whose grace passed: counted with the windows below)
    assert client.alone["applied"] <= 1 + len(client.applied) // 10, client.alone
    assert client.stale == 0, "a claim answer was refused as overtaken"
    # answers sent at the window's first version that landed after others of it
    late = [
        request_id
        for request_id, sent in client.sent.items()
        if sent.window is not None and client.applied[request_id] > sent.act.expected_version + 1
    ]
    assert late, "no answer landed after another of its window: the test shows nothing"
    # one message a seat a window: its one prompt (carrying a result, or not); two
    # where an answer's result went alone, a prompt of the window still unanswered
    # when its short grace passed (a busy machine)
    counts = Counter(c for each in windows.values() for c in each)
    assert set(counts) <= {1, 2} and counts[2] <= counts[1] // 4, counts


async def test_a_subscription_without_once_per_window_is_prompted_again(server: Env) -> None:
    """Subscribed as before (no ``prompt_once_per_window``: the web page, clients
    written before it), a window's seats still to answer are prompted again at each
    answer before their own; answering in turn order, the seats of a window receive 1,
    2 and 3 messages, and no answer is refused."""
    seed = f"claim windows again/{server.store}".encode()
    client, mirror = await new_client(server, seed, in_turn_order=True, once=False)
    async with raw_play(server.target) as stream:
        for seat in range(4):
            client.subscribe(stream, seat)
        await play(stream, client)
    await mirror_from_log(server.running.service.store, client.game_id, mirror)
    assert mirror.state.is_terminal()
    assert client.stale == 0 and set(client.answers) == set(client.sent)
    windows = client.windows()
    assert len(windows) > 20
    assert all(sorted(counts) == [1, 2, 3] for counts in windows.values()), windows


async def test_a_stream_dropped_after_a_pass_resumes_with_nothing_lost(server: Env) -> None:
    """Mid-window, right after a pass is sent, the stream drops (its result unread).  A
    new stream resubscribes every seat from the newest version it saw and resends the
    pass by its request id: it is answered once (riding in a prompt, or alone), applied
    once, and every seat is prompted on until the game's end."""
    seed = f"claim windows resume/{server.store}".encode()
    client, mirror = await new_client(server, seed, in_turn_order=True)
    async with raw_play(server.target) as stream:
        for seat in range(4):
            client.subscribe(stream, seat)
        passed = await play(stream, client, until=40)
    assert passed is not None, "no pass in the game"
    assert client.answers[passed.request_id] == 0, "(its result came before the drop)"
    before = dict(client.answers)
    async with raw_play(server.target) as stream:
        for seat in range(4):
            client.subscribe(stream, seat)
        # (every act without its answer yet, by its request id: the pass, and any whose
        # answer was on its way)
        for request_id, sent in client.sent.items():
            if not client.answers[request_id]:
                stream.send(pb.PlayRequest(act=sent.act))
        await play(stream, client)
    entries = await mirror_from_log(server.running.service.store, client.game_id, mirror)
    assert mirror.state.is_terminal()
    ids = [e.request_id.split(":", 1)[1] for e in entries]  # (logged as "seat:request id")
    assert ids.count(passed.request_id) == 1, "the resent pass applied twice (or never)"
    assert client.answers[passed.request_id] == 1, "the resent pass answered twice (or never)"
    assert client.applied[passed.request_id] == passed.expected_version + 1
    assert all(client.answers[r] == n for r, n in before.items()), "an answer came twice"
    assert set(client.answers) == set(client.sent) and max(client.answers.values()) == 1
    assert len(client.windows()) > 20
