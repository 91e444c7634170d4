"""A typed Python client for the Glintwick service.

It hides what every caller would otherwise repeat: the seat token in the
metadata, the game version an action expects, a fresh request id per action
(reused on retries, so a retried action is applied once), retries on
``UNAVAILABLE`` and on ``ABORTED`` compare-and-set races, a ``RATE_LIMITED`` refusal
retried after the delay the server names (up to ``RetryPolicy.rate_limited_wait``),
deadlines on every call, and a watch stream that reconnects and resumes after the last event seen.

    async with GlintwickClient("127.0.0.1:50051") as client:
        game = await client.create_game("whiskertrail", seats=2)
        seat = await client.join(game.game_id, name="ann")
        view = await seat.view()
        await seat.act(actions.draw())

House bots (docs/BOTS.md): :meth:`Seat.fill_with_bots` fills a game's empty seats;
an operator lists the bot turns to play with :meth:`GlintwickClient.bot_turns` and
acts for a house-bot seat through :meth:`GlintwickClient.house_seat` (what
``clients/botpool.py`` does).

Connecting: ``GlintwickClient(["10.0.0.1:50051", "10.0.0.2:50051"])`` or
``GlintwickClient("dns:///glintwick:50051")`` balances round-robin over every
address; ``tls=True`` / ``root_certificates=pem`` / ``credentials=`` connect over
TLS (``serve --tls-cert/--tls-key``); ``timeout=`` sets each call's deadline and
``with client.deadline(seconds):`` a block's.

:class:`SyncClient` wraps the same calls for scripts that are not async.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ipaddress
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, TypeVar

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc

T = TypeVar("T")

RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED)


class CallError(Exception):
    """An RPC failed; ``code`` is the gRPC status, ``reason`` the machine-readable reason."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after  # seconds the server asks to wait (RetryInfo)


def _error(exc: grpc.aio.AioRpcError) -> CallError:
    reason, retry_after = "", None
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    if status is not None:
        for detail in status.details:
            info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
            if detail.Unpack(info):
                reason = info.reason
            elif detail.Unpack(retry):
                retry_after = retry.retry_delay.ToTimedelta().total_seconds()
    return CallError(exc.code(), reason or exc.code().name, exc.details() or "", retry_after)


class actions:
    """Constructors for the typed actions (card and meld ids as the view shows them)."""

    @staticmethod
    def draw(from_discard: bool = False) -> pb.Action:
        source = pb.DRAW_SOURCE_DISCARD if from_discard else pb.DRAW_SOURCE_STOCK
        return pb.Action(draw=pb.Draw(source=source))

    @staticmethod
    def lay_contract(melds: Sequence[pb.MeldSpec] = ()) -> pb.Action:
        return pb.Action(lay_contract=pb.LayContract(melds=melds))

    @staticmethod
    def lay_off(
        card: int, meld: int, end: pb.RunEnd.ValueType = pb.RUN_END_UNSPECIFIED
    ) -> pb.Action:
        return pb.Action(lay_off=pb.LayOff(card=card, meld=meld, end=end))

    @staticmethod
    def discard(card: int) -> pb.Action:
        return pb.Action(discard=pb.Discard(card=card))

    @staticmethod
    def swap_joker(card: int, meld: int) -> pb.Action:
        return pb.Action(swap_joker=pb.SwapJoker(card=card, meld=meld))

    @staticmethod
    def end_turn() -> pb.Action:
        return pb.Action(end_turn=pb.EndTurn())

    @staticmethod
    def claim() -> pb.Action:
        return pb.Action(claim=pb.Claim())

    @staticmethod
    def pass_claim() -> pb.Action:
        return pb.Action(pass_claim=pb.PassClaim())


@dataclass
class RetryPolicy:
    attempts: int = 5
    backoff: float = 0.02  # seconds, doubled each retry
    timeout: float = 10.0  # per call
    # a RATE_LIMITED refusal is retried after the server's retry-after when that is at
    # most this many seconds (a longer one is raised: the caller decides)
    rate_limited_wait: float = 5.0


# calls spread over every address the target resolves to, not all on the first
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
_BALANCING_OPTIONS = ("grpc.service_config", "grpc.lb_policy_name")


def channel_target(target: str | Sequence[str]) -> str:
    """A gRPC target for ``target``: a target as it is (``host:port``, ``dns:///host:port``,
    ``ipv4:…``), and a list of ``ip:port`` addresses as one ``ipv4:``/``ipv6:`` target."""
    if isinstance(target, str):
        return target
    addresses = list(target)
    if not addresses:
        raise ValueError("no address to connect to")
    if len(addresses) == 1:
        return addresses[0]
    hosts = [address.rpartition(":")[0] for address in addresses]
    if all(host.startswith("[") for host in hosts):
        return "ipv6:" + ",".join(addresses)
    try:
        for host in hosts:
            ipaddress.IPv4Address(host)
    except ValueError:
        raise ValueError(
            f"{addresses}: a list of addresses takes IP literals; for host names use"
            " one dns:///host:port target (it balances over every address the name has)"
        ) from None
    return "ipv4:" + ",".join(addresses)


def channel_credentials(
    tls: bool, root_certificates: bytes | None, credentials: grpc.ChannelCredentials | None
) -> grpc.ChannelCredentials | None:
    """The channel's TLS (None: plaintext): ``credentials`` as given, else TLS trusting
    ``root_certificates`` (PEM), else, with ``tls``, the system's roots."""
    if credentials is not None:
        return credentials
    if tls or root_certificates is not None:
        return grpc.ssl_channel_credentials(root_certificates=root_certificates)
    return None


class GlintwickClient:
    """Async client; one channel, shared by every seat it joins.

    ``target``: ``host:port``, a ``dns:///host:port`` target, or several ``ip:port``
    addresses (a list); calls are balanced round-robin over every address the target
    has (pass ``grpc.service_config`` or ``grpc.lb_policy_name`` in ``options`` to
    choose otherwise).  TLS: ``tls=True`` (the system's root certificates),
    ``root_certificates=`` PEM bytes of the CA to trust, or any ``credentials``.
    Deadlines: ``timeout`` seconds per call (default ``retry.timeout``, 10 s), and for
    the calls of a block ``with client.deadline(seconds): ...``.
    """

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        retry: RetryPolicy | None = None,
        channel: grpc.aio.Channel | None = None,
        options: Sequence[tuple[str, Any]] = (),
        timeout: float | None = None,
        tls: bool = False,
        root_certificates: bytes | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.target = channel_target(target)
        self.retry = retry or RetryPolicy()
        if timeout is not None:
            self.retry = replace(self.retry, timeout=timeout)
        self._deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
            "deadline", default=None
        )
        self._channel = channel or self._open(
            list(options), channel_credentials(tls, root_certificates, credentials)
        )
        self.stub = pb_grpc.GameServiceStub(self._channel)

    def _open(
        self, options: list[tuple[str, Any]], credentials: grpc.ChannelCredentials | None
    ) -> grpc.aio.Channel:
        if not any(name in _BALANCING_OPTIONS for name, _ in options):
            options.append(("grpc.service_config", ROUND_ROBIN))
        if credentials is None:
            return grpc.aio.insecure_channel(self.target, options=options)
        return grpc.aio.secure_channel(self.target, credentials, options=options)

    @property
    def timeout(self) -> float:
        """The deadline of a call now: the block's (:meth:`deadline`), else the default."""
        block = self._deadline.get()
        return self.retry.timeout if block is None else block

    @contextlib.contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """Give every call made in this block (in this task) ``seconds`` each."""
        reset = self._deadline.set(seconds)
        try:
            yield
        finally:
            self._deadline.reset(reset)

    async def __aenter__(self) -> GlintwickClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def call(
        self,
        method: Callable[..., Awaitable[T]],
        request: Any,
        token: str | None = None,
        retry_on: tuple[grpc.StatusCode, ...] = RETRYABLE,
        before_retry: Callable[[], Awaitable[None]] | None = None,
        timeout: float | None = None,
    ) -> T:
        """One RPC with metadata, a deadline (``timeout`` seconds an attempt, else
        :attr:`timeout`), and retries on the given codes."""
        metadata: list[tuple[str, str]] = [("x-request-id", uuid.uuid4().hex)]
        if token:
            metadata.append(("authorization", f"Bearer {token}"))
        delay = self.retry.backoff
        for attempt in range(self.retry.attempts):
            try:
                return await method(request, metadata=metadata, timeout=timeout or self.timeout)
            except grpc.aio.AioRpcError as exc:
                error = _error(exc)
                if attempt == self.retry.attempts - 1:
                    raise error from None
                wait = error.retry_after
                if error.reason == "RATE_LIMITED" and wait is not None:
                    if wait > self.retry.rate_limited_wait:
                        raise error from None
                    # (nothing was applied: the same request, once the limit allows it)
                    await asyncio.sleep(wait)
                    continue
                if exc.code() not in retry_on:
                    raise error from None
            if before_retry is not None:
                await before_retry()
            await asyncio.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ stateless calls

    async def rule_sets(self) -> list[pb.RuleSet]:
        response = await self.call(self.stub.ListRuleSets, pb.ListRuleSetsRequest())
        return list(response.rule_sets)

    async def create_game(
        self,
        rule_set: str | pb.RuleSet = "whiskertrail",
        *,
        seats: int = 0,
        seed: bytes | str = b"",
        turn_seconds: int = 0,
        claim_seconds: int = 0,
        bots: Mapping[int, str] | None = None,
    ) -> pb.Game:
        return await self.call(
            self.stub.CreateGame,
            self._create_request(rule_set, seats, seed, turn_seconds, claim_seconds, bots),
            retry_on=(grpc.StatusCode.UNAVAILABLE,),
        )

    async def create_game_from_deck(
        self,
        decks: Mapping[int, Sequence[int]],
        operator_token: str,
        rule_set: str | pb.RuleSet = "whiskertrail",
        *,
        seats: int = 0,
        seed: bytes | str = b"",
    ) -> pb.Game:
        request = pb.CreateGameFromDeckRequest(
            game=self._create_request(rule_set, seats, seed, 0, 0, None),
            decks=[pb.DeckOrder(round=r, cards=c) for r, c in sorted(decks.items())],
        )
        return await self.call(
            self.stub.CreateGameFromDeck, request, token=operator_token, retry_on=()
        )

    @staticmethod
    def _create_request(
        rule_set: str | pb.RuleSet,
        seats: int,
        seed: bytes | str,
        turn_seconds: int,
        claim_seconds: int,
        bots: Mapping[int, str] | None,
    ) -> pb.CreateGameRequest:
        request = pb.CreateGameRequest(
            seats=seats,
            seed=convert.seed_to_hex(seed),
            deadlines=pb.Deadlines(turn_seconds=turn_seconds, claim_seconds=claim_seconds),
            bots=dict(bots or {}),
        )
        if isinstance(rule_set, str):
            request.rule_set_name = rule_set
        else:
            request.custom_rule_set.CopyFrom(rule_set)
        return request

    async def game(self, game_id: str) -> pb.Game:
        return await self.call(self.stub.GetGame, pb.GetGameRequest(game_id=game_id))

    async def list_open_games(
        self, rule_set: str | None = None, *, rule_set_hash: str = "", page_size: int = 0
    ) -> list[pb.OpenGame]:
        """The lobby: every game waiting for players, oldest first (all its pages,
        ``page_size`` games a call; 0: the server's default), only those of the preset
        ``rule_set`` or of the rule set with ``rule_set_hash`` when given."""
        request = pb.ListOpenGamesRequest(
            rule_set_name=rule_set or "", rule_set_hash=rule_set_hash, page_size=page_size
        )
        games: list[pb.OpenGame] = []
        while True:
            response = await self.call(self.stub.ListOpenGames, request)
            games.extend(response.games)
            if not response.next_page_token:
                return games
            request.page_token = response.next_page_token

    async def join(
        self,
        game_id: str,
        *,
        seat: int | None = None,
        name: str = "",
        request_id: str | None = None,
    ) -> Seat:
        """Take a seat once, whatever the retries: one request id (``request_id``, else a
        fresh random UUID) for every attempt, so a retry of a join whose answer was lost
        (UNAVAILABLE) gets its seat again, with a new token, instead of SEAT_TAKEN.
        Give your own ``request_id`` to retry a join yourself (e.g. after
        DEADLINE_EXCEEDED, which is not retried): unguessable, and kept as secret as a
        token (it is a credential for that retry).
        """
        request = pb.JoinGameRequest(
            game_id=game_id, name=name, request_id=request_id or uuid.uuid4().hex
        )
        if seat is not None:
            request.seat = seat
        response = await self.call(
            self.stub.JoinGame, request, retry_on=(grpc.StatusCode.UNAVAILABLE,)
        )
        return Seat(self, game_id, response.seat, response.token)

    def seat(self, game_id: str, seat: int, token: str) -> Seat:
        """A handle for a seat joined earlier (e.g. by another process)."""
        return Seat(self, game_id, seat, token)

    def house_seat(self, game_id: str, seat: int, operator_token: str) -> Seat:
        """A house-bot seat, seen and played with the operator credential (every call
        names the seat); the server refuses a human's seat."""
        return Seat(self, game_id, seat, operator_token, on_behalf=True)

    async def bot_turns(
        self, operator_token: str, limit: int = 0, *, lease_seconds: int = 0
    ) -> list[pb.BotTurn]:
        """The house-bot turns to play now, longest waiting first (``limit`` 0: the
        server's default number); ``lease_seconds`` > 0 claims them for that long."""
        request = pb.ListBotTurnsRequest(limit=limit, lease_seconds=lease_seconds)
        response = await self.call(self.stub.ListBotTurns, request, token=operator_token)
        return list(response.turns)

    def play_session(
        self,
        *,
        on_event: Callable[[Seat, pb.Event], None] | None = None,
        prompts_only: bool = False,
    ) -> PlaySession:
        """A Play stream for many seats (see :class:`PlaySession`)."""
        return PlaySession(self, on_event=on_event, prompts_only=prompts_only)

    async def spectate(self, game_id: str) -> pb.View:
        return await self.call(self.stub.GetView, pb.GetViewRequest(game_id=game_id))

    async def analyse(
        self, rule_set: str, round_number: int, hand: Sequence[str] | Sequence[int]
    ) -> pb.AnalyseHandResponse:
        request = pb.AnalyseHandRequest(rule_set_name=rule_set, round=round_number)
        if hand and isinstance(hand[0], int):
            request.hand_ids.extend(int(c) for c in hand)
        else:
            request.hand.extend(str(c) for c in hand)
        return await self.call(self.stub.AnalyseHand, request)

    async def replay(self, game_id: str) -> pb.Replay:
        return await self.call(self.stub.GetReplay, pb.GetReplayRequest(game_id=game_id))

    async def ping(self) -> None:
        await self.call(self.stub.Ping, pb.PingRequest())

    async def limits(self) -> pb.GetLimitsResponse:
        """Every limit the server checks requests against (docs/API.md, "Limits")."""
        return await self.call(self.stub.GetLimits, pb.GetLimitsRequest())

    async def watch(
        self, game_id: str, *, token: str | None = None, from_version: int = 0
    ) -> AsyncIterator[pb.WatchGameResponse]:
        """A snapshot then every event; reconnects on UNAVAILABLE, resuming where it was:
        exactly after the last event yielded (its cursor), or after the snapshot's version.
        """
        resume = pb.WatchGameRequest(game_id=game_id, from_version=from_version)
        failures = 0
        while True:
            metadata = [("authorization", f"Bearer {token}")] if token else []
            stream = self.stub.WatchGame(resume, metadata=metadata)
            try:
                async for item in stream:
                    failures = 0
                    if item.HasField("event"):
                        resume = pb.WatchGameRequest(
                            game_id=game_id, after_cursor=item.event.cursor
                        )
                    else:
                        resume = pb.WatchGameRequest(
                            game_id=game_id, from_version=item.snapshot.version
                        )
                    yield item
                return
            except grpc.aio.AioRpcError as exc:
                failures += 1
                if exc.code() is not grpc.StatusCode.UNAVAILABLE or failures > self.retry.attempts:
                    raise _error(exc) from None
                await asyncio.sleep(self.retry.backoff * 2**failures)
            finally:
                stream.cancel()


class Seat:
    """A joined seat: acts and sees with its token, tracks the game version."""

    def __init__(
        self,
        client: GlintwickClient,
        game_id: str,
        seat: int,
        token: str,
        *,
        on_behalf: bool = False,
    ) -> None:
        self.client = client
        self.game_id = game_id
        self.seat = seat
        self.token = token
        self.version = 0
        self.on_behalf = on_behalf  # the token is the operator's: name the seat in each call
        #: the seat's view of its game's end, once :meth:`play` ended with the game
        self.final_view: pb.View | None = None

    def _named(self) -> dict[str, int]:
        return {"seat": self.seat} if self.on_behalf else {}

    async def _call(self, method: Callable[..., Awaitable[T]], request: Any, **kw: Any) -> T:
        return await self.client.call(method, request, token=self.token, **kw)

    async def view(self) -> pb.View:
        request = pb.GetViewRequest(game_id=self.game_id, **self._named())
        view = await self._call(self.client.stub.GetView, request)
        self.version = view.version
        return view

    async def legal_actions(self) -> list[pb.Action]:
        response = await self._call(
            self.client.stub.ListLegalActions,
            pb.ListLegalActionsRequest(game_id=self.game_id, **self._named()),
        )
        self.version = response.version
        return list(response.actions)

    async def validate(self, action: pb.Action) -> pb.ValidateActionResponse:
        request = pb.ValidateActionRequest(game_id=self.game_id, action=action, **self._named())
        return await self._call(self.client.stub.ValidateAction, request)

    async def act(
        self,
        action: pb.Action,
        *,
        expected_version: int | None = None,
        request_id: str | None = None,
    ) -> pb.SubmitActionResponse:
        """Submit once, whatever the retries: one request id (``request_id``, else a fresh
        UUID) for every attempt.

        Without ``expected_version`` the last version this seat saw is used, and a
        stale-version refusal refreshes it and retries (the server re-validates the
        action against the game as it is then).
        """
        request = pb.SubmitActionRequest(
            game_id=self.game_id,
            expected_version=self.version if expected_version is None else expected_version,
            request_id=request_id or uuid.uuid4().hex,
            action=action,
            **self._named(),
        )

        async def refresh() -> None:
            if expected_version is None:
                await self.view()
                request.expected_version = self.version

        # a stale version the caller named itself cannot get better by retrying
        retry_on = RETRYABLE if expected_version is None else (grpc.StatusCode.UNAVAILABLE,)
        response = await self._call(
            self.client.stub.SubmitAction, request, before_retry=refresh, retry_on=retry_on
        )
        self.version = response.version
        return response

    async def fill_with_bots(self, strategy: str = "") -> pb.Game:
        """Make every seat nobody has joined a house bot (``strategy``; empty: the
        server's default): the table is full and play starts."""
        request = pb.FillWithBotsRequest(game_id=self.game_id, strategy=strategy)
        return await self._call(self.client.stub.FillWithBots, request)

    async def play(
        self,
        *,
        on_event: Callable[[Seat, pb.Event], None] | None = None,
        prompts_only: bool = False,
    ) -> AsyncIterator[Prompt]:
        """The natural way to play: a prompt whenever the seat may act, until the game is
        over (one Play stream; see :class:`PlaySession`, which plays many seats on one).

            async for prompt in seat.play():
                await prompt.act(prompt.legal_actions[0])

        ``prompts_only``: no events (see :class:`PlaySession`); the seat's final view is
        then :attr:`final_view` once the loop ends.
        """
        async with PlaySession(
            self.client, on_event=on_event, prompts_only=prompts_only
        ) as session:
            session.add(self)
            async for prompt in session:
                yield prompt
            error = session.errors.get((self.game_id, self.seat))
            if error is not None:
                raise error
            self.final_view = session.final_view(self)

    def watch(self, from_version: int = 0) -> AsyncIterator[pb.WatchGameResponse]:
        """The seat's watch (a house seat's is a spectator's: WatchGame names no seat)."""
        token = None if self.on_behalf else self.token
        return self.client.watch(self.game_id, token=token, from_version=from_version)


# --------------------------------------------------------------------------- play sessions


def _play_error(error: pb.PlayError) -> CallError:
    code = getattr(grpc.StatusCode, error.code, grpc.StatusCode.UNKNOWN)
    return CallError(code, error.reason or error.code, error.message)


#: the details of grpc-python's own INTERNAL status of a streaming call whose message
#: could not be written (its core failed the batch: the call's transport already
#: failed, a server gone or the channel closed; grpc/grpc#34148), no server's answer
CORE_WRITE_FAILED = "Internal error from Core"


def _stream_dropped(exc: grpc.aio.AioRpcError) -> bool:
    """Whether a Play stream's end is its transport's, not the server's answer: to
    reopen.  UNAVAILABLE (a replica stopping, the network), or the INTERNAL that
    grpc-python gives a stream when a request could not be written on a transport that
    had failed under it (a killed server): no status from any server (a server's
    INTERNAL carries its ErrorInfo)."""
    if exc.code() is grpc.StatusCode.UNAVAILABLE:
        return True
    return (
        exc.code() is grpc.StatusCode.INTERNAL
        and (exc.details() or "").startswith(CORE_WRITE_FAILED)
        and rpc_status.from_call(exc) is None  # type: ignore[arg-type]
    )


@dataclass
class Prompt:
    """The seat may act: its view, its legal actions and the version to act at.

    ``await prompt.act(action)`` submits at ``version`` (one request id, kept on every
    resend after a reconnect: applied once) and returns the game's new version, or
    raises :class:`CallError` (``ABORTED``/``STALE_VERSION`` when the game moved on: a
    fresh prompt follows when the seat may act again).
    """

    session: PlaySession
    seat: Seat
    version: int
    view: pb.View
    legal_actions: list[pb.Action]
    deadline_unix: float

    async def act(
        self, action: pb.Action, *, request_id: str | None = None, timeout: float | None = None
    ) -> int:
        return await self.session.act(
            self.seat, action, self.version, request_id=request_id, timeout=timeout
        )


@dataclass
class _Playing:
    """What a play session knows of one seat's session: where to resume it."""

    seat: Seat
    cursor: str = ""  # the last event received
    from_version: int = 0  # the snapshot's version, before any event
    seen_version: int = -1  # the newest version of an event received, or acted at
    open: bool = True
    error: CallError | None = None
    failures: int = 0
    prompts_only: bool = False
    prompt_version: int = -1  # the newest prompt received
    prompted: int = -1  # the newest prompt yielded (prompts only)
    final_view: pb.View | None = None

    def subscribe(self) -> pb.PlayRequest:
        request = pb.PlaySubscribe(game_id=self.seat.game_id, seat=self.seat.seat)
        request.token = self.seat.token
        if self.prompts_only:
            # no cursors: after the newest version seen (a prompt at it comes again)
            request.prompts_only = True
            request.from_version = max(self.from_version, self.seen_version, self.prompt_version)
        elif self.cursor:
            request.after_cursor = self.cursor
        else:
            request.from_version = self.from_version
        return pb.PlayRequest(subscribe=request)


class PlaySession:
    """One Play stream for any number of seats, of any games (a bot pool's house-bot
    seats, a client's own seats at several tables).

        session = client.play_session()
        session.add(seat_a)
        session.add(house_seat)
        async for prompt in session:
            await prompt.act(choose(prompt.view, prompt.legal_actions))

    Iteration yields a :class:`Prompt` whenever a seat may act and ends when every
    seat's session is over (its game ended: :attr:`errors` holds the seats whose
    session was refused).  A dropped stream (UNAVAILABLE: a replica stopping, the
    network) is reopened at once, to any replica the client's target balances over,
    every seat resumed after the last event it received, and every act still waiting
    for its result sent again with its request id (applied once).  ``on_event(seat,
    event)`` sees every event of every seat, each exactly once.

    ``prompts_only``: the server sends no events (a bot decides on the prompt's view
    alone; a client holding every seat of a game would otherwise get each move's
    events once per seat): snapshots, prompts, results and each session's end, with
    the seat's final view (:meth:`final_view`).  A seat then resumes after the newest
    version it saw (a prompt's, a snapshot's, an act's result), and a prompt at a
    version already yielded for the seat is not yielded again.
    """

    def __init__(
        self,
        client: GlintwickClient,
        *,
        on_event: Callable[[Seat, pb.Event], None] | None = None,
        prompts_only: bool = False,
    ) -> None:
        self.client = client
        self.on_event = on_event
        self.prompts_only = prompts_only
        self.errors: dict[tuple[str, int], CallError] = {}
        self._seats: dict[tuple[str, int], _Playing] = {}
        self._prompts: asyncio.Queue[Prompt | None] = asyncio.Queue()
        self._pending: dict[str, tuple[pb.PlayAct, asyncio.Future[int]]] = {}
        self._requests: asyncio.Queue[pb.PlayRequest | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        #: counts of messages on the stream, both ways (what `make bench` reports)
        self.sent = 0
        self.received = 0
        self.streams = 0

    def add(self, seat: Seat, *, after_cursor: str = "", from_version: int = 0) -> None:
        """Play ``seat`` on this session (from its snapshot, or resuming after a cursor)."""
        playing = _Playing(
            seat, cursor=after_cursor, from_version=from_version, prompts_only=self.prompts_only
        )
        self._seats[(seat.game_id, seat.seat)] = playing
        self._send(playing.subscribe())
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    def remove(self, seat: Seat) -> None:
        playing = self._seats.pop((seat.game_id, seat.seat), None)
        if playing is not None and playing.open:
            request = pb.PlayUnsubscribe(game_id=seat.game_id, seat=seat.seat)
            self._send(pb.PlayRequest(unsubscribe=request))
        self._check_done()

    def cursor(self, seat: Seat) -> str:
        """The cursor of the last event of ``seat`` received (resume a session with it)."""
        return self._seats[(seat.game_id, seat.seat)].cursor

    def final_view(self, seat: Seat) -> pb.View | None:
        """The seat's view of its game's end (scores, winners), once its session closed
        because the game is over (PlayClosed.final_view); None before."""
        playing = self._seats.get((seat.game_id, seat.seat))
        return playing.final_view if playing is not None else None

    def is_open(self, seat: Seat) -> bool:
        """Whether ``seat``'s session is still on (added, and its game not over)."""
        playing = self._seats.get((seat.game_id, seat.seat))
        return playing is not None and playing.open

    @property
    def ended(self) -> bool:
        """Whether the session's stream has ended for good (every seat's session over,
        or a failure no reopening cured): an act can no longer be sent on it."""
        return self._task is not None and self._task.done()

    def finished(self) -> list[tuple[str, int]]:
        """The (game_id, seat) sessions that are over (game ended, unsubscribed, refused)."""
        return [key for key, playing in self._seats.items() if not playing.open]

    async def drain(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, for the stream to end by itself: once every
        session is over, the acts still waiting get their results first."""
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=timeout)

    async def act(
        self,
        seat: Seat,
        action: pb.Action,
        expected_version: int,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> int:
        """Act for ``seat`` at ``expected_version``; the game's new version (else CallError).
        On a session whose stream has ended (every seat's session over, or a failure)
        nothing could carry the act: CallError at once (CANCELLED), not after the timeout."""
        if self._task is None or self.ended:
            if isinstance(self._failure, CallError):
                raise self._failure
            raise CallError(grpc.StatusCode.CANCELLED, "CANCELLED", "session closed")
        act = pb.PlayAct(
            game_id=seat.game_id,
            seat=seat.seat,
            expected_version=expected_version,
            request_id=request_id or uuid.uuid4().hex,
            action=action,
        )
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending[act.request_id] = (act, future)
        self._send(pb.PlayRequest(act=act))
        try:
            async with asyncio.timeout(timeout or self.client.timeout):
                version = await future
        except TimeoutError:
            raise CallError(
                grpc.StatusCode.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED", "no result in time"
            ) from None
        finally:
            self._pending.pop(act.request_id, None)
        playing = self._seats.get((seat.game_id, seat.seat))
        if playing is not None:
            playing.seen_version = max(playing.seen_version, version)
        seat.version = version
        return version

    def __aiter__(self) -> AsyncIterator[Prompt]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Prompt]:
        while True:
            prompt = await self._prompts.get()
            if prompt is None:
                if self._failure is not None:
                    raise self._failure
                return
            playing = self._seats.get((prompt.seat.game_id, prompt.seat.seat))
            # a prompt the seat has moved past (its act landed, a deadline acted) is stale
            if playing is None or prompt.version < playing.seen_version:
                continue
            if playing.prompts_only:
                # (a resumed prompts-only session prompts again at the version it
                # resumed from: the prompt yielded already)
                if prompt.version <= playing.prompted:
                    continue
                playing.prompted = prompt.version
            yield prompt

    async def close(self) -> None:
        """End the stream.  (A failure that ended it already was raised by the
        iteration and by each act it left unanswered: not again here.)"""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            # (asyncio.wait, not `await task` under suppress(CancelledError): a caller
            # cancelled while it closes, a bot pool stopping as its last game ends, must
            # see its own cancellation, or it goes on as if nothing had asked it to stop)
            await asyncio.wait({task})
            if not task.cancelled():
                task.exception()  # (retrieved)

    async def __aenter__(self) -> PlaySession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ the stream

    def _send(self, request: pb.PlayRequest) -> None:
        if self._requests is not None:
            self._requests.put_nowait(request)

    def _check_done(self) -> None:
        if not any(p.open for p in self._seats.values()):
            self._prompts.put_nowait(None)
            if self._requests is not None:
                self._requests.put_nowait(None)

    async def _outgoing(
        self, queue: asyncio.Queue[pb.PlayRequest | None]
    ) -> AsyncIterator[pb.PlayRequest]:
        while True:
            request = await queue.get()
            if request is None:
                return
            self.sent += 1
            yield request

    async def _run(self) -> None:
        failures = 0
        try:
            while any(p.open for p in self._seats.values()):
                queue: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
                # (re)subscribe every open seat where it was, then resend unanswered acts
                for playing in self._seats.values():
                    if playing.open:
                        queue.put_nowait(playing.subscribe())
                for act, _ in self._pending.values():
                    queue.put_nowait(pb.PlayRequest(act=act))
                self._requests = queue
                self.streams += 1
                call = self.client.stub.Play(self._outgoing(queue))
                try:
                    async for message in call:
                        failures = 0
                        self.received += 1
                        self._dispatch(message)
                        # (the result of a game's last act may come after its end)
                        if not self._pending and not any(p.open for p in self._seats.values()):
                            return
                except grpc.aio.AioRpcError as exc:
                    failures += 1
                    if not _stream_dropped(exc) or failures > self.client.retry.attempts:
                        raise _error(exc) from None
                    await asyncio.sleep(self.client.retry.backoff * 2**failures)
                finally:
                    self._requests = None
                    # (ends the request iterator, which gRPC reads in a task of its own:
                    # left waiting on the queue, that task outlives the call)
                    queue.put_nowait(None)
                    call.cancel()
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                self._failure = exc
            raise
        finally:
            for _, future in self._pending.values():
                if not future.done():
                    future.set_exception(
                        self._failure
                        or CallError(grpc.StatusCode.CANCELLED, "CANCELLED", "session closed")
                    )
            self._prompts.put_nowait(None)

    def _dispatch(self, message: pb.PlayResponse) -> None:
        kind = message.WhichOneof("kind")
        if kind == "result":
            pending = self._pending.get(message.result.request_id)
            if pending is not None and not pending[1].done():
                result = message.result
                if result.HasField("error"):
                    pending[1].set_exception(_play_error(result.error))
                else:
                    pending[1].set_result(result.version)
            return
        if kind == "error":
            return  # (a message the server could not read: this session sends none)
        playing = self._seats.get((message.game_id, message.seat))
        if playing is None:
            return
        if kind == "snapshot":
            playing.from_version = message.snapshot.version
            playing.seen_version = max(playing.seen_version, message.snapshot.version)
        elif kind == "event":
            event = message.event
            playing.cursor = event.cursor
            playing.seen_version = max(playing.seen_version, event.version)
            if self.on_event is not None:
                self.on_event(playing.seat, event)
        elif kind == "prompt":
            prompt = message.prompt
            playing.seat.version = prompt.version
            playing.prompt_version = max(playing.prompt_version, prompt.version)
            self._prompts.put_nowait(
                Prompt(
                    self,
                    playing.seat,
                    prompt.version,
                    prompt.view,
                    list(prompt.legal_actions),
                    prompt.deadline_unix,
                )
            )
        elif kind == "closed":
            error = message.closed.error if message.closed.HasField("error") else None
            if error is not None and error.code == "UNAVAILABLE" and playing.failures < 5:
                # the store was unreachable: subscribe again where the session was
                playing.failures += 1
                asyncio.get_running_loop().call_later(
                    self.client.retry.backoff * 2**playing.failures,
                    lambda: self._send(playing.subscribe()) if playing.open else None,
                )
                return
            playing.open = False
            if message.closed.HasField("final_view"):
                playing.final_view = message.closed.final_view
            if error is not None:
                playing.error = _play_error(error)
                self.errors[(message.game_id, message.seat)] = playing.error
            self._check_done()


class SyncClient:
    """The same calls for code that is not async (one private event loop)."""

    def __init__(self, target: str | Sequence[str], **kw: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._client: GlintwickClient = self._run(_make_client(target, kw))

    def _run(self, awaitable: Awaitable[T]) -> T:
        return self._loop.run_until_complete(awaitable)

    def close(self) -> None:
        self._run(self._client.close())
        self._loop.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_game(self, rule_set: str = "whiskertrail", **kw: Any) -> pb.Game:
        return self._run(self._client.create_game(rule_set, **kw))

    def join(self, game_id: str, **kw: Any) -> SyncSeat:
        return SyncSeat(self, self._run(self._client.join(game_id, **kw)))

    def analyse(
        self, rule_set: str, round_number: int, hand: Sequence[str]
    ) -> pb.AnalyseHandResponse:
        return self._run(self._client.analyse(rule_set, round_number, hand))

    def replay(self, game_id: str) -> pb.Replay:
        return self._run(self._client.replay(game_id))


class SyncSeat:
    def __init__(self, owner: SyncClient, seat: Seat) -> None:
        self._owner = owner
        self.seat = seat

    def view(self) -> pb.View:
        return self._owner._run(self.seat.view())

    def legal_actions(self) -> list[pb.Action]:
        return self._owner._run(self.seat.legal_actions())

    def act(self, action: pb.Action, **kw: Any) -> pb.SubmitActionResponse:
        return self._owner._run(self.seat.act(action, **kw))


async def _make_client(target: str | Sequence[str], kw: dict[str, Any]) -> GlintwickClient:
    # a grpc.aio channel belongs to the loop it is made on: make it on ours
    return GlintwickClient(target, **kw)
