"""One table played to the end with a bot's decisions, over either face of the service.

A table user creates a game, joins every seat itself (one simulated user is one
table: the load of a table is the load of its players together) and plays it as
every client of the API does, the table core (:class:`clients.table.Table`)
deciding: read the view of the seat the game waits for; when it may act, list its
legal actions, let the bot choose, think, submit with the version it expects and a
fresh request id.  An ``ABORTED`` answer (a stale version or a lost race) is answered
by reading the view again; any other refusal fails the table.  Only the I/O is this
module's: gevent's sync calls, which the SDK's async runners cannot make.

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
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from clients.bots.registry import make_bot
from clients.table import Act, Next, Over, ReadView, Table, Wait
from engine.errors import GlintwickError
from engine.rulesets import ruleset
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc


class FaceError(Exception):
    """A refused call: ``code`` is the gRPC status name (the HTTP face's body says it too)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


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


def _seated(
    face: Face, rule_set: str, seats: int, bot: str, rng: random.Random, name: str
) -> tuple[str, list[str], Table]:
    """A new game with every seat joined, and the table core that plays them all (a
    refusal other than a race fails the table: it raises, and the next one starts)."""
    rules = ruleset(rule_set)
    game_id = face.create_game(rule_set, seats)
    tokens = [face.join(game_id, seat, f"{name}-{seat}") for seat in range(seats)]
    table = Table(max_failures=1)
    for seat in range(seats):
        player = make_bot(bot, seed=rng.randrange(1 << 30))
        player.setup(rules, seat)
        table.sit(game_id, seat, player, rng)
    return game_id, tokens, table


def _result(table: Table, game_id: str, finished: bool, final: pb.View | None) -> TableResult:
    view = final or table.view(game_id)
    return TableResult(
        game_id,
        moves=table.moves(game_id),
        aborted=sum(r.races for r in table.results),
        finished=finished,
        scores=[p.score for p in view.players] if view is not None else [],
    )


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
    """Create a table, take every seat and play it to the end (or ``max_moves``), the
    table core deciding (:class:`clients.table.Table`: the seat to read, the act).

    ``report("Unary (next prompt)", ms, …)`` is a move's whole cycle, the counterpart
    of a Play stream's ``"Play (next prompt)"``: from sending a ``SubmitAction`` to
    holding the legal actions of the game's next version (the views that find the seat
    to act, and its ``ListLegalActions``), the think time excluded on both sides."""
    game_id, tokens, table = _seated(face, rule_set, seats, bot, rng, name)
    # when the last move was sent, and at which version (for "Unary (next prompt)")
    acted: tuple[float, int] | None = None
    games.started(game_id)
    try:
        need: Next = ReadView(0)
        while not isinstance(need, Over) and table.moves(game_id) < max_moves:
            if isinstance(need, Wait):  # nobody to act and not over: should not happen
                think()  # (do not spin)
                need = ReadView(need.seat)
                continue
            token = tokens[need.seat]
            if isinstance(need, ReadView):
                need = table.viewed(game_id, need.seat, face.view(game_id, token))
                continue
            legal = face.legal_actions(game_id, token)
            turn = table.listed(game_id, need.seat, legal.version, legal.actions)
            need = ReadView(need.seat)
            if turn is None:
                continue
            if acted is not None and legal.version > acted[1] and report is not None:
                report("Unary (next prompt)", (time.perf_counter() - acted[0]) * 1000, 0, None)
            act = turn.choose()
            think()
            games.submitting(game_id, act.expected_version + 1)
            acted = (time.perf_counter(), act.expected_version)
            try:
                response = face.submit(
                    game_id, token, act.expected_version, act.request_id, act.action
                )
            except FaceError as error:
                if table.refused(act, error.code, error.message).failed:
                    raise
            else:
                table.applied(act, response.version, time.perf_counter() - acted[0])
        return _result(table, game_id, isinstance(need, Over), None)
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


class _Stream:
    """One Play stream of a sync client: requests put on a queue, and the messages read
    by a thread of their own, each stamped as it arrives (the table sleeps in think()
    meanwhile, and an act's result often comes just after the next prompt)."""

    def __init__(self, stub: pb_grpc.GameServiceStub, deadline: float) -> None:
        self._outgoing: queue.Queue[pb.PlayRequest | None] = queue.Queue()
        self._incoming: queue.Queue[tuple[pb.PlayResponse, float] | grpc.RpcError | None] = (
            queue.Queue()
        )
        self.opened = time.perf_counter()
        # the stream lasts the whole game: its deadline only keeps a stuck one from hanging
        self._call = stub.Play(self._requests(), timeout=deadline * 360)
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, request: pb.PlayRequest) -> None:
        self._outgoing.put(request)

    def subscribe(self, game_id: str, seat: int, token: str, from_version: int = 0) -> None:
        # prompts only: the bots decide on the prompt's view, and the table holds every
        # seat (events would come once per seat); the session's end brings the final view
        subscribe = pb.PlaySubscribe(
            game_id=game_id, seat=seat, token=token, prompts_only=True, from_version=from_version
        )
        self.send(pb.PlayRequest(subscribe=subscribe))

    def close(self) -> None:
        self._outgoing.put(None)
        self._call.cancel()

    def messages(self) -> Iterator[tuple[pb.PlayResponse, float]]:
        while True:
            item = self._incoming.get()
            if item is None:
                return
            if isinstance(item, grpc.RpcError):
                raise item
            yield item

    def _requests(self) -> Iterator[pb.PlayRequest]:
        while True:
            request = self._outgoing.get()
            if request is None:
                return
            yield request

    def _read(self) -> None:
        try:
            for item in self._call:
                self._incoming.put((item, time.perf_counter()))
            self._incoming.put(None)
        except grpc.RpcError as error:
            self._incoming.put(error)


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

    The table core answers only the seat first in a prompt's ``to_act`` (as
    :func:`play_table` plays the seat the game waits for): a claim window's other seats
    are prompted again.  ``report("Play (act)", ms, …)`` is a move's sample: from its
    act to its result, the stream's counterpart of a ``SubmitAction`` call; ``"Play
    (open)"`` the time to the first message.  A refusal other than a race is a failure.
    """
    game_id, tokens, table = _seated(face, rule_set, seats, bot, rng, name)
    stream = _Stream(stub, deadline)
    for seat, token in enumerate(tokens):
        stream.subscribe(game_id, seat, token)
    sent: dict[str, tuple[Act, float]] = {}
    # when the last act was sent, and at which version (for "Play (next prompt)": the
    # first prompt of a later version; prompts of the same version, which a claim window
    # sends several seats at once, may have arrived before the act left)
    acted: tuple[float, int] | None = None
    final: pb.View | None = None
    open_seats = set(range(seats))
    opened = False
    games.started(game_id)
    try:
        for message, arrived in stream.messages():
            if not opened:
                opened = True
                report("Play (open)", (arrived - stream.opened) * 1000, 0, None)
            kind = message.WhichOneof("kind")
            if kind == "prompt":
                prompt = message.prompt
                if acted is not None and prompt.version > acted[1] and arrived >= acted[0]:
                    # the whole move as the table sees it: act, result, events, prompt
                    report("Play (next prompt)", (arrived - acted[0]) * 1000, 0, None)
                    acted = None
                turn = table.prompted(
                    game_id, message.seat, prompt.version, prompt.view, prompt.legal_actions
                )
                if turn is None:
                    continue
                if table.moves(game_id) >= max_moves:
                    break
                act = turn.choose()
                think()
                games.submitting(game_id, act.expected_version + 1)
                now = time.perf_counter()
                sent[act.request_id] = (act, now)
                acted = (now, act.expected_version)
                stream.send(pb.PlayRequest(act=_play_act(act)))
            elif kind == "result":
                _answered(table, message.result, sent, arrived, report, open_seats)
            elif kind == "snapshot":
                table.saw(game_id, message.seat, message.snapshot)
            elif kind == "closed":
                closed = message.closed
                if closed.HasField("error"):
                    if closed.error.code == "UNAVAILABLE":
                        # the store was out of reach for this session: subscribe again
                        # where it was, as the SDK does (a sample, so it shows)
                        report("Play (resubscribed)", 0.0, 0, None)
                        time.sleep(0.05)
                        seat = message.seat
                        stream.subscribe(game_id, seat, tokens[seat], table.version(game_id, seat))
                        continue
                    failure = FaceError(closed.error.code, closed.error.message)
                    report("Play (closed)", 0.0, 0, failure)
                    raise failure
                if closed.HasField("final_view"):
                    final = closed.final_view
                    table.closed(game_id, message.seat, final)
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
        report("Play (stream)", (time.perf_counter() - stream.opened) * 1000, 0, failure)
        raise failure from None
    finally:
        stream.close()
        games.finished(game_id)
    finished = not open_seats
    if finished and final is None:
        final = face.view(game_id, tokens[0])
    return _result(table, game_id, finished, final)


def _play_act(act: Act) -> pb.PlayAct:
    return pb.PlayAct(
        game_id=act.game_id,
        seat=act.seat,
        expected_version=act.expected_version,
        request_id=act.request_id,
        action=act.action,
    )


def _answered(
    table: Table,
    answer: pb.PlayResult,
    sent: dict[str, tuple[Act, float]],
    arrived: float,
    report: Report,
    open_seats: set[int],
) -> None:
    """An act's result to the core, and its sample; a failure raises."""
    act, at = sent.pop(answer.request_id, (None, arrived))
    ms = (arrived - at) * 1000
    if act is None:  # (no act of this table's: nothing to count)
        report("Play (act)", ms, answer.ByteSize(), None)
        return
    if not answer.HasField("error"):
        table.applied(act, answer.version, ms / 1000)
        report("Play (act)", ms, answer.ByteSize(), None)
        return
    error = answer.error
    outcome = table.refused(act, error.code, error.message, session_open=act.seat in open_seats)
    if not outcome.failed:
        report("Play (act)", ms, answer.ByteSize(), None)
        return
    failure = FaceError(error.code, error.message)
    report("Play (act)", ms, answer.ByteSize(), failure)
    raise failure
