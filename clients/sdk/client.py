"""The async client and the seats it joins: every unary call, with retries and deadlines."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any, TypeVar

import grpc

from clients.sdk.channel import (
    BALANCING_OPTIONS,
    ROUND_ROBIN,
    RetryPolicy,
    channel_credentials,
    channel_target,
)
from clients.sdk.errors import RETRYABLE, call_error
from clients.sdk.play import PlaySession, Prompt
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc

T = TypeVar("T")


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
        if not any(name in BALANCING_OPTIONS for name, _ in options):
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
                error = call_error(exc)
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
                    raise call_error(exc) from None
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
