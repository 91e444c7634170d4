"""The campaign's bot clients: their channels (balanced over both servers, closed under
their calls by the drop step) and the tables they play, each refused call retried with
its request id and each acknowledged move recorded."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

import grpc

from clients.bots.registry import make_bot
from clients.runners import Hooks, PlayRunner, UnaryRunner
from clients.sdk import (
    CORE_WRITE_FAILED,
    CallError,
    GlintwickClient,
    PlaySession,
    RetryPolicy,
    Seat,
)
from clients.table import Act, Table
from engine.rulesets import WHISKERTRAIL
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from loadtests.faults.figures import Figures, Game

T = TypeVar("T")

# one contract of Whiskertrail (about 55 moves a game): many whole games in minutes
RULES = dataclasses.replace(WHISKERTRAIL, name="faults", contracts=WHISKERTRAIL.contracts[:1])
# codes a client retries (with the same request id): the service's, and a call the
# client itself dropped (CANCELLED) or gave up on (DEADLINE_EXCEEDED)
RETRIED = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}
# codes of a refusal that the table handles (a move the game moved past; a seat taken)
EXPECTED = {grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION}


class Clients:
    """The bot clients' channels (each balancing over both servers); ``dropping``: the
    drop-clients step is on (calls given up mid-flight, channels closed under calls)."""

    def __init__(self, targets: list[str], count: int) -> None:
        self.targets = targets
        self.pool = [self._new() for _ in range(count)]
        self.dropping = False
        #: the channels the drop step closed (with their calls in flight)
        self.closed: set[GlintwickClient] = set()

    def _new(self) -> GlintwickClient:
        # (no retry inside the SDK: the campaign retries and counts every refusal)
        return GlintwickClient(self.targets, retry=RetryPolicy(attempts=1, timeout=5.0))

    def of(self, index: int) -> GlintwickClient:
        """The slot's client now (remembered as this task's channel in use: see
        :func:`closed_under`)."""
        client = self.pool[index % len(self.pool)]
        _in_use.set(client)
        return client

    def closed_under(
        self, client: GlintwickClient | None, code: grpc.StatusCode, message: str
    ) -> bool:
        """Whether a call's failure is the drop step's own doing: ``INTERNAL`` "Internal
        error from Core" is what grpc-python's core answers a call on a channel closed
        with it in flight (grpc/grpc#34148), as ``CANCELLED`` or a UsageError are; only
        on a channel this campaign closed (a server's INTERNAL is never retried)."""
        return (
            code is grpc.StatusCode.INTERNAL
            and message.startswith(CORE_INTERNAL)
            and client is not None
            and client in self.closed
        )

    async def replace(self, index: int) -> None:
        """Close a channel with its calls in flight (they end CANCELLED) for a new one."""
        old = self.pool[index]
        self.pool[index] = self._new()
        self.closed.add(old)
        await old.close()

    async def close(self) -> None:
        for client in self.pool:
            await client.close()


def _name(call: Callable[..., object]) -> str:
    """A call's name (of a partial: its function's), for the figures."""
    while isinstance(call, functools.partial):
        call = call.func
    return getattr(call, "__name__", repr(call))


#: the message of grpc-python's own INTERNAL on a call its channel's closing failed
CORE_INTERNAL = CORE_WRITE_FAILED
#: the client of this task's latest call (Clients.of): the channel a failure was on
_in_use: contextvars.ContextVar[GlintwickClient | None] = contextvars.ContextVar(
    "in_use", default=None
)


def _dropped_by_us() -> bool:
    """A CancelledError that is no cancel of this task: its channel was closed under it."""
    task = asyncio.current_task()
    return task is not None and not task.cancelling()


def _channel_closed() -> CallError:
    return CallError(grpc.StatusCode.CANCELLED, "CHANNEL_CLOSED", "closed mid-call")


async def _cancelled_as_error(clients: Clients, call: Callable[[], Awaitable[T]]) -> T:
    _in_use.set(None)
    try:
        return await call()
    except (asyncio.CancelledError, grpc.aio.UsageError):
        if not _dropped_by_us():
            raise
        raise _channel_closed() from None
    except CallError as exc:
        if clients.closed_under(_in_use.get(), exc.code, exc.message):
            raise _channel_closed() from exc
        raise


class Campaign:
    def __init__(self, clients: Clients, figures: Figures, seed: int) -> None:
        self.clients = clients
        self.figures = figures
        self.rng = random.Random(seed)
        self.games: list[Game] = []
        self.stopping = False  # no new table starts
        self.think = 0.2  # seconds between a table's moves (paces the load)

    async def retrying(
        self, call: Callable[[], Awaitable[T]], patience: float = 120.0, name: str = ""
    ) -> T:
        """``call()`` until it answers (a refusal with a retried code is counted; one
        not retried is in the figures under ``name``, else the call's own)."""
        deadline = time.monotonic() + patience
        delay = 0.05
        while True:
            try:
                return await _cancelled_as_error(self.clients, call)
            except CallError as exc:
                reason = exc.reason if exc.code in RETRIED else exc.code.name
                self.figures.error(reason, exc.message)
                if exc.code not in RETRIED or time.monotonic() > deadline:
                    if exc.code not in EXPECTED:
                        self.figures.refused(name or _name(call), exc)
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def dropped(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, given up after a few milliseconds while the drop step is on."""
        if not self.clients.dropping or self.rng.random() < 0.5:
            return await call()
        try:
            async with asyncio.timeout(self.rng.uniform(0.0005, 0.02)):
                return await call()
        except TimeoutError:
            raise CallError(grpc.StatusCode.CANCELLED, "DROPPED", "given up mid-call") from None

    async def new_game(self, index: int, by_play: bool) -> Game:
        """A two-seat table with both seats joined.  Each join is retried with its own
        request id: a join that landed but whose answer was lost is answered again with
        its seat (and a new token).  (A SEAT_TAKEN all the same would leave the table,
        counted as abandoned, and make another: none is expected.)"""
        while True:
            game = await self.retrying(functools.partial(self._create, index))
            tokens: list[str] = []
            try:
                for seat in range(2):
                    request_id = uuid.uuid4().hex
                    join = functools.partial(self._join, index, game.game_id, seat, request_id)
                    tokens.append(await self.retrying(join))
            except CallError as exc:
                if exc.reason != "SEAT_TAKEN":
                    raise
                self.figures.abandoned += 1
                continue
            played = Game(game.game_id, tokens, by_play)
            self.games.append(played)
            self.figures.games += 1
            return played

    async def _create(self, index: int) -> pb.Game:
        # (the slot's client at each try: the drop step replaces closed ones)
        client = self.clients.of(index)
        return await client.create_game(convert.rules_to_pb(RULES), seats=2, seed=uuid.uuid4().hex)

    async def _join(self, index: int, game_id: str, seat: int, request_id: str) -> str:
        client = self.clients.of(index)
        return (await client.join(game_id, seat=seat, request_id=request_id)).token

    def seat(self, index: int, game: Game, seat: int) -> Seat:
        return self.clients.of(index).seat(game.game_id, seat, game.tokens[seat])

    async def table(self, index: int) -> None:
        """Tables one after another at slot ``index`` until the campaign stops them."""
        while not self.stopping:
            by_play = index % 10 == 0
            game = await self.new_game(index, by_play)
            watched = index % 10 == 5
            watch = asyncio.create_task(self.watch(index, game)) if watched else None
            if by_play:
                await self.play_by_session(index, game)
            else:
                await self.play_unary(index, game)
            if watch is not None:
                await watch
            self.figures.finished += 1

    def acked(self, game: Game, seat: int, version: int, request_id: str) -> None:
        game.acked[version] = f"{seat}:{request_id}"
        self.figures.moves += 1
        now = time.monotonic()
        self.figures.ack_times.append(now)
        game.acked_at.append(now)

    def seated(self, game: Game) -> tuple[Table, random.Random]:
        """The table core of ``game``: a greedy bot per seat, told the rules (a custom
        rule set: no preset by name), and the randomness of its moves and pauses; a
        refusal no retry cured fails the table."""
        bots = [make_bot("greedy", seed=self.rng.randrange(1 << 30)) for _ in range(2)]
        rng = random.Random(self.rng.random())
        table = Table(max_failures=1)
        for seat, bot in enumerate(bots):
            bot.setup(RULES, seat)
            table.sit(game.game_id, seat, bot, rng)
        return table, rng

    def ended(self, game: Game, table: Table) -> None:
        """The table's game is over, or a seat's act was refused for good: it fails."""
        for result in table.results:
            if result.gave_up:
                raise RuntimeError(f"{game.game_id}: an act refused: {result.refusal}")
        game.over = any(result.final_view is not None for result in table.results)

    async def _act(self, index: int, game: Game, act: Act) -> pb.SubmitActionResponse:
        handle = self.seat(index, game, act.seat)
        submit = functools.partial(
            handle.act, act.action, expected_version=act.expected_version, request_id=act.request_id
        )
        return await self.dropped(submit)

    async def play_unary(self, index: int, game: Game) -> None:
        """Both seats by unary calls, the turn followed from seat to seat."""
        table, rng = self.seated(game)
        seats = [self.seat(index, game, s) for s in range(2)]
        await UnaryRunner(table, seats, _Unary(self, game, seats, rng, index)).run()
        self.ended(game, table)

    async def settle(self, index: int, game: Game, act: Act) -> None:
        """A Play act whose answer its session did not give, sent again by SubmitAction
        with its request id: a move that landed is answered (acknowledged), one that
        did not is applied now, or ABORTED if the game moved past it."""
        resend = functools.partial(self._act, index, game, act)
        try:
            answer = await self.retrying(resend)
        except CallError as exc:
            if exc.code is not grpc.StatusCode.ABORTED:
                raise
            return
        self.acked(game, act.seat, answer.version, act.request_id)

    async def settle_all(self, index: int, game: Game, unsettled: dict[str, Act]) -> None:
        """Every act in ``unsettled`` settled (:meth:`settle`), in the order sent."""
        for act in list(unsettled.values()):
            await self.settle(index, game, act)
            unsettled.pop(act.request_id, None)

    async def play_by_session(self, index: int, game: Game) -> None:
        """Both seats on one Play session, reopened after the last event each seat got
        whenever it ends with a seat's session not over (its events: ``game.streams``)."""
        table, rng = self.seated(game)
        events: list[list[tuple[int, int]]] = [[], []]
        game.streams.extend(events)
        cursors = ["", ""]
        # the acts whose answer the session did not give (several at once: the runner
        # answers each prompt in a task of its own, and a task cancelled as the session
        # ends leaves its act unanswered): each sent again with its request id before
        # the session reopens, so that a move that landed is known as acknowledged
        # (and before the table ends: the act whose move ended the game may be one, its
        # session over before a retry could be sent on it)
        unsettled: dict[str, Act] = {}
        while True:
            await self.settle_all(index, game, unsettled)
            client = self.clients.of(index)
            seats = [client.seat(game.game_id, s, game.tokens[s]) for s in range(2)]

            def seen(seat: Seat, event: pb.Event) -> None:
                events[seat.seat].append((event.version, event.index))
                cursors[seat.seat] = event.cursor

            session = client.play_session(on_event=seen)
            try:
                for seat in seats:
                    session.add(seat, after_cursor=cursors[seat.seat])
                try:
                    hooks = _OnSession(self, game, seats, rng, session, unsettled)
                    await PlayRunner(table, hooks).run(session)
                except Unsettled:
                    pass  # the session is gone: settle its acts, then reopen it
                over = all(session.final_view(s) is not None for s in seats)
                for error in session.errors.values():
                    self.figures.error(error.reason)
            except CallError as exc:
                if self.clients.closed_under(client, exc.code, exc.message):
                    exc = _channel_closed()
                self.figures.error(exc.reason if exc.code in RETRIED else exc.code.name)
                over = False
            except grpc.aio.UsageError:  # (its channel closed under it: the drop step)
                self.figures.error("CHANNEL_CLOSED")
                over = False
            finally:
                await session.close()
            if over:
                await self.settle_all(index, game, unsettled)
                for seat in seats:
                    table.closed(game.game_id, seat.seat, session.final_view(seat))
                self.ended(game, table)
                return
            self.figures.play_resumes += 1
            await asyncio.sleep(0.2)

    async def watch(self, index: int, game: Game) -> None:
        """A spectator, resuming after the last event it got until the game's end."""
        received: list[tuple[int, int]] = []
        game.streams.append(received)
        cursor = ""
        while True:
            request = pb.WatchGameRequest(game_id=game.game_id, after_cursor=cursor)
            client = self.clients.of(index)
            stream = client.stub.WatchGame(request, timeout=300)
            try:
                async for item in stream:
                    if item.HasField("event"):
                        received.append((item.event.version, item.event.index))
                        cursor = item.event.cursor
                        if item.event.type == pb.EVENT_TYPE_GAME_ENDED:
                            return
                return
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.CancelledError) as exc:
                if isinstance(exc, asyncio.CancelledError) and not _dropped_by_us():
                    raise
                code = "CHANNEL_CLOSED"
                if isinstance(exc, grpc.aio.AioRpcError) and not self.clients.closed_under(
                    client, exc.code(), exc.details() or ""
                ):
                    code = exc.code().name
                self.figures.error(code)
                self.figures.watch_resumes += 1
                await asyncio.sleep(0.2)
            finally:
                stream.cancel()


class Unsettled(Exception):
    """A Play act its session did not answer (the session or its stream over, or a
    refusal no retry on it cured): settled by SubmitAction before the session reopens."""

    def __init__(self, act: Act) -> None:
        super().__init__(act.request_id)
        self.act = act


@dataclasses.dataclass
class _Table(Hooks):
    """A table's hooks: the campaign's think time after each act the bot chose (paces
    the load); the calls are the transport's (below)."""

    campaign: Campaign
    game: Game
    seats: list[Seat]
    rng: random.Random

    async def acted(self, act: Act, held: float) -> None:
        await asyncio.sleep(self.campaign.think * self.rng.random() * 2)


@dataclasses.dataclass
class _Unary(_Table):
    """Each unary call retried with the same request id on the slot's client of the
    moment (the drop step replaces closed ones), an act given up mid-call while the
    drop step is on, each acknowledged move recorded."""

    index: int  # the table's slot (its client)

    async def call(self, name: str, call: Callable[[], Awaitable[T]], act: Act | None = None) -> T:
        async def attempt() -> T:
            for seat in self.seats:
                seat.client = self.campaign.clients.of(self.index)
            return await (self.campaign.dropped(call) if act is not None else call())

        answer = await self.campaign.retrying(attempt, name=name)
        if act is not None:
            self.campaign.acked(self.game, act.seat, cast(int, answer), act.request_id)
        return answer


@dataclasses.dataclass
class _OnSession(_Table):
    """Each Play act retried on its session while the session can carry it (else
    :class:`Unsettled`); an ABORTED refusal is the table core's (a fresh prompt
    follows), any other ends the session; each acknowledged move recorded."""

    session: PlaySession
    #: the acts sent and not answered yet, by request id (what the table settles)
    unsettled: dict[str, Act]

    async def call(self, name: str, call: Callable[[], Awaitable[T]], act: Act | None = None) -> T:
        assert act is not None  # (a Play runner's only call is an act)
        session = self.session
        seat = self.seats[act.seat]
        self.unsettled[act.request_id] = act

        async def attempt() -> T:
            # nothing can carry the act once its seat's session or the stream is over:
            # a retry on it would never be answered
            if session.ended or not session.is_open(seat):
                raise Unsettled(act)
            _in_use.set(session.client)
            return await self.campaign.dropped(call)

        try:
            version = await self.campaign.retrying(attempt, patience=10, name=name)
        except CallError as exc:
            if exc.code is grpc.StatusCode.ABORTED:
                self.unsettled.pop(act.request_id, None)
                raise
            raise Unsettled(act) from exc
        self.unsettled.pop(act.request_id, None)
        self.campaign.acked(self.game, act.seat, cast(int, version), act.request_id)
        return version
