"""Play sessions: one Play stream for any number of seats, a prompt whenever one may act."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc
from grpc_status import rpc_status

from clients.sdk.errors import CallError, call_error
from glintwick.v1 import game_pb2 as pb

if TYPE_CHECKING:  # (the client opens sessions: it imports this module)
    from clients.sdk.client import GlintwickClient, Seat


def play_error(error: pb.PlayError) -> CallError:
    code = getattr(grpc.StatusCode, error.code, grpc.StatusCode.UNKNOWN)
    return CallError(code, error.reason or error.code, error.message)


#: the details of grpc-python's own INTERNAL status of a streaming call whose message
#: could not be written (its core failed the batch: the call's transport already
#: failed, a server gone or the channel closed; grpc/grpc#34148), no server's answer
CORE_WRITE_FAILED = "Internal error from Core"


def stream_dropped(exc: grpc.aio.AioRpcError) -> bool:
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
    fresh prompt follows when the seat may act again).  The answer rides in the next
    prompt of the game on the session's stream (any of its seats'), else it comes
    alone within two seconds: a loop that holds several seats of a game awaits it at
    no cost, one holding a seat whose next move is another client's may wait that
    long (answer prompts in tasks of their own, as :class:`clients.runners.PlayRunner`
    does, to go on meanwhile).
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
    prompted: int = -1  # the version of the newest prompt yielded
    acted_at: int = -1  # the newest version an act of the seat was sent at
    yielded: Prompt | None = None  # the newest prompt yielded
    unreachable: int = 0  # acts refused UNAVAILABLE in a row
    final_view: pb.View | None = None

    def subscribe(self) -> pb.PlayRequest:
        request = pb.PlaySubscribe(game_id=self.seat.game_id, seat=self.seat.seat)
        request.token = self.seat.token
        # (a result that leaves the seat to act again comes inside the prompt it leads to)
        request.results_in_prompts = True
        # (a May I? window prompts the seat once: its prompt holds until it answers)
        request.prompt_once_per_window = True
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

    def seats(self) -> list[Seat]:
        """Every seat added (and not removed), in the order added."""
        return [playing.seat for playing in self._seats.values()]

    @property
    def running(self) -> bool:
        """Whether the stream is on and still takes seats (it ends by itself once every
        seat's session is over: a seat added then needs a new session)."""
        task = self._task
        return task is not None and not task.done() and any(p.open for p in self._seats.values())

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
        playing = self._seats.get((seat.game_id, seat.seat))
        if playing is not None:
            playing.acted_at = max(playing.acted_at, expected_version)
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
        except CallError as exc:
            self._refused(seat, expected_version, exc)
            raise
        finally:
            self._pending.pop(act.request_id, None)
        playing = self._seats.get((seat.game_id, seat.seat))
        if playing is not None:
            playing.seen_version = max(playing.seen_version, version)
            playing.unreachable = 0
        seat.version = version
        return version

    def _refused(self, seat: Seat, version: int, exc: CallError) -> None:
        """An act sent at ``version`` was refused.  ABORTED: the game moved on, and a
        prompt at its new version comes.  Otherwise the game is where it was, and only a
        resumed session would prompt there again: that prompt is yielded again (not
        skipped as one yielded already).  UNAVAILABLE (the store unreachable while the
        seat's session lives on): no prompt comes at all, so the prompt is yielded
        again after a backoff (``RetryPolicy.backoff``, doubled with each such refusal
        in a row, at most 256 times), or nobody would act there again."""
        playing = self._seats.get((seat.game_id, seat.seat))
        if playing is None or exc.code is grpc.StatusCode.ABORTED:
            return
        playing.prompted = min(playing.prompted, version - 1)
        prompt = playing.yielded
        if exc.code is not grpc.StatusCode.UNAVAILABLE or prompt is None:
            return
        if prompt.version != version:
            return
        delay = self.client.retry.backoff * 2 ** min(playing.unreachable, 8)
        playing.unreachable += 1

        def again() -> None:
            # (not if the seat moved on meanwhile, or was prompted at a newer version)
            if playing.open and playing.prompted < version and playing.seen_version <= version:
                self._prompts.put_nowait(prompt)

        asyncio.get_running_loop().call_later(delay, again)

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
            # a prompt the seat has moved past (its act landed, a deadline acted, a newer
            # prompt of it came) is stale; but not a May I? prompt the seat has not
            # answered merely because other seats' answers moved the version: the seat is
            # prompted once a window, and its answer is judged against the window
            if playing is None or prompt.version < playing.prompt_version:
                continue
            if prompt.version < playing.seen_version and (
                prompt.view.phase != pb.PHASE_CLAIM or prompt.version <= playing.acted_at
            ):
                continue
            # (a resumed prompts-only session prompts again at the version it resumed
            # from: the prompt yielded already)
            if playing.prompts_only and prompt.version <= playing.prompted:
                continue
            playing.prompted = max(playing.prompted, prompt.version)
            playing.yielded = prompt
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
                    if not stream_dropped(exc) or failures > self.client.retry.attempts:
                        raise call_error(exc) from None
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

    def _answer(self, result: pb.PlayResult) -> None:
        """An act's result: its waiting ``act`` returns (or raises its refusal)."""
        pending = self._pending.get(result.request_id)
        if pending is not None and not pending[1].done():
            if result.HasField("error"):
                pending[1].set_exception(play_error(result.error))
            else:
                pending[1].set_result(result.version)

    def _dispatch(self, message: pb.PlayResponse) -> None:
        kind = message.WhichOneof("kind")
        if kind == "result":
            self._answer(message.result)
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
            if prompt.HasField("result"):
                # (an act of this game on the stream, any seat's, named by its request
                # id: answered first)
                self._answer(prompt.result)
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
                playing.error = play_error(error)
                self.errors[(message.game_id, message.seat)] = playing.error
            self._check_done()
