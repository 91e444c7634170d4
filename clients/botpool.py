"""The house-bot pool: a worker that plays every house-bot seat the server lists.

A game may seat *house bots* (``CreateGame``'s ``bots``, or ``FillWithBots``). A pool
worker plays them through the public API exactly as an outside bot would, with the
operator credential:

1. ``ListBotTurns`` with a lease — the games where a house-bot seat may act now,
   longest waiting first, as many as the worker has room for (``concurrency``),
   claimed for ``lease_seconds``: no other worker is handed them meanwhile (the
   store keeps that index atomically with every write; the game's next move ends
   the lease);
2. per turn: ``GetView`` and ``ListLegalActions`` naming the seat, the bot chooses
   (in a thread, so the event loop — perhaps a server's — keeps serving), and
   ``SubmitAction`` at the version it saw;
3. poll again as soon as a move is done (its game's next turn is listed at once),
   else every ``poll_seconds``.

That is the ``"unary"`` transport.  The default, ``"play"``, plays every seat the
worker has been handed on ONE Play stream (``GlintwickClient.play_session()``, many
games per stream): a leased turn's seat is subscribed (``session.add`` of
``client.house_seat``) and stays subscribed until its game is over, so the server
pushes the seat's view and legal actions in a prompt whenever it may act, and a move
is one act on the stream instead of GetView + ListLegalActions + SubmitAction.  The
leases are kept exactly as above: a worker acts on a prompt only when it holds the
lease of that very version (a prompt of a seat not leased wakes the lister at once;
one ``ListBotTurns`` leases the turns of every game waiting); without leases
(``lease_seconds=0``) it acts on every prompt and the compare-and-set settles the
races.  A dropped stream is resumed by the SDK; a stream that fails for good is
opened anew (after a back-off) with every seat still in play.

**Exactly once per turn**, however many workers run against however many replicas:
every submit names the version it saw, and the store's compare-and-set lets exactly
one write land per version; a worker that loses a race (an expired lease, a claim
window a player answered first, ``lease_seconds=0``) gets ``ABORTED`` and moves on
(``PoolStats.races``).  A retried submit (``UNAVAILABLE``) reuses its request id, so
the server applies it once.  A turn whose move failed simply waits for its lease to
run out: that is the retry back-off.  A worker that dies holding leases delays those
turns by ``lease_seconds`` at most.

Bots are deterministic: a move's randomness is seeded from the pool seed, the game,
the seat and the version (:func:`move_rng`), so which worker plays a turn does not
change the move of a memoryless bot.  A worker keeps one bot per (game, seat), so a
bot that remembers (``strong`` counts the discards it has seen) remembers what that
worker saw: with several workers it may know less, never anything it should not.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import structlog

from clients.botrunner import Transport
from clients.bots.base import Bot
from clients.bots.registry import BotSpecError, make_bot
from clients.runners import Answer, PlayRunner, UnaryRunner
from clients.sdk import CallError, GlintwickClient, PlaySession, Prompt, Seat
from clients.table import Outcome, Table, outcome_of
from engine.rulesets import RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb

log = structlog.get_logger("glintwick.botpool")

K = TypeVar("K")
V = TypeVar("V")

#: refusals that mean the worker itself is misconfigured: stop instead of retrying
FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


@dataclass
class PoolStats:
    moves: int = 0  # actions this worker submitted and the server applied
    races: int = 0  # turns another writer (worker, player, deadline) took first
    refused: int = 0  # a bot's choice refused as illegal (a bot bug): logged
    errors: int = 0  # anything else (bot exceptions, RPC failures): logged
    polls: int = 0


#: the longest wait between two listings while the server cannot be reached
MAX_BACKOFF_SECONDS = 30.0


class PoolConfigError(Exception):
    """The server refuses this worker's credential (UNAUTHENTICATED / PERMISSION_DENIED)."""


class BotPool:
    """One pool worker.  ``await pool.run(stop)`` until ``stop`` is set (or cancelled)."""

    def __init__(
        self,
        client: GlintwickClient,
        operator_token: str,
        *,
        concurrency: int = 8,
        poll_seconds: float = 0.2,
        lease_seconds: int = 10,
        seed: str = "",
        grace_seconds: float = 5.0,
        think_in_thread: bool = True,
        name: str = "",
        transport: Transport = "play",
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency is at least 1")
        self.client = client
        self.token = operator_token
        self.concurrency = concurrency
        self.poll_seconds = poll_seconds
        self.lease_seconds = lease_seconds
        self.seed = seed
        self.grace_seconds = grace_seconds
        self.think_in_thread = think_in_thread
        self.name = name or uuid.uuid4().hex[:8]
        self.transport = transport
        self.stats = PoolStats()
        self._log = log.bind(worker=self.name)
        self._inflight: dict[str, asyncio.Task[None]] = {}
        # turns leased to this worker while their game's previous move was still in
        # flight (that move landed and made them): played as soon as it is done,
        # rather than left to wait out their lease
        self._pending: dict[str, pb.BotTurn] = {}
        self._stopping = False
        self._rules: OrderedDict[str, RuleSet] = OrderedDict()
        self._bots: OrderedDict[tuple[str, int, str], Bot] = OrderedDict()
        # while listing fails (the server unreachable, its store down) the wait
        # between listings doubles up to MAX_BACKOFF_SECONDS, with one log line
        # when listing starts failing and one when it works again
        self._wait = poll_seconds
        self._failing = False
        # when the loop last went round (time.monotonic()): a liveness probe's clock
        self.heartbeat = time.monotonic()
        # the play transport: the seats subscribed on the stream (with their bot's
        # strategy), the leases held (turn, until when) and each seat's newest prompt
        self._session: PlaySession | None = None
        self._seats: dict[tuple[str, int], tuple[Seat, str]] = {}
        self._leases: dict[tuple[str, int], tuple[pb.BotTurn, float]] = {}
        self._prompts: dict[tuple[str, int], Prompt] = {}
        self._wake = asyncio.Event()  # list now (a prompt waits for its lease, a move done)
        self._added = asyncio.Event()  # a seat to subscribe while no stream is open
        # the table core decides each move: every prompt answered (the seats of a game
        # may be played by several workers and people), and no seat ever given up
        self._table = Table(in_turn_order=False, max_failures=None)
        self._stream = PlayRunner(self._table, think_in_thread=think_in_thread)

    @property
    def listing_fails(self) -> bool:
        """Whether the last ListBotTurns failed (the server unreachable, its store down)."""
        return self._failing

    # ------------------------------------------------------------------ the loop

    async def run(self, stop: asyncio.Event | None = None) -> PoolStats:
        """Play until ``stop`` is set; then finish the moves in flight (``grace_seconds``
        at most) and return the counts.  Raises :class:`PoolConfigError` when the server
        refuses the credential."""
        stop = stop or asyncio.Event()
        stopping = asyncio.create_task(stop.wait())
        self._log.info(
            "bot_pool_started",
            concurrency=self.concurrency,
            lease_seconds=self.lease_seconds,
            target=self.client.target,
            transport=self.transport,
        )
        reader = asyncio.create_task(self._read()) if self.transport == "play" else None
        try:
            while not stop.is_set():
                self.heartbeat = time.monotonic()
                self._wake.clear()
                await self._fill()
                waiting: set[asyncio.Future[Any]] = {stopping, *self._inflight.values()}
                if reader is not None:
                    if reader.done():
                        reader.result()  # raises what stopped it (PoolConfigError)
                    woken = asyncio.create_task(self._wake.wait())
                    waiting |= {reader, woken}
                await asyncio.wait(waiting, timeout=self._wait, return_when=asyncio.FIRST_COMPLETED)
                if reader is not None:
                    woken.cancel()
        finally:
            self._stopping = True
            stopping.cancel()
            await self._drain()
            if reader is not None:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader
            if self._session is not None:
                await self._session.close()
            self._log.info("bot_pool_stopped", **vars(self.stats))
        return self.stats

    async def _fill(self) -> None:
        """Claim as many turns as there is room for, and start a task for each."""
        now = time.monotonic()
        for key, (_, until) in list(self._leases.items()):
            if until < now:
                del self._leases[key]  # expired unplayed: the turn is anyone's again
        room = self.concurrency - len(self._inflight) - len(self._leases)
        if room <= 0:
            return
        try:
            turns = await self.client.bot_turns(self.token, room, lease_seconds=self.lease_seconds)
        except CallError as exc:
            if exc.code in FATAL:
                raise PoolConfigError(str(exc)) from exc
            self.stats.errors += 1
            self._wait = min(max(self._wait, self.poll_seconds, 0.05) * 2, MAX_BACKOFF_SECONDS)
            if not self._failing:
                self._failing = True
                self._log.warning(
                    "bot_turns_failing",
                    code=exc.code.name,
                    reason=exc.reason,
                    message=exc.message[:200],
                    backoff_max_seconds=MAX_BACKOFF_SECONDS,
                )
            return
        if self._failing:
            self._failing = False
            self._log.info("bot_turns_recovered")
        self._wait = self.poll_seconds
        self.stats.polls += 1
        if self.transport == "play":
            for turn in turns:
                self._leased(turn, now)
            return
        for turn in turns:
            if turn.game_id in self._inflight:
                self._pending[turn.game_id] = turn
            else:
                self._start(turn)

    def _start(self, turn: pb.BotTurn) -> None:
        task = asyncio.create_task(self._play(turn))
        self._inflight[turn.game_id] = task
        task.add_done_callback(functools.partial(self._done, turn.game_id))

    def _done(self, game_id: str, _: asyncio.Task[None]) -> None:
        self._inflight.pop(game_id, None)
        turn = self._pending.pop(game_id, None)
        if turn is not None and not self._stopping:
            self._start(turn)

    async def _drain(self) -> None:
        tasks = list(self._inflight.values())
        if not tasks:
            return
        current = asyncio.current_task()
        if current is None or current.cancelling() == 0:
            _, pending = await asyncio.wait(tasks, timeout=self.grace_seconds)
            tasks = list(pending)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ------------------------------------------------------------------ the Play stream

    def _leased(self, turn: pb.BotTurn, now: float) -> None:
        """A turn listed (and leased) to this worker: subscribe its seat if need be,
        and play it as soon as its prompt is there."""
        key = (turn.game_id, turn.seat)
        if self.lease_seconds > 0:
            self._leases[key] = (turn, now + self.lease_seconds)
        if key not in self._seats:
            seat = self.client.house_seat(turn.game_id, turn.seat, self.token)
            self._seats[key] = (seat, turn.strategy)
            session = self._session
            # a stream whose every seat is over has ended: the reader opens a new one
            if session is not None and session.running:
                session.add(seat)
            else:
                self._added.set()
        self._match(key)

    async def _read(self) -> None:
        """Hold the Play stream of every subscribed seat; hand each prompt to _match."""
        while True:
            await self._added.wait()
            self._added.clear()
            if not self._seats:
                continue
            # prompts only: a house bot decides on the prompt's view, and events would
            # come once per seat of a game the worker holds several of
            session = self.client.play_session(prompts_only=True)
            self._session = session
            for seat, _ in list(self._seats.values()):
                session.add(seat)
            try:
                async for prompt in session:
                    key = (prompt.seat.game_id, prompt.seat.seat)
                    if key not in self._seats:
                        continue
                    newest = self._prompts.get(key)
                    if newest is None or newest.version <= prompt.version:
                        self._prompts[key] = prompt
                    self._match(key)
                # every seat's session is over; acts still waiting for their result (a
                # race lost at a game's end) get it before the stream is let go
                await session.drain(self.client.timeout)
            except CallError as exc:
                if exc.code in FATAL:
                    raise PoolConfigError(str(exc)) from exc
                self.stats.errors += 1
                self._log.warning(
                    "play_stream_failed",
                    code=exc.code.name,
                    reason=exc.reason,
                    seats=len(self._seats),
                )
                await asyncio.sleep(max(self.poll_seconds, 0.05))
            finally:
                for key in session.finished():
                    self._forget(key)
                for key, error in session.errors.items():
                    self._log.warning(
                        "house_seat_refused", game_id=key[0], seat=key[1], reason=error.reason
                    )
                await session.close()
                self._session = None
            if self._seats:
                self._added.set()

    def _forget(self, key: tuple[str, int]) -> None:
        self._seats.pop(key, None)
        self._leases.pop(key, None)
        self._prompts.pop(key, None)
        self._table.leave(*key)

    def _match(self, key: tuple[str, int]) -> None:
        """Play ``key``'s seat if its prompt and (with leases) its lease agree."""
        if key[0] in self._inflight or self._stopping:
            return  # one move per game at a time: matched again when it is done
        prompt = self._prompts.get(key)
        if prompt is None:
            return
        if self.lease_seconds > 0:
            held = self._leases.get(key)
            if held is None:
                self._wake.set()  # prompted, not leased: list now
                return
            turn = held[0]
            # a prompt the seat has moved past; but a May I? prompt holds until the seat
            # answers (prompted once a window: the other seats' answers moved the version)
            if prompt.version < turn.version and prompt.view.phase != pb.PHASE_CLAIM:
                del self._prompts[key]
                return
            if prompt.version > turn.version:
                del self._leases[key]  # the lease ended with the game's move
                self._wake.set()
                return
            del self._leases[key]
        del self._prompts[key]
        strategy = self._seats[key][1]
        task = asyncio.create_task(self._play_prompt(prompt, strategy))
        self._inflight[key[0]] = task
        task.add_done_callback(functools.partial(self._prompt_done, key))

    def _prompt_done(self, key: tuple[str, int], _: asyncio.Task[None]) -> None:
        self._inflight.pop(key[0], None)
        self._wake.set()  # the game's next turn is listed at once
        for other in [k for k in self._prompts if k[0] == key[0]]:
            self._match(other)

    async def _play_prompt(self, prompt: Prompt, strategy: str) -> None:
        """One move on the stream: the bot's choice among the prompt's legal actions,
        one act at the prompt's version."""
        seat = prompt.seat
        turn = pb.BotTurn(
            game_id=seat.game_id, seat=seat.seat, strategy=strategy, version=prompt.version
        )
        bound = self._log.bind(game_id=turn.game_id, seat=turn.seat, strategy=strategy)
        with self._playing(bound):
            await self._seat(turn)
            answer = await self._stream.answer(prompt)
            if answer is not None:  # (None: a prompt without a legal action)
                self._answered(bound, answer)

    # ------------------------------------------------------------------ one move

    async def _play(self, turn: pb.BotTurn) -> None:
        """One move for ``turn``'s seat (the game's next turn is listed anew)."""
        bound = self._log.bind(game_id=turn.game_id, seat=turn.seat, strategy=turn.strategy)
        seat = self.client.house_seat(turn.game_id, turn.seat, self.token)
        with self._playing(bound):
            await self._seat(turn)
            try:
                runner = UnaryRunner(self._table, [seat], think_in_thread=self.think_in_thread)
                answer = await runner.step(turn.seat)
                if answer is None:
                    # not its turn, or the game moved between the view and the legal
                    # actions: it moved on since it was listed
                    self.stats.races += 1
                else:
                    self._answered(bound, answer)
            finally:
                self._table.leave(turn.game_id, turn.seat)

    async def _seat(self, turn: pb.BotTurn) -> None:
        """Seat ``turn``'s bot at the table, its randomness made from each move's version."""
        bot = await self._bot(turn)
        rng = functools.partial(move_rng, self.seed, turn.game_id, turn.seat)
        self._table.sit(turn.game_id, turn.seat, bot, rng)

    @contextlib.contextmanager
    def _playing(self, bound: Any) -> Iterator[None]:
        """A move's failures, counted and logged (a refused call is :meth:`_answered`'s)."""
        try:
            yield
        except CallError as exc:  # (the view or the legal actions could not be read)
            self._failed(bound, exc, outcome_of(exc.code.name), "")
        except BotSpecError as exc:  # a strategy this worker cannot load: one line, no trace
            self.stats.errors += 1
            bound.warning("bot_unavailable", error=str(exc))
        except Exception:
            self.stats.errors += 1
            bound.exception("bot_failed")

    def _answered(self, bound: Any, answer: Answer) -> None:
        """Count what became of a move's act."""
        request_id = answer.act.request_id
        if answer.error is None:
            self.stats.moves += 1
            bound.debug(
                "bot_moved",
                action=answer.act.action.WhichOneof("kind"),
                version=answer.version,
                request_id=request_id,
            )
            return
        self._failed(bound, answer.error, answer.outcome, request_id)

    def _failed(self, bound: Any, exc: CallError, outcome: Outcome, request_id: str) -> None:
        if not outcome.failed:
            # another writer took this version first (ABORTED), or its move ended the
            # game, and with it this seat's session, before this act reached the server
            # (INVALID_ARGUMENT: no session of the seat there; CANCELLED: the stream
            # itself ended with its last session): a race lost, not a refusal
            self.stats.races += 1
            bound.debug("bot_turn_taken", reason=exc.reason, request_id=request_id)
            return
        if outcome is Outcome.GONE:
            return  # the game is gone
        if outcome is Outcome.ILLEGAL:
            self.stats.refused += 1
        else:
            self.stats.errors += 1
        bound.warning(
            "bot_turn_failed",
            code=exc.code.name,
            reason=exc.reason,
            error=exc.message,
            request_id=request_id,
        )

    async def _bot(self, turn: pb.BotTurn) -> Bot:
        key = (turn.game_id, turn.seat, turn.strategy)
        bot = self._bots.get(key)
        if bot is not None:
            self._bots.move_to_end(key)
            return bot
        rules = self._rules.get(turn.game_id)
        if rules is None:
            game = await self.client.game(turn.game_id)
            rules = convert.rules_from_pb(game.rule_set)
            _remember(self._rules, turn.game_id, rules, 1024)
        bot = make_bot(turn.strategy, seed=bot_seed(self.seed, turn.game_id, turn.seat))
        bot.setup(rules, turn.seat)
        _remember(self._bots, key, bot, 4096)
        return bot


def bot_seed(seed: str, game_id: str, seat: int) -> int:
    """The seed of the bot playing ``seat`` of ``game_id`` (any worker's)."""
    return zlib.crc32(f"{seed}:{game_id}:{seat}".encode())


def move_rng(seed: str, game_id: str, seat: int, version: int) -> random.Random:
    """The randomness of one house-bot move (any worker's)."""
    return random.Random(f"{seed}:{game_id}:{seat}:{version}")


def _remember(cache: OrderedDict[K, V], key: K, value: V, size: int) -> None:
    cache[key] = value
    if len(cache) > size:
        cache.popitem(last=False)
