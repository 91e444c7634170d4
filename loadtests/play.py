"""One table played to the end with a bot's decisions, over either face of the service.

A table user creates a game, joins every seat itself (one simulated user is one
table: the load of a table is the load of its players together) and plays it the
way the bot runner (``clients/botrunner.py``) plays a seat: read the seat's view;
when it may act, list its legal actions, let the bot choose, think, submit with
the version it expects and a fresh request id; otherwise read the view of the
seat the game waits for.  An ``ABORTED`` answer (a stale version or a lost race)
is answered by reading the view again, as the SDK does.

:func:`play_table_stream` plays the same table on one Play stream instead (the
``PlayTableUser``): a prompt pushed per move, one act answered on the stream.

:class:`Face` hides whether the calls go over gRPC (:class:`GrpcFace`, the generated
sync stub behind locust's interceptor) or HTTP/JSON (:class:`HttpFace`, locust's
FastHttp client); both report every call to locust themselves.

:data:`GAMES` is the process's register of games in play: the watch users pick their
games there and read when each move was submitted, to time its event's delivery.
"""

from __future__ import annotations

import queue
import random
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from clients.bots.registry import make_bot
from clients.turn import wire_choice
from engine.errors import GlintwickError
from engine.rulesets import ruleset
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc


class FaceError(Exception):
    """A refused call: ``code`` is the gRPC status name (the HTTP face's body says it too)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class Face(Protocol):
    def create_game(self, rule_set: str, seats: int) -> str: ...

    def join(self, game_id: str, seat: int, name: str) -> str: ...

    def view(self, game_id: str, token: str) -> pb.View: ...

    def legal_actions(self, game_id: str, token: str) -> pb.ListLegalActionsResponse: ...

    def submit(
        self, game_id: str, token: str, expected_version: int, request_id: str, action: pb.Action
    ) -> pb.SubmitActionResponse: ...


# --------------------------------------------------------------------------- gRPC


class GrpcFace:
    """The calls over gRPC; every one with a deadline of ``deadline`` seconds."""

    def __init__(self, stub: pb_grpc.GameServiceStub, deadline: float) -> None:
        self.stub = stub
        self.deadline = deadline

    @staticmethod
    def _auth(token: str) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {token}")]

    def _call(self, method: Callable[..., Any], request: Message, token: str | None = None) -> Any:
        try:
            return method(
                request, metadata=self._auth(token) if token else None, timeout=self.deadline
            )
        except grpc.RpcError as error:
            call: grpc.Call = error  # type: ignore[assignment]
            raise FaceError(call.code().name, call.details() or "") from None

    def create_game(self, rule_set: str, seats: int) -> str:
        game: pb.Game = self._call(
            self.stub.CreateGame, pb.CreateGameRequest(rule_set_name=rule_set, seats=seats)
        )
        return game.game_id

    def join(self, game_id: str, seat: int, name: str) -> str:
        joined: pb.JoinGameResponse = self._call(
            self.stub.JoinGame, pb.JoinGameRequest(game_id=game_id, seat=seat, name=name)
        )
        return joined.token

    def view(self, game_id: str, token: str) -> pb.View:
        view: pb.View = self._call(self.stub.GetView, pb.GetViewRequest(game_id=game_id), token)
        return view

    def legal_actions(self, game_id: str, token: str) -> pb.ListLegalActionsResponse:
        legal: pb.ListLegalActionsResponse = self._call(
            self.stub.ListLegalActions, pb.ListLegalActionsRequest(game_id=game_id), token
        )
        return legal

    def submit(
        self, game_id: str, token: str, expected_version: int, request_id: str, action: pb.Action
    ) -> pb.SubmitActionResponse:
        request = pb.SubmitActionRequest(
            game_id=game_id,
            expected_version=expected_version,
            request_id=request_id,
            action=action,
        )
        response: pb.SubmitActionResponse = self._call(self.stub.SubmitAction, request, token)
        return response


# --------------------------------------------------------------------------- HTTP/JSON


class HttpClient(Protocol):
    """What HttpFace needs of locust's FastHttpSession (``request`` with catch_response)."""

    def request(self, method: str, url: str, **kwargs: Any) -> Any: ...


class HttpFace:
    """The same calls over the HTTP/JSON face (routes as in docs/API.md)."""

    def __init__(self, client: HttpClient, deadline: float) -> None:
        self.client = client
        self.deadline = deadline

    def _call(
        self,
        verb: str,
        path: str,
        name: str,
        reply: Message,
        body: Message | None = None,
        token: str | None = None,
    ) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = json_format.MessageToDict(body) if body is not None else None
        with self.client.request(
            verb, path, name=name, json=data, headers=headers, catch_response=True
        ) as response:
            if response.status_code != 200:
                try:
                    error = response.json()
                    code, message = str(error["code"]), str(error.get("reason", ""))
                except Exception:
                    code, message = f"HTTP_{response.status_code}", (response.text or "")[:200]
                response.failure(f"{response.status_code} {code} {message}")
                raise FaceError(code, message)
            try:
                json_format.ParseDict(response.json(), reply, ignore_unknown_fields=True)
            except (ValueError, json_format.ParseError) as exc:
                response.failure(f"malformed reply: {exc}")
                raise FaceError("MALFORMED_REPLY", str(exc)) from exc
            response.success()
        return reply

    def create_game(self, rule_set: str, seats: int) -> str:
        request = pb.CreateGameRequest(rule_set_name=rule_set, seats=seats)
        game: pb.Game = self._call("POST", "/v1/games", "CreateGame", pb.Game(), request)
        return game.game_id

    def join(self, game_id: str, seat: int, name: str) -> str:
        path = f"/v1/games/{game_id}:join"
        request = pb.JoinGameRequest(seat=seat, name=name)
        joined: pb.JoinGameResponse = self._call(
            "POST", path, "JoinGame", pb.JoinGameResponse(), request
        )
        return joined.token

    def view(self, game_id: str, token: str) -> pb.View:
        path = f"/v1/games/{game_id}/view"
        view: pb.View = self._call("GET", path, "GetView", pb.View(), token=token)
        return view

    def legal_actions(self, game_id: str, token: str) -> pb.ListLegalActionsResponse:
        path = f"/v1/games/{game_id}/legalActions"
        reply = pb.ListLegalActionsResponse()
        legal: pb.ListLegalActionsResponse = self._call(
            "GET", path, "ListLegalActions", reply, token=token
        )
        return legal

    def submit(
        self, game_id: str, token: str, expected_version: int, request_id: str, action: pb.Action
    ) -> pb.SubmitActionResponse:
        path = f"/v1/games/{game_id}:submit"
        request = pb.SubmitActionRequest(
            expected_version=expected_version, request_id=request_id, action=action
        )
        response: pb.SubmitActionResponse = self._call(
            "POST", path, "SubmitAction", pb.SubmitActionResponse(), request, token
        )
        return response


# --------------------------------------------------------------------------- games in play


@dataclass
class _InPlay:
    submitted: OrderedDict[int, float] = field(default_factory=OrderedDict)


class GamesInPlay:
    """The games this process's table users are playing, and when each move was sent."""

    KEEP_VERSIONS = 256

    def __init__(self) -> None:
        self._games: dict[str, _InPlay] = {}

    def __len__(self) -> int:
        return len(self._games)

    def started(self, game_id: str) -> None:
        self._games[game_id] = _InPlay()

    def finished(self, game_id: str) -> None:
        self._games.pop(game_id, None)

    def submitting(self, game_id: str, version: int) -> None:
        """The move that will make ``version`` is being sent now."""
        game = self._games.get(game_id)
        if game is None:
            return
        game.submitted[version] = time.perf_counter()
        if len(game.submitted) > self.KEEP_VERSIONS:
            game.submitted.popitem(last=False)

    def since_submitted_ms(self, game_id: str, version: int) -> float | None:
        """Milliseconds since the move that made ``version`` was sent (None: unknown)."""
        game = self._games.get(game_id)
        sent = game.submitted.get(version) if game is not None else None
        return None if sent is None else (time.perf_counter() - sent) * 1000

    def pick(self, rng: random.Random) -> str | None:
        return rng.choice(list(self._games)) if self._games else None


GAMES = GamesInPlay()


# --------------------------------------------------------------------------- playing


@dataclass
class TableResult:
    game_id: str
    moves: int = 0
    aborted: int = 0
    finished: bool = False
    scores: list[int] = field(default_factory=list)


def parse_kinds(text: str) -> list[tuple[str, int]]:
    """``"contract:4,whiskertrail:2"`` → [("contract", 4), ("whiskertrail", 2)]."""
    kinds: list[tuple[str, int]] = []
    for part in text.split(","):
        if not part.strip():
            continue
        name, _, seats = part.strip().partition(":")
        try:
            rules = ruleset(name)
        except GlintwickError as exc:
            raise ValueError(str(exc)) from None
        count = int(seats) if seats else rules.max_players
        if not rules.min_players <= count <= rules.max_players:
            raise ValueError(f"{name} seats {rules.min_players}..{rules.max_players}, not {count}")
        kinds.append((name, count))
    if not kinds:
        raise ValueError("no table kinds given")
    return kinds


def play_table(
    face: Face,
    rule_set: str,
    seats: int,
    *,
    bot: str = "greedy",
    rng: random.Random,
    think: Callable[[], None],
    games: GamesInPlay = GAMES,
    name: str = "loadtest",
    max_moves: int = 100_000,
    report: Report | None = None,
) -> TableResult:
    """Create a table, take every seat and play it to the end (or ``max_moves``).

    ``report("Unary (next prompt)", ms, …)`` is a move's whole cycle, the counterpart
    of a Play stream's ``"Play (next prompt)"``: from sending a ``SubmitAction`` to
    holding the legal actions of the game's next version (the views that find the seat
    to act, and its ``ListLegalActions``), the think time excluded on both sides."""
    rules = ruleset(rule_set)
    game_id = face.create_game(rule_set, seats)
    result = TableResult(game_id)
    tokens = [face.join(game_id, seat, f"{name}-{seat}") for seat in range(seats)]
    bots = [make_bot(bot, seed=rng.randrange(1 << 30)) for _ in range(seats)]
    for seat, player in enumerate(bots):
        player.setup(rules, seat)
    # when the last move was sent, and at which version (for "Unary (next prompt)")
    acted: tuple[float, int] | None = None
    games.started(game_id)
    try:
        seat = 0
        view = face.view(game_id, tokens[seat])
        while not view.game_over and result.moves < max_moves:
            if not view.may_act:
                if view.to_act:
                    seat = view.to_act[0]
                else:  # nobody to act and not over: should not happen; do not spin
                    think()
                view = face.view(game_id, tokens[seat])
                continue
            legal = face.legal_actions(game_id, tokens[seat])
            if legal.version != view.version or not legal.actions:
                view = face.view(game_id, tokens[seat])
                continue
            if acted is not None and legal.version > acted[1] and report is not None:
                report("Unary (next prompt)", (time.perf_counter() - acted[0]) * 1000, 0, None)
                acted = None
            action = wire_choice(bots[seat], view, legal.actions, rng)
            think()
            games.submitting(game_id, view.version + 1)
            acted = (time.perf_counter(), view.version)
            try:
                face.submit(
                    game_id,
                    tokens[seat],
                    view.version,
                    uuid.uuid4().hex,
                    action,
                )
                result.moves += 1
            except FaceError as error:
                if error.code != "ABORTED":
                    raise
                result.aborted += 1
            view = face.view(game_id, tokens[seat])
        result.finished = view.game_over
        result.scores = [p.score for p in view.players]
        return result
    finally:
        games.finished(game_id)


def stream_event_version(message: Any) -> int | None:
    """The version of a watch stream's event message (None for a snapshot)."""
    if isinstance(message, pb.WatchGameResponse) and message.WhichOneof("item") == "event":
        return int(message.event.version)
    return None


# --------------------------------------------------------------------------- Play stream

#: reports one sample to locust: (name, milliseconds, response size, failure or None)
Report = Callable[[str, float, int, Exception | None], None]


def play_table_stream(
    face: GrpcFace,
    stub: pb_grpc.GameServiceStub,
    rule_set: str,
    seats: int,
    *,
    bot: str = "greedy",
    rng: random.Random,
    think: Callable[[], None],
    report: Report,
    deadline: float = 10.0,
    games: GamesInPlay = GAMES,
    name: str = "loadtest",
    max_moves: int = 100_000,
) -> TableResult:
    """:func:`play_table` on ONE Play stream for all the table's seats: the table is
    created and joined by unary calls (``face``), then the server pushes each seat's
    prompt (its view and legal actions) and the table answers with one act per move.

    Only the seat first in a prompt's ``to_act`` answers it (as :func:`play_table`
    plays the seat the game waits for): a claim window's other seats are prompted
    again.  ``report("Play (act)", ms, …)`` is a move's sample: from its act to its
    result, the stream's counterpart of a ``SubmitAction`` call; ``"Play (open)"`` the
    time to the first message.  A refusal other than ``ABORTED`` is a failure.
    """
    rules = ruleset(rule_set)
    game_id = face.create_game(rule_set, seats)
    result = TableResult(game_id)
    tokens = [face.join(game_id, seat, f"{name}-{seat}") for seat in range(seats)]
    bots = [make_bot(bot, seed=rng.randrange(1 << 30)) for _ in range(seats)]
    for seat, player in enumerate(bots):
        player.setup(rules, seat)
    outgoing: queue.Queue[pb.PlayRequest | None] = queue.Queue()

    def requests() -> Iterator[pb.PlayRequest]:
        while True:
            request = outgoing.get()
            if request is None:
                return
            yield request

    # prompts only: the bots decide on the prompt's view, and the table holds every seat
    # (events would come once per seat); the session's end brings the final view
    for seat, token in enumerate(tokens):
        subscribe = pb.PlaySubscribe(game_id=game_id, seat=seat, token=token, prompts_only=True)
        outgoing.put(pb.PlayRequest(subscribe=subscribe))
    # the stream lasts the whole game: its deadline only keeps a stuck one from hanging
    started = time.perf_counter()
    call = stub.Play(requests(), timeout=deadline * 360)
    # a reader of its own stamps each message as it arrives (the loop below sleeps in
    # think() meanwhile, and an act's result often comes just after the next prompt)
    incoming: queue.Queue[tuple[pb.PlayResponse, float] | grpc.RpcError | None] = queue.Queue()

    def read() -> None:
        try:
            for item in call:
                incoming.put((item, time.perf_counter()))
            incoming.put(None)
        except grpc.RpcError as error:
            incoming.put(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def messages() -> Iterator[tuple[pb.PlayResponse, float]]:
        while True:
            item = incoming.get()
            if item is None:
                return
            if isinstance(item, grpc.RpcError):
                raise item
            yield item

    sent: dict[str, float] = {}
    # when the last act was sent, and at which version (for "Play (next prompt)": the
    # first prompt of a later version; prompts of the same version, which a claim window
    # sends several seats at once, may have arrived before the act left)
    acted: tuple[float, int] | None = None
    seen = [0] * seats  # the newest version each seat saw (where it resumes)
    final: pb.View | None = None
    open_seats = set(range(seats))
    opened = False
    last: pb.View | None = None
    games.started(game_id)
    try:
        for message, arrived in messages():
            if not opened:
                opened = True
                report("Play (open)", (arrived - started) * 1000, 0, None)
            kind = message.WhichOneof("kind")
            if kind == "prompt":
                prompt = message.prompt
                last = prompt.view
                seen[message.seat] = max(seen[message.seat], prompt.version)
                if acted is not None and prompt.version > acted[1] and arrived >= acted[0]:
                    # the whole move as the table sees it: act, result, events, prompt
                    report("Play (next prompt)", (arrived - acted[0]) * 1000, 0, None)
                    acted = None
                to_act = list(prompt.view.to_act)
                if not prompt.legal_actions or (to_act and to_act[0] != message.seat):
                    continue
                if result.moves >= max_moves:
                    break
                action = wire_choice(bots[message.seat], prompt.view, prompt.legal_actions, rng)
                think()
                act = pb.PlayAct(
                    game_id=game_id,
                    seat=message.seat,
                    expected_version=prompt.version,
                    request_id=uuid.uuid4().hex,
                    action=action,
                )
                games.submitting(game_id, prompt.version + 1)
                sent[act.request_id] = now = time.perf_counter()
                acted = (now, prompt.version)
                outgoing.put(pb.PlayRequest(act=act))
            elif kind == "result":
                answer = message.result
                at = sent.pop(answer.request_id, None)
                ms = 0.0 if at is None else (arrived - at) * 1000
                if answer.HasField("error"):
                    if answer.error.code == "ABORTED":
                        result.aborted += 1
                        report("Play (act)", ms, answer.ByteSize(), None)
                        continue
                    failure = FaceError(answer.error.code, answer.error.message)
                    report("Play (act)", ms, answer.ByteSize(), failure)
                    raise failure
                result.moves += 1
                if message.HasField("seat"):
                    seen[message.seat] = max(seen[message.seat], answer.version)
                report("Play (act)", ms, answer.ByteSize(), None)
            elif kind == "snapshot":
                last = message.snapshot
                seen[message.seat] = max(seen[message.seat], message.snapshot.version)
            elif kind == "closed":
                if message.closed.HasField("error"):
                    error = message.closed.error
                    failure = FaceError(error.code, error.message)
                    if error.code == "UNAVAILABLE":
                        # the store was out of reach for this session: subscribe again
                        # where it was, as the SDK does (a sample, so it shows)
                        report("Play (resubscribed)", 0.0, 0, None)
                        time.sleep(0.05)
                        seat = message.seat
                        again = pb.PlaySubscribe(
                            game_id=game_id,
                            seat=seat,
                            token=tokens[seat],
                            prompts_only=True,
                            from_version=seen[seat],
                        )
                        outgoing.put(pb.PlayRequest(subscribe=again))
                        continue
                    report("Play (closed)", 0.0, 0, failure)
                    raise failure
                if message.closed.HasField("final_view"):
                    final = message.closed.final_view
                open_seats.discard(message.seat)
                if not open_seats:
                    break
            elif kind == "error":
                failure = FaceError(message.error.code, message.error.message)
                report("Play (error)", 0.0, 0, failure)
                raise failure
    except grpc.RpcError as error:
        rpc: grpc.Call = error  # type: ignore[assignment]
        failure = FaceError(rpc.code().name, rpc.details() or "")
        report("Play (stream)", (time.perf_counter() - started) * 1000, 0, failure)
        raise failure from None
    finally:
        outgoing.put(None)
        call.cancel()
        games.finished(game_id)
    result.finished = not open_seats
    if result.finished:
        view = final if final is not None else face.view(game_id, tokens[0])
        result.scores = [p.score for p in view.players]
    elif last is not None:
        result.scores = [p.score for p in last.players]
    return result
