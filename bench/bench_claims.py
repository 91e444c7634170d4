"""May I? windows on Play streams: what a prompts-only client with results in prompts
receives per seat per claim window, and per move.

The same 4-seat contract games (the greedy bot at every seat, fixed seeds), every seat
of a game on one Play stream through the generated stubs (prompts only, results in
prompts), against a Glintwick server on the memory store: this checkout's, in this
process, or (``--before PATH``) another checkout's in a process of its own, and then
this one's, the same games both ways.  Three clients: ``prompted_again`` subscribes
as before (a window's seats still to answer are prompted again at each answer) and
answers in turn order (only the seat first in ``to_act``: a window's seats one after
another); ``at_once_prompted_again`` answers every prompt at once (as clients holding
their seats apart: the answers race, and before window-judged answers all but one
were overtaken); ``once_per_window`` asks for one prompt a window
(``prompt_once_per_window``, as the SDK and the bots do) and answers each as it comes,
in turn order outside the windows.  Per window: the
messages each seat prompted in it received about it (its prompts there, and the
results of its answers that came alone); per move: every message received, every
message sent, over the moves the games took.  ``sdk``: the same games played by this
checkout's SDK (a PlaySession a game, the Play runner answering every prompt, as
``bench.bench_play``), its messages per move.

    python -m bench.bench_claims [--games 4] [--before /tmp/before]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import grpc

from bench.bench_play import _play
from bench.bench_service import ROOT, glintwick_server, served
from clients.bots.greedy import GreedyBot
from clients.sdk import GlintwickClient
from clients.turn import wire_choice
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc


class PlayStream(Protocol):
    """A Play stream: send requests, read responses one by one."""

    def send(self, request: pb.PlayRequest) -> None: ...

    async def next(self) -> pb.PlayResponse: ...


#: a claim window: the round and the turns completed when its discard was made
Window = tuple[int, int]


@dataclass
class Sent:
    """An act the client sent: its seat, the claim window it answers (None: no window)."""

    seat: int
    window: Window | None
    act: pb.PlayAct


@dataclass
class Client:
    """Every seat of a game on one stream: what it sent, what it received, per window."""

    game_id: str
    tokens: list[str]
    rng: random.Random
    in_turn_order: bool
    once_per_window: bool = True
    seen: list[int] = field(default_factory=list)  # per seat: the newest version seen
    acted: list[int] = field(default_factory=list)  # per seat: the newest version acted at
    closed: set[int] = field(default_factory=set)
    sent: dict[str, Sent] = field(default_factory=dict)
    answers: Counter[str] = field(default_factory=Counter)  # request id: results received
    applied: dict[str, int] = field(default_factory=dict)  # request id: the version it made
    #: (seat, window): messages of that seat's session about that window
    per_window: Counter[tuple[int, Window]] = field(default_factory=Counter)
    alone: Counter[str] = field(default_factory=Counter)  # results alone: "applied", "overtaken"
    stale: int = 0  # overtaken acts (STALE_VERSION)
    riding: int = 0  # results in prompts

    def __post_init__(self) -> None:
        self.seen = [-1] * len(self.tokens)
        self.acted = [-1] * len(self.tokens)

    def subscribe(self, stream: PlayStream, seat: int) -> None:
        request = pb.PlaySubscribe(
            game_id=self.game_id,
            seat=seat,
            token=self.tokens[seat],
            prompts_only=True,
            results_in_prompts=True,
            prompt_once_per_window=self.once_per_window,
            from_version=max(self.seen[seat], 0),
        )
        stream.send(pb.PlayRequest(subscribe=request))

    def read(self, message: pb.PlayResponse) -> pb.PlayAct | None:
        """One message; the act it asks for (None: nothing to send)."""
        kind = message.WhichOneof("kind")
        seat = message.seat
        if kind == "snapshot":
            self.seen[seat] = max(self.seen[seat], message.snapshot.version)
        elif kind == "closed":
            assert not message.closed.HasField("error"), message
            self.closed.add(seat)
        elif kind == "result":
            sent = self.sent[message.result.request_id]
            if sent.window is not None:
                self.per_window[(seat, sent.window)] += 1
            overtaken = message.result.HasField("error")
            self.alone["overtaken" if overtaken else "applied"] += 1
            self._answer(message.result)
        elif kind == "prompt":
            return self._prompted(seat, message.prompt)
        else:
            raise AssertionError(f"a prompts-only session sent {message}")
        return None

    def _answer(self, result: pb.PlayResult) -> None:
        self.answers[result.request_id] += 1
        if result.HasField("error"):
            assert result.error.reason == "STALE_VERSION", result
            self.stale += 1
        else:
            self.applied[result.request_id] = result.version
            seat = self.sent[result.request_id].seat
            self.seen[seat] = max(self.seen[seat], result.version)

    def _prompted(self, seat: int, prompt: pb.PlayPrompt) -> pb.PlayAct | None:
        view = prompt.view
        window = (view.round, view.turns_completed) if view.phase == pb.PHASE_CLAIM else None
        if window is not None:
            self.per_window[(seat, window)] += 1
        if prompt.HasField("result"):
            self.riding += 1
            self._answer(prompt.result)
        self.seen[seat] = max(self.seen[seat], prompt.version)
        if prompt.version <= self.acted[seat]:
            return None  # (prompted again where the session resumed: answered already)
        # (in turn order: a seat not first waits to be prompted again once the seats
        # before it have answered; but prompted once a window, its seats answer in any
        # order, each on that prompt)
        waits = window is None or not self.once_per_window
        if self.in_turn_order and view.to_act[0] != seat and waits:
            return None
        self.acted[seat] = prompt.version
        act = pb.PlayAct(
            game_id=self.game_id,
            seat=seat,
            expected_version=prompt.version,
            request_id=f"{seat}:{prompt.version}",
            action=wire_choice(GreedyBot(), view, list(prompt.legal_actions), self.rng),
        )
        self.sent[act.request_id] = Sent(seat, window, act)
        return act

    def windows(self) -> dict[Window, list[int]]:
        """Each window's messages, one count per seat prompted in it."""
        out: dict[Window, list[int]] = {}
        for (_, window), count in sorted(self.per_window.items()):
            out.setdefault(window, []).append(count)
        return out


async def play(
    stream: PlayStream, client: Client, *, until: int | None = None
) -> pb.PlayAct | None:
    """Read and answer until every seat's session is closed, or (``until``) until the
    first pass at a window after that many versions: that act, sent, is returned."""
    while len(client.closed) < len(client.tokens):
        act = client.read(await stream.next())
        if act is None:
            continue
        stream.send(pb.PlayRequest(act=act))
        if until is not None and act.expected_version > until and act.action.HasField("pass_claim"):
            return act
    return None


class _Stream:
    """A Play stream through the generated stub."""

    def __init__(self, stub: pb_grpc.GameServiceStub) -> None:
        self._queue: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
        self.call: Any = stub.Play(self._requests())  # type: ignore[arg-type]
        self.received = 0
        self.sent = 0

    async def _requests(self) -> AsyncIterator[pb.PlayRequest]:
        while (request := await self._queue.get()) is not None:
            self.sent += 1
            yield request

    def send(self, request: pb.PlayRequest) -> None:
        self._queue.put_nowait(request)

    async def next(self) -> pb.PlayResponse:
        async with asyncio.timeout(30):
            message = await self.call.read()
        assert isinstance(message, pb.PlayResponse), "the stream ended"
        self.received += 1
        return message


async def _game(target: str, seed: bytes, in_turn_order: bool, once: bool) -> dict[str, Any]:
    client = GlintwickClient(target)
    try:
        game = await client.create_game("contract", seats=4, seed=seed)
        seats = [await client.join(game.game_id, seat=s) for s in range(4)]
        tokens = [s.token for s in seats]
        player = Client(game.game_id, tokens, random.Random(seed), in_turn_order, once)
        async with grpc.aio.insecure_channel(target) as channel:
            stream = _Stream(pb_grpc.GameServiceStub(channel))
            for seat in range(4):
                player.subscribe(stream, seat)
            await play(stream, player)
            stream.call.cancel()
        moves = len((await client.replay(game.game_id)).steps)
    finally:
        await client.close()
    counts = [c for each in player.windows().values() for c in each]
    return {
        "moves": moves,
        "received": stream.received,
        "sent": stream.sent,
        "windows": len(player.windows()),
        "window_messages": counts,
        "alone": dict(player.alone),
    }


#: the clients measured: name, in turn order, one prompt a window
CLIENTS = (
    ("prompted_again", True, False),  # (as before: the seats still to answer prompted again)
    ("at_once_prompted_again", False, False),
    ("once_per_window", True, True),  # (the SDK's and the bots' subscription)
)


async def run_clients(target: str, seeds: list[bytes]) -> dict[str, Any]:
    """Both clients' figures for the games of ``seeds`` on the server at ``target``."""
    out: dict[str, Any] = {}
    for name, in_order, once in CLIENTS:
        games = [await _game(target, seed, in_order, once) for seed in seeds]
        moves = sum(g["moves"] for g in games)
        counts = [c for g in games for c in g["window_messages"]]
        alone: Counter[str] = Counter()
        for g in games:
            alone.update(g["alone"])
        out[name] = {
            "moves": moves,
            "windows": sum(g["windows"] for g in games),
            "received_per_move": sum(g["received"] for g in games) / moves,
            "sent_per_move": sum(g["sent"] for g in games) / moves,
            "messages_per_seat_per_window": statistics.fmean(counts),
            "per_seat_per_window": dict(sorted(Counter(counts).items())),
            "results_alone": dict(alone),
        }
    return out


async def run_sdk(target: str, seeds: list[bytes]) -> dict[str, Any]:
    """The same games played by the SDK (one PlaySession a game, prompts only, the
    table core's Play runner answering every prompt: ``bench.bench_play``'s client)."""
    played = await _play(target, seeds, prompts_only=True, rules="contract", seats=4)
    return {k: played[k] for k in ("moves", "sent_per_move", "received_per_move")}


def run(games: int = 4, before: Path | None = None) -> dict[str, Any]:
    seeds = [f"bench claims {n}".encode() for n in range(games)]
    out: dict[str, Any] = {"games": games}
    trees = [("before", before), ("after", None)] if before is not None else [("this", None)]
    for name, root in trees:
        with tempfile.TemporaryDirectory() as logs:
            server = glintwick_server(Path(logs), "memory", event_loop=None, root=root or ROOT)
            with served(server) as running:
                out[name] = asyncio.run(run_clients(running.target, seeds))
                out[name]["sdk"] = asyncio.run(run_sdk(running.target, seeds))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--before", type=Path, default=None, help="another checkout's root")
    args = parser.parse_args()
    json.dump(run(args.games, args.before), sys.stdout, indent=2)
    print()
