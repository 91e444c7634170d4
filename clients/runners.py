"""The runners: a :class:`~clients.table.Table` played over the SDK, one per transport.

The table core decides; a runner does the I/O its decisions ask for and feeds the
answers back:

* :class:`PlayRunner`: the Play stream (a :class:`~clients.sdk.PlaySession`, any
  number of seats and games on it): each prompt goes to the core, the act it returns
  is one message on the stream, its result or refusal goes back to the core;
* :class:`UnaryRunner`: the unary calls of the SDK's :class:`~clients.sdk.Seat`
  (GetView, ListLegalActions, SubmitAction) for the seats of one game, following the
  turn from seat to seat, and waking on the game's watch stream (or a poll interval)
  when none of its seats may act.

Both take :class:`Hooks`, what a caller adds without touching the loop: ``call``
around each call (retries, injected faults, counting messages, timing a call) and
``acted`` after each act the bot chose, before it is sent (think time, timing the
cycle from one move to the next).  The bot's choice runs inline, or in a worker
thread (``think_in_thread``: a strong bot thinks for tens of milliseconds, and the
event loop, perhaps a server's, keeps serving meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from clients.sdk import CallError, PlaySession, Prompt, Seat
from clients.table import Act, ListActions, Next, Outcome, Over, ReadView, Table, Turn

__all__ = ["Answer", "Hooks", "PlayRunner", "UnaryRunner"]

T = TypeVar("T")


class Hooks:
    """What a caller adds around a runner's I/O; the defaults add nothing."""

    async def call(self, name: str, call: Callable[[], Awaitable[T]], act: Act | None = None) -> T:
        """Around each call: ``name`` is the RPC's (``GetView``, ``ListLegalActions``,
        ``SubmitAction``; ``PlayAct`` for an act on a Play stream), ``act`` the act an
        act's call sends; ``call()`` makes it (again, for a retry: same request id).  An
        act's call answers the game's new version; a :class:`~clients.sdk.CallError` it
        raises is the act's refusal, anything else ends the runner."""
        return await call()

    async def acted(self, act: Act, held: float) -> None:
        """After each act the bot chose, before it is sent; ``held``: when its turn was
        held (``time.perf_counter()``: the prompt taken, the legal actions answered)."""


@dataclass(frozen=True)
class Answer:
    """What became of one act: its outcome (from the core), the game's new version when
    it moved, the refusal otherwise."""

    act: Act
    outcome: Outcome
    version: int | None = None
    error: CallError | None = None


class _Runner:
    def __init__(
        self, table: Table, hooks: Hooks | None = None, *, think_in_thread: bool = False
    ) -> None:
        self.table = table
        self.hooks = hooks or Hooks()
        self.think_in_thread = think_in_thread

    async def _choose(self, turn: Turn) -> Act:
        if self.think_in_thread:
            return await asyncio.to_thread(turn.choose)
        return turn.choose()

    async def _act(
        self,
        turn: Turn,
        started: float,
        name: str,
        send: Callable[[Act], Awaitable[int]],
        session_open: Callable[[], bool],
    ) -> Answer:
        """The bot's choice for ``turn``, sent by ``send``, its answer fed to the core.
        The move's latency: from ``started`` to the choice, and the call (the hook's
        ``acted`` left out: a think time is no latency)."""
        held = time.perf_counter()
        act = await self._choose(turn)
        chosen = time.perf_counter()
        await self.hooks.acted(act, held)
        sent = time.perf_counter()
        try:
            version = await self.hooks.call(name, lambda: send(act), act)
        except CallError as exc:
            outcome = self.table.refused(
                act, exc.code.name, exc.message, session_open=session_open()
            )
            return Answer(act, outcome, error=exc)
        seconds = chosen - started + time.perf_counter() - sent
        return Answer(act, self.table.applied(act, version, seconds), version)


def _no_session() -> bool:
    """(A unary act has no session to end under it.)"""
    return True


class PlayRunner(_Runner):
    """Plays the table's seats on Play streams: :meth:`run` answers every prompt of a
    session until it ends; :meth:`answer` answers one (a bot pool matches its prompts
    to its leases first)."""

    async def answer(self, prompt: Prompt) -> Answer | None:
        """Answer ``prompt`` when the core says so (None: not answered)."""
        started = time.perf_counter()
        seat = prompt.seat
        turn = self.table.prompted(
            seat.game_id, seat.seat, prompt.version, prompt.view, prompt.legal_actions
        )
        if turn is None:
            return None

        async def send(act: Act) -> int:
            return await prompt.act(act.action, request_id=act.request_id)

        return await self._act(turn, started, "PlayAct", send, lambda: prompt.session.is_open(seat))

    async def run(self, session: PlaySession) -> None:
        """Every prompt of ``session`` until each of its seats' sessions is over (a seat
        given up is removed from it); then each seat's final view to the core.  Each
        prompt is answered in a task of its own: an act's result rides in a later prompt
        (results in prompts), so the next prompt is taken while it is on its way."""
        answering: set[asyncio.Task[None]] = set()
        failed: list[BaseException] = []

        def done(task: asyncio.Task[None]) -> None:
            answering.discard(task)
            if not task.cancelled() and task.exception() is not None:
                failed.append(task.exception())  # type: ignore[arg-type]

        async def answer(prompt: Prompt) -> None:
            seat = prompt.seat
            if await self.answer(prompt) is not None and not self.table.playing(
                seat.game_id, seat.seat
            ):
                session.remove(seat)

        try:
            async for prompt in session:
                if failed:
                    raise failed[0]
                task = asyncio.create_task(answer(prompt))
                answering.add(task)
                task.add_done_callback(done)
            while answering:
                await asyncio.wait(set(answering))
            if failed:
                raise failed[0]
        finally:
            for task in list(answering):
                task.cancel()
        for seat in session.seats():
            self.table.closed(seat.game_id, seat.seat, session.final_view(seat))


class UnaryRunner(_Runner):
    """Plays the table's seats of one game by unary calls: :meth:`run` until the game is
    over (or a seat given up); :meth:`step` one look at one seat (a bot pool's turn).

    ``seats``: the SDK's handles of the seats, each seated at the table.  The watch
    stream that wakes the runner is opened the first time it has to wait (a table that
    plays every seat of its game never does: it reads the view of the seat to act).
    """

    def __init__(
        self,
        table: Table,
        seats: Sequence[Seat],
        hooks: Hooks | None = None,
        *,
        poll: float = 0.5,
        think_in_thread: bool = False,
    ) -> None:
        super().__init__(table, hooks, think_in_thread=think_in_thread)
        if len({seat.game_id for seat in seats}) != 1:
            raise ValueError("a unary runner plays the seats of one game")
        self.seats = {seat.seat: seat for seat in seats}
        self.game_id = seats[0].game_id
        self.poll = poll

    async def run(self) -> None:
        wake = asyncio.Event()
        pump: asyncio.Task[None] | None = None
        need: Next = ReadView(next(iter(self.seats)))
        try:
            while not isinstance(need, Over):
                if isinstance(need, ReadView):
                    wake.clear()
                    need = await self._read(need.seat)
                elif isinstance(need, ListActions):
                    await self._move(need)
                    playing = self.table.playing(self.game_id, need.seat)
                    need = ReadView(need.seat) if playing else Over()
                else:
                    if pump is None:
                        pump = asyncio.create_task(self._pump(self.seats[need.seat], wake))
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.poll):  # (wait_for may swallow a cancel)
                            await wake.wait()
                    need = ReadView(need.seat)
        finally:
            if pump is not None:
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump

    async def step(self, seat: int) -> Answer | None:
        """One look at ``seat``: its view, and when it may act, its legal actions and the
        bot's act.  None: nothing was sent (not its turn, the game moved, or over)."""
        need = await self._read(seat)
        return await self._move(need) if isinstance(need, ListActions) else None

    async def _read(self, seat: int) -> Next:
        view = await self.hooks.call("GetView", self.seats[seat].view)
        return self.table.viewed(self.game_id, seat, view)

    async def _move(self, need: ListActions) -> Answer | None:
        started = time.perf_counter()
        handle = self.seats[need.seat]
        legal = await self.hooks.call("ListLegalActions", handle.legal_actions)
        turn = self.table.listed(self.game_id, need.seat, handle.version, legal)
        if turn is None:
            return None

        async def send(act: Act) -> int:
            response = await handle.act(
                act.action, expected_version=act.expected_version, request_id=act.request_id
            )
            return response.version

        return await self._act(turn, started, "SubmitAction", send, _no_session)

    @staticmethod
    async def _pump(seat: Seat, wake: asyncio.Event) -> None:
        with contextlib.suppress(CallError, asyncio.CancelledError):
            async for _ in seat.watch():
                wake.set()
