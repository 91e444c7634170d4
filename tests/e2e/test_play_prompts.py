"""Prompts-only play sessions (PlaySubscribe.prompts_only) and the secrecy of every
message of a play session, from the user's side: stubs generated from the proto over
real gRPC, and the HTTP face's Server-Sent Events and JSON POSTs, on both stores.

A client holding every seat of a game plays it on one stream, cut again and again and
resumed (events: after the last cursor; prompts only: from the newest version seen,
the unanswered act resent with its request id). Everything each seat receives —
snapshots, events, prompts (views and legal actions), results (refusals of acts
naming secret cards among them) and closed messages (their final views) — is checked
against the engine (tests/e2e/support.py: Mirror): no card of another seat's hand, no
stock order, no seed before its time. Prompts-only sessions receive no event at all,
apply no act twice, and end with the final scores.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import grpc
import pytest
from google.protobuf import json_format

from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from tests.e2e.play_support import all_events, choose, mirror_from_log
from tests.e2e.support import Env, Mirror, check_clean, check_events, plain, read_sse, shown_cards


class Stream:
    """A Play stream through the generated stub: send requests, read responses."""

    def __init__(self, stub: pb_grpc.GameServiceAsyncStub) -> None:
        self._queue: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        self.call = stub.Play(self._requests())

    async def _requests(self) -> AsyncIterator[pb.PlayRequest]:
        while True:
            request = await self._queue.get()
            if request is None:
                return
            yield request

    def send(self, request: pb.PlayRequest) -> None:
        self._queue.put_nowait(request)

    async def next(self) -> pb.PlayResponse:
        async with asyncio.timeout(10):
            message = await self.call.read()
        assert isinstance(message, pb.PlayResponse), "the stream ended"
        return message


@dataclass
class SeatSide:
    """What the client knows of one seat's session (where to resume it)."""

    seat: int
    token: str
    cursor: str = ""
    seen: int = -1  # the newest version seen: a snapshot's, a prompt's, a result's
    pending: pb.PlayAct | None = None
    acted: int = -1  # the newest version acted at
    open: bool = True
    received: list[pb.PlayResponse] = field(default_factory=list)
    named: dict[str, set[int]] = field(default_factory=dict)  # request id: cards named

    def subscribe(
        self, game_id: str, prompts_only: bool, results_in_prompts: bool = False
    ) -> pb.PlayRequest:
        request = pb.PlaySubscribe(
            game_id=game_id,
            seat=self.seat,
            token=self.token,
            prompts_only=prompts_only,
            results_in_prompts=results_in_prompts,
        )
        if prompts_only:
            request.from_version = max(self.seen, 0)
        elif self.cursor:
            request.after_cursor = self.cursor
        else:
            request.from_version = max(self.seen, 0)
        return pb.PlayRequest(subscribe=request)


def secret_card(view: pb.View, deck_size: int, rng: random.Random) -> int | None:
    """A card the view does not show (another seat's hand or the stock)."""
    shown = {cid for cid, _ in shown_cards(plain(view))}
    hidden = [c for c in range(deck_size) if c not in shown]
    return rng.choice(hidden) if hidden else None


async def play_all_seats(
    target: str,
    game_id: str,
    tokens: list[str],
    *,
    prompts_only: bool,
    rng: random.Random,
    deck_size: int,
    stats: dict[str, int],
    results_in_prompts: bool = False,
) -> list[SeatSide]:
    """Every seat on one stream (each subscribed with its own token), played with the
    greedy choice in turn order, the stream cut after a random number of messages (or
    right after an act, before its result) and every open seat resumed on a new one;
    now and then an act naming a secret card first (refused)."""
    sides = [SeatSide(s, t) for s, t in enumerate(tokens)]
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        while any(s.open for s in sides):
            stats["streams"] += 1
            stream = Stream(stub)
            try:
                for side in sides:
                    if side.open:
                        stream.send(side.subscribe(game_id, prompts_only, results_in_prompts))
                        if side.pending is not None:
                            stats["resent"] += 1
                            stream.send(pb.PlayRequest(act=side.pending))
                await _play_until_cut(stream, sides, game_id, rng, deck_size, stats)
            finally:
                stream.call.cancel()
    return sides


async def _play_until_cut(
    stream: Stream,
    sides: list[SeatSide],
    game_id: str,
    rng: random.Random,
    deck_size: int,
    stats: dict[str, int],
) -> None:
    quota = rng.randint(2, 60)
    while quota > 0 and any(s.open for s in sides):
        quota -= 1
        message = await stream.next()
        kind = message.WhichOneof("kind")
        assert message.game_id == game_id and message.HasField("seat"), message
        side = sides[message.seat]
        side.received.append(message)
        if kind == "snapshot":
            side.seen = max(side.seen, message.snapshot.version)
        elif kind == "event":
            side.cursor = message.event.cursor
            side.seen = max(side.seen, message.event.version)
        elif kind == "result":
            _read_result(_owner(sides, message.result), message.result)
        elif kind == "closed":
            assert not message.closed.HasField("error"), message
            side.open = False
        elif kind == "prompt":
            prompt = message.prompt
            if prompt.HasField("result"):  # (results_in_prompts: an act of this game's)
                result = prompt.result
                # (applied, at this prompt's version or before; or overtaken)
                assert result.version <= prompt.version or result.error.reason == "STALE_VERSION"
                stats["results_in_prompts"] += 1
                _read_result(_owner(sides, result), result)
            side.seen = max(side.seen, prompt.version)
            to_act = list(prompt.view.to_act)
            if prompt.version <= side.acted or (to_act and to_act[0] != side.seat):
                continue  # answered already (a resumed session prompts again), or not first
            if rng.random() < 0.15:
                target = secret_card(prompt.view, deck_size, rng)
                if target is not None:
                    probe = f"probe:{side.seat}:{prompt.version}:{stats['probes']}"
                    stats["probes"] += 1
                    side.named[probe] = {target}
                    act = pb.PlayAct(
                        game_id=game_id,
                        seat=side.seat,
                        expected_version=prompt.version,
                        request_id=probe,
                        action=pb.Action(discard=pb.Discard(card=target)),
                    )
                    stream.send(pb.PlayRequest(act=act))
            action = choose(prompt.view, list(prompt.legal_actions), rng)
            side.pending = pb.PlayAct(
                game_id=game_id,
                seat=side.seat,
                expected_version=prompt.version,
                request_id=f"{side.seat}:{prompt.version}",
                action=action,
            )
            side.acted = prompt.version
            stream.send(pb.PlayRequest(act=side.pending))
            if rng.random() < 0.2:
                stats["cut_after_act"] += 1
                return  # cut before the result comes


def _owner(sides: list[SeatSide], result: pb.PlayResult) -> SeatSide:
    """The seat whose act ``result`` answers (by its request id: "seat:version" or
    "probe:seat:version:n"); a result in a prompt may answer another seat's act."""
    parts = result.request_id.split(":")
    return sides[int(parts[1] if parts[0] == "probe" else parts[0])]


def _read_result(side: SeatSide, result: pb.PlayResult) -> None:
    if result.HasField("error"):
        assert result.request_id in side.named or result.error.code == "ABORTED", result
    else:
        side.seen = max(side.seen, result.version)
    if side.pending is not None and result.request_id == side.pending.request_id:
        side.pending = None


def check_session(
    mirror: Mirror,
    seat: int,
    received: list[pb.PlayResponse],
    named: dict[str, set[int]],
    what: str,
    *,
    prompts_only: bool,
    exact_events: bool = True,
) -> dict[str, int]:
    """Every message one seat received: the engine's, and nothing it may not know."""
    kinds: dict[str, int] = {}
    events: list[pb.Event] = []
    final = mirror.version
    for message in received:
        kind = message.WhichOneof("kind")
        assert kind is not None
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "snapshot":
            view = message.snapshot
            allowed = mirror.view_rules(seat, view.version)
            check_clean(mirror.rules, view, allowed, f"{what}: snapshot v{view.version}")
            assert view == mirror.expected_view(seat, view.version, view.game_id), what
        elif kind == "event":
            events.append(message.event)
        elif kind == "prompt":
            prompt = message.prompt
            version = prompt.version
            allowed = mirror.view_rules(seat, version)
            check_clean(mirror.rules, prompt.view, allowed, f"{what}: prompt v{version} view")
            state = mirror.states[version]
            assert seat in state.to_act, f"{what}: a prompt at v{version} for a seat not to act"
            legal = [convert.action_from_pb(a) for a in prompt.legal_actions]
            assert legal == state.legal_actions(seat), f"{what}: v{version} legal actions"
            for action in prompt.legal_actions:
                check_clean(mirror.rules, action, allowed, f"{what}: v{version} legal action")
            hand = {c.id for c in state.hands[seat]}
            assert {c.id for c in prompt.view.hand} == hand, f"{what}: v{version} hand"
            if prompt.HasField("result"):
                kinds["prompt_result"] = kinds.get("prompt_result", 0) + 1
                allowed = mirror.view_rules(seat, version)
                check_clean(mirror.rules, prompt.result, allowed, f"{what}: v{version} result")
        elif kind == "result":
            result = message.result
            # (judged by what the seat knew at the version the act named: "seat:version"
            # or "probe:seat:version:n")
            parts = result.request_id.split(":")
            version = min(int(parts[2] if parts[0] == "probe" else parts[1]), final)
            cards = named.get(result.request_id, set())
            check_clean(
                mirror.rules, result, mirror.view_rules(seat, version), f"{what}: result", cards
            )
        elif kind == "closed":
            closed = message.closed
            assert not closed.HasField("error"), closed
            view = closed.final_view
            assert view.game_over and view.version == final, f"{what}: final view"
            check_clean(mirror.rules, view, mirror.view_rules(seat, final), f"{what}: final")
            assert view == mirror.expected_view(seat, final, view.game_id), f"{what}: final"
        else:
            raise AssertionError(f"{what}: unexpected {message}")
    if prompts_only:
        assert not events, f"{what}: {len(events)} events on a prompts-only session"
    else:
        check_events(mirror, seat, events, f"{what}: events")
        if exact_events:
            # (from the seat's first start point: a first subscribe that lands after the
            # game moved on, its streams cut before, starts with a snapshot there, which
            # shows what the events up to it would; at version 0 the deal's follow it)
            first = received[0] if received else None
            start = first.snapshot.version if first and first.HasField("snapshot") else 0
            expected = [e for e in all_events(mirror, seat) if start == 0 or e.version > start]
            assert events == expected, f"{what}: every event exactly once"
    return kinds


# --------------------------------------------------------------------------- gRPC


@pytest.mark.parametrize(
    ("prompts_only", "results_in_prompts"),
    [(False, False), (True, False), (True, True)],
    ids=["events", "prompts_only", "results_in_prompts"],
)
async def test_every_play_message_keeps_secrets(
    server: Env, prompts_only: bool, results_in_prompts: bool
) -> None:
    """Three seats on one stream, cut and resumed again and again, and a passive SSE
    session of one seat in the same mode: every message each seat receives shows only
    what it may know; prompts-only sessions receive no event, apply no act twice and
    end with the final view (the final scores); with results in prompts, so too (the
    results that ride in prompts among them)."""
    rules = "whiskertrail"
    seed = f"play secrecy/{prompts_only}/{results_in_prompts}/{server.store}".encode()
    game, joined = await server.new_game(rules, 3, seed)
    mirror = Mirror(PRESETS[rules], 3, seed)
    stats = {"streams": 0, "resent": 0, "cut_after_act": 0, "probes": 0, "results_in_prompts": 0}
    sse: list[pb.PlayResponse] = []
    async with asyncio.timeout(240):
        watcher = asyncio.create_task(
            sse_session(server.http, game.game_id, joined[1].token, prompts_only, sse)
        )
        sides = await play_all_seats(
            server.target,
            game.game_id,
            [s.token for s in joined],
            prompts_only=prompts_only,
            rng=random.Random(seed),
            deck_size=mirror.rules.deck_size,
            stats=stats,
            results_in_prompts=results_in_prompts,
        )
        await watcher
    entries = await mirror_from_log(server.running.service.store, game.game_id, mirror)
    assert mirror.state.is_terminal()
    # no act applied twice: every request id (resent ones too) is in the log once
    ids = [e.request_id for e in entries]
    assert len(ids) == len(set(ids)) and all(ids), "an act applied twice"
    assert stats["streams"] > 10 and stats["resent"] > 3 and stats["probes"] > 10, stats
    # (only when asked: a client reading results alone gets every one alone)
    assert (stats["results_in_prompts"] > 10) == results_in_prompts, stats
    for side in sides:
        kinds = check_session(
            mirror,
            side.seat,
            side.received,
            side.named,
            f"grpc seat {side.seat}",
            prompts_only=prompts_only,
        )
        assert kinds["prompt"] > 10 and kinds["closed"] == 1, kinds
        # the probes were refused, not applied
        assert not any(i.startswith("probe") for i in ids)
    # (the session's close, not the seat's last message: the answer to an act sent with
    # the last move, a probe say, may come after it)
    closing = [m for m in sides[0].received if m.WhichOneof("kind") == "closed"]
    final = closing[-1].closed.final_view
    assert [p.score for p in final.players] == list(mirror.state.scores)
    kinds = check_session(mirror, 1, sse, {}, "sse seat 1", prompts_only=prompts_only)
    assert kinds.get("snapshot") == 1 and kinds["closed"] == 1, kinds


async def sse_session(
    base: str,
    game_id: str,
    token: str,
    prompts_only: bool,
    into: list[pb.PlayResponse],
    last_event_id: str = "",
) -> str:
    """A seat's SSE play session, every message appended to ``into`` (back as the
    PlayResponse it is), until its closed message; the last SSE id."""
    headers = {"Authorization": f"Bearer {token}"}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    params = {"prompts_only": "true"} if prompts_only else {}
    ident = last_event_id
    async with (
        aiohttp.ClientSession(base) as http,
        http.get(f"/v1/games/{game_id}:play", headers=headers, params=params) as response,
    ):
        assert response.status == 200, await response.text()
        async for kind, got, data in read_sse(response):
            message = json_format.ParseDict(data, pb.PlayResponse())
            assert message.WhichOneof("kind") == kind, (kind, data)
            into.append(message)
            if kind == "prompt":
                assert got == str(message.prompt.version)
            ident = got or ident
            if kind == "closed":
                break
    return ident


# --------------------------------------------------------------------------- HTTP JSON


async def test_a_whole_game_prompts_only_over_http(server: Env) -> None:
    """Both seats played over the HTTP face alone, prompts only: each seat's SSE session
    is cut now and then and reopened with the Last-Event-ID an EventSource sends (the
    last prompt's version), and the act answered last is POSTed again with its
    request id (its first result comes back; nothing is applied twice). No event comes;
    the closed message carries the final scores."""
    seed = f"play prompts http/{server.store}".encode()
    game, joined = await server.new_game("whiskertrail", 2, seed)
    rng = random.Random(seed)
    path = f"/v1/games/{game.game_id}:play"
    got: dict[int, list[pb.PlayResponse]] = {0: [], 1: []}
    stats = {"cuts": 0, "resent": 0}

    async def seat_loop(seat: int, http: aiohttp.ClientSession) -> None:
        auth = {"Authorization": f"Bearer {joined[seat].token}"}
        last_id = ""
        acted = -1
        last_act: tuple[dict[str, Any], int] | None = None
        while True:
            headers = {**auth, "Last-Event-ID": last_id} if last_id else auth
            params = {"promptsOnly": "true"}
            if last_act is not None:  # resent after the cut: its first result again
                body, version = last_act
                async with http.post(path, json=body, headers=auth) as again:
                    assert again.status == 200, await again.text()
                    assert int((await again.json())["version"]) == version
                stats["resent"] += 1
                last_act = None
            async with http.get(path, headers=headers, params=params) as response:
                assert response.status == 200, await response.text()
                async for kind, ident, data in read_sse(response):
                    message = json_format.ParseDict(data, pb.PlayResponse())
                    got[seat].append(message)
                    last_id = ident or last_id
                    if kind == "closed":
                        return
                    if kind != "prompt":
                        continue
                    prompt = message.prompt
                    if prompt.version <= acted or prompt.view.to_act[0] != seat:
                        continue
                    action = choose(prompt.view, list(prompt.legal_actions), rng)
                    body = {
                        "expectedVersion": str(prompt.version),
                        "requestId": f"http:{seat}:{prompt.version}",
                        "action": json_format.MessageToDict(action),
                    }
                    async with http.post(path, json=body, headers=auth) as answer:
                        if answer.status == 409:  # the game moved on: prompted again
                            continue
                        assert answer.status == 200, await answer.text()
                        version = int((await answer.json())["version"])
                    acted = prompt.version
                    if rng.random() < 0.1:
                        stats["cuts"] += 1
                        last_act = (body, version)
                        break  # the connection drops; reopened as an EventSource would

    async with aiohttp.ClientSession(server.http) as http, asyncio.timeout(240):
        await asyncio.gather(seat_loop(0, http), seat_loop(1, http))
    mirror = Mirror(PRESETS["whiskertrail"], 2, seed)
    entries = await mirror_from_log(server.running.service.store, game.game_id, mirror)
    assert mirror.state.is_terminal()
    ids = [e.request_id for e in entries]
    assert len(ids) == len(set(ids)), "an act applied twice"
    assert stats["cuts"] > 5 and stats["resent"] > 5, stats
    for seat in (0, 1):
        kinds = check_session(mirror, seat, got[seat], {}, f"http seat {seat}", prompts_only=True)
        assert kinds.get("snapshot") == 1 and kinds["closed"] == 1, kinds
        final = got[seat][-1].closed.final_view
        assert [p.score for p in final.players] == list(mirror.state.scores)
        assert list(final.winners) == [
            s for s, v in enumerate(mirror.state.scores) if v == min(mirror.state.scores)
        ]


async def test_the_http_face_refuses_a_bad_prompts_only(server: Env) -> None:
    game, joined = await server.new_game("whiskertrail", 2, b"prompts flag")
    auth = {"Authorization": f"Bearer {joined[0].token}"}
    async with aiohttp.ClientSession(server.http) as http:
        path = f"/v1/games/{game.game_id}:play"
        async with http.get(path, headers=auth, params={"prompts_only": "maybe"}) as refused:
            assert refused.status == 400
            assert (await refused.json())["reason"] == "INVALID_ARGUMENT"


# --------------------------------------------------------------------------- the SDK


async def test_the_sdk_plays_prompts_only_and_reads_the_final_view(server: Env) -> None:
    """``seat.play(prompts_only=True)`` for both seats: the same greedy games end, no
    event is received (on_event never called), and each seat's final view is set."""
    game, joined = await server.new_game("whiskertrail", 2, b"sdk prompts")
    seen: list[pb.Event] = []

    async def one(seat_index: int) -> None:
        seat = joined[seat_index]
        rng = random.Random(seat_index)
        async for prompt in seat.play(prompts_only=True, on_event=lambda _, e: seen.append(e)):
            with contextlib.suppress(Exception):  # (ABORTED: the game moved on)
                await prompt.act(choose(prompt.view, prompt.legal_actions, rng))

    async with asyncio.timeout(120):
        await asyncio.gather(one(0), one(1))
    assert not seen
    replay = await server.client.replay(game.game_id)
    for seat in joined:
        assert seat.final_view is not None and seat.final_view.game_over
        assert [p.score for p in seat.final_view.players] == list(replay.scores)


async def test_a_move_in_two_messages_with_the_sdk(server: Env) -> None:
    """The SDK asks for results in prompts: a client holding both seats of a two-seat
    game on one prompts-only stream sends one message a move (its act) and receives at
    most 1.5 (a result that leaves the seat to act again rides in its next prompt),
    every act answered, the game played to its end."""
    game, joined = await server.new_game("whiskertrail", 2, b"sdk two messages")
    rng = random.Random(2)
    acts = 0
    async with asyncio.timeout(120), server.client.play_session(prompts_only=True) as session:
        for seat in joined:
            session.add(seat)
        async for prompt in session:
            if prompt.view.to_act and prompt.view.to_act[0] == prompt.seat.seat:
                await prompt.act(choose(prompt.view, prompt.legal_actions, rng))
                acts += 1
    replay = await server.client.replay(game.game_id)
    moves = len(replay.steps)
    assert moves == acts > 20 and list(replay.scores)
    # (two subscribes; the snapshots and closed messages: four)
    assert session.sent - 2 == moves, (session.sent, moves)
    assert session.received - 4 <= 1.5 * moves, (session.received, moves)
