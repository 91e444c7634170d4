"""Play sessions: one stream carries the sessions of many seats, each driven by the log.

A session is a seat's watch (:mod:`.watch`, :mod:`.streams`: the same start points,
the same events, redacted the same way, the same cursors) with two additions: a
*prompt* (the seat's view and legal actions) after the events of every version at
which the seat may act, and *acts*, each applied by :func:`.moves.submit_action`
exactly as a unary SubmitAction is (compare-and-set, idempotency by request id, the
rate limit, typed errors) and answered by its *result* on the stream.  A refusal is a
message, never the end of the stream: the server stopping ends it (UNAVAILABLE, as a
watch), and so does the client once it has half-closed its side and every session it
opened is over (closed or unsubscribed) and every act answered: then with OK.

Many games per stream (docs/API.md, "Play"): every message names its session, a
``(game_id, seat)`` pair, so that a bot-pool worker playing hundreds of house-bot
seats needs one stream, not hundreds.  Each session is one task waiting for the
store's log (``GameStore.wait_log``, as the watch does: no polling loop).  On Redis
those waits cost no connection each: the store's one log reader per process (one
blocking ``XREAD`` over every awaited game, :mod:`services.store.redis`) answers them
all, so a move made through any replica reaches every session at once; a session
resumed after the cursor of the last event received, on any replica, misses nothing
and repeats nothing.  A move of a stream's one game, its act answered in the task that
reads the stream, wakes no session's task: that task prompts the game's prompts-only
sessions itself once its commit lands, their log waits moved on past it
(:meth:`PlayStream._drive`, :class:`~services.store.base.LogCursor`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import structlog

from engine.events import GAME_ENDINGS
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import ServiceError, internal, invalid, store_unavailable
from services.store.base import LogCursor, StoreUnavailableError

from .access import acting_seat
from .context import Caller, Context
from .moves import submit_action
from .play_results import ResultsInPrompts
from .quotas import admit, hold_stream
from .records import Loaded
from .streams import StreamStart, deal_events, shutting_down, stream_start
from .views import fill_view, view_of

log = structlog.get_logger("glintwick.play")

#: messages a stream may have waiting to be sent: its sessions wait (the log keeps
#: what they have not sent yet) rather than a slow client growing the server's memory
OUTBOX_SIZE = 1024
#: a prompt's judgement when the game's record is behind the log the session sent
#: (the log read from one node, the record from another: a Redis Cluster's primary
#: resumed after its replica's promotion answers the reader's XREAD with writes
#: queued on it, never acknowledged, until it learns it was replaced; the same move
#: retried lands on the promoted one).  The session judges again every
#: BEHIND_RECHECK seconds until the record is there (or newer entries come), rather
#: than wait for an entry that nobody will write: both seats waiting for that prompt
BEHIND = -2
BEHIND_RECHECK = 0.25
#: a prompt's judgement when the table is not full yet: no seat may act before every
#: seat is taken (TABLE_NOT_FULL), and a join writes no log entry to wake the session,
#: so it reads the game's record again every WAITING_RECHECK seconds until it is
WAITING = -3
WAITING_RECHECK = 0.5
#: :meth:`PlayStream._prompt`'s answer when the game is over at the version judged (a
#: session of prompts only learns the game's end so, without decoding each entry: the
#: entry that ends a game is its log's last, and the state after it is over)
ENDED = -5
#: sessions one stream may hold (each is a task, and a waiter of the store's one
#: log reader: no connection of its own; tests/e2e/test_play.py plays 300 on one)
MAX_SESSIONS = 1000


def play_error(error: ServiceError) -> pb.PlayError:
    """A refusal as a message: the same code and reason as the unary call's."""
    return pb.PlayError(
        code=error.code.name,
        reason=error.reason,
        message=error.message,
        retry_after_seconds=error.retry_after or 0.0,
    )


def submit_request(act: pb.PlayAct, seat: int | None) -> pb.SubmitActionRequest:
    """The SubmitAction an act is (``seat``: the house-bot seat it names, if any): a
    play session's act is applied exactly as the unary call is."""
    request = pb.SubmitActionRequest(
        game_id=act.game_id,
        expected_version=act.expected_version,
        request_id=act.request_id,
        action=act.action,
    )
    if seat is not None:
        request.seat = seat
    return request


@dataclass(eq=False)
class _Session:
    """One seat's session on a stream."""

    game_id: str
    requested: int | None
    caller: Caller
    seat: int | None = None  # known once authenticated
    ready: asyncio.Future[int | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    task: asyncio.Task[None] | None = None
    #: PlaySubscribe.results_in_prompts: a result rides in the next prompt of its game
    results_in_prompts: bool = False
    #: PlaySubscribe.prompt_once_per_window, and the version at which the claim window
    #: this session last prompted in opened (its answer is judged against the window)
    once_per_window: bool = False
    window_prompted: int = -1
    #: the version of the prompt sent that no act of the seat has followed yet (-1:
    #: none): while one is out, the client may be holding it, waiting for the result
    #: of another act of the game before it answers, so no result of the game is held
    awaiting: int = -1
    #: prompts only: the session's log wait (moved on by the stream after a move it
    #: committed: :meth:`PlayStream._drive`), the version it last judged a prompt at
    #: (as :meth:`PlayStream._play` keeps it), whether it waits on the log for the
    #: next move now, and its messages' maker
    cursor: LogCursor | None = None
    prompted: int = -1
    parked: bool = False
    #: the stream handed the prompt at ``cursor.after`` back to the session's task
    redo: bool = False
    message: Callable[..., pb.PlayResponse] | None = None

    def names(self, seat: int | None) -> bool:
        return seat is None or seat == self.requested or seat == self.seat


class PlayStream(ResultsInPrompts):
    """The server side of one play stream: feed it each client message with
    :meth:`receive`; send what :meth:`responses` yields."""

    def __init__(self, ctx: Context, caller: Caller) -> None:
        self._ctx = ctx
        self._caller = caller
        self._outbox: asyncio.Queue[pb.PlayResponse | None] = asyncio.Queue(OUTBOX_SIZE)
        #: what :meth:`responses` waits on when the outbox is empty (set by a message)
        self._ready: asyncio.Future[None] | None = None
        self._sessions: dict[str, list[_Session]] = {}
        self._acts: set[asyncio.Task[None]] = set()
        #: sessions that ended because the store was unreachable, (game id, seat) → that
        #: refusal: an act for one before it is subscribed again is answered with it
        #: (UNAVAILABLE, retried) rather than as an act of no session
        self._unreachable: dict[tuple[str, int | None], ServiceError] = {}
        self._init_results()
        self._closed = False
        #: the client sent its last message (half-closed): the stream ends, with OK,
        #: once no session is left and every act is answered
        self._half_closed = False
        self._finished = False
        #: counts for the logs and the benchmarks: messages in and out
        self.received = 0
        self.sent = 0

    # ------------------------------------------------------------------ the client's messages

    async def receive(
        self, request: pb.PlayRequest | ServiceError, *, admitted: bool = False
    ) -> None:
        """One client message (a ServiceError: one that could not be decoded);
        ``admitted``: a subscribe already charged to the stream rate limit (the HTTP
        face's, by its early check)."""
        self.received += 1
        if isinstance(request, ServiceError):
            await self._send(pb.PlayResponse(error=play_error(request)))
            return
        kind = request.WhichOneof("kind")
        if kind == "subscribe":
            await self._subscribe(request.subscribe, admitted)
        elif kind == "act":
            # acts run side by side (several games: each its own store round trips);
            # each answers with its result, named by its request id
            game_id = request.act.game_id
            self._inflight[game_id] = self._inflight.get(game_id, 0) + 1
            self._answering(request.act)
            sessions = self._sessions.get(game_id)
            named = request.act.seat if request.act.HasField("seat") else None
            if (
                sessions is not None
                and len(self._sessions) == 1
                and not self._acts
                and any(s.names(named) for s in sessions)
                and not self._prompt_out(game_id)
            ):
                # the stream's one game, a session of the seat the act names (not one
                # subscribed by a message still to read), no other act in flight nor a
                # prompt out that another act may answer meanwhile (a claim window's
                # seats): answered in the reader's task, a task a move fewer (the
                # client's next message, which then waits for this answer, is read
                # after it)
                await self._act(request.act, drive=True)
                return
            task = asyncio.create_task(self._act(request.act))
            self._acts.add(task)
            task.add_done_callback(self._acts.discard)
        elif kind == "unsubscribe":
            await self._unsubscribe(request.unsubscribe)
        else:
            await self._send(
                pb.PlayResponse(error=play_error(invalid("a PlayRequest needs one of its kinds")))
            )

    async def half_closed(self) -> None:
        """The client sent its last message: the stream ends once its sessions are."""
        self._half_closed = True
        await self._finish_if_done()

    async def _finish_if_done(self) -> None:
        """End the stream with OK (after what is waiting to be sent) when the client has
        half-closed it, no session is left and no act is unanswered but the caller's."""
        if not self._half_closed or self._finished or self._closed:
            return
        if any(self._sessions.values()) or self._acts - {asyncio.current_task()}:
            return
        self._finished = True
        await self._outbox.put(None)
        self._signal()

    async def _subscribe(self, request: pb.PlaySubscribe, admitted: bool) -> None:
        requested = request.seat if request.HasField("seat") else None
        game_id = request.game_id
        caller = self._caller
        if request.token:
            caller = Caller(
                token=request.token.strip(),
                request_id=self._caller.request_id,
                address=self._caller.address,
            )
        if not admitted:
            try:
                await admit(self._ctx, "stream", caller)
            except ServiceError as exc:
                await self._send(_closed(game_id, requested, exc))
                return
        for old in [
            s
            for s in self._sessions.get(game_id, [])
            if requested is not None and s.names(requested)
        ]:
            await self._end(old)  # a second subscribe of a seat replaces the first
        sessions = self._sessions.setdefault(game_id, [])  # (_end drops an emptied list)
        if sum(len(s) for s in self._sessions.values()) >= MAX_SESSIONS:
            error = invalid(f"a play stream holds at most {MAX_SESSIONS} sessions")
            await self._send(_closed(game_id, requested, error))
            return
        self._unreachable.pop((game_id, requested), None)
        session = _Session(game_id, requested, caller)
        session.results_in_prompts = request.results_in_prompts
        session.once_per_window = request.prompt_once_per_window
        sessions.append(session)
        session.task = asyncio.create_task(self._run(session, request))

    async def _unsubscribe(self, request: pb.PlayUnsubscribe) -> None:
        seat = request.seat if request.HasField("seat") else None
        for session in [s for s in self._sessions.get(request.game_id, []) if s.names(seat)]:
            await self._end(session)
            closed = pb.PlayResponse(game_id=session.game_id, closed=pb.PlayClosed())
            if session.seat is not None:
                closed.seat = session.seat
            await self._send(closed)
        await self._finish_if_done()

    async def _end(self, session: _Session) -> None:
        sessions = self._sessions.get(session.game_id, [])
        if session in sessions:
            sessions.remove(session)
        if not sessions:
            self._sessions.pop(session.game_id, None)
        if session.task is not None and not session.task.done():
            session.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await session.task
        if not session.ready.done():
            session.ready.cancel()
        await self._release_game(session.game_id)

    async def _act(self, act: pb.PlayAct, drive: bool = False) -> None:
        """``drive``: the act answered in the reader's task, which then prompts the
        game's sessions itself (:meth:`_drive`)."""
        driven = self._drivable(act) if drive else ()
        try:
            await self._answer(act)
        finally:
            for session in driven:
                assert session.cursor is not None
                session.cursor.handles = -1
            self._settle(act.game_id)
        if driven:
            await self._drive(act.game_id, act.expected_version + 1, driven)
        await self._finish_if_done()

    def _drivable(self, act: pb.PlayAct) -> list[_Session]:
        """The sessions of the act's game waiting on its log for the move this act
        makes, told that its commit (or another of this process at that version) is
        theirs to handle here: their waits move on past it, unanswered (prompts only)."""
        expected = act.expected_version
        driven = []
        for session in self._sessions.get(act.game_id, ()):
            cursor = session.cursor
            if session.parked and cursor is not None and cursor.after == expected:
                cursor.handles = expected + 1
                driven.append(session)
        return driven

    async def _drive(self, game_id: str, version: int, driven: list[_Session]) -> None:
        """What each session's task does when its log wait brings ``version`` (a prompt
        if its seat may act there), done in this task for those whose wait the commit
        moved on: a move wakes no session's task.  A game that a move leaves over, or
        otherwise unusual there, goes back to the session's task (``redo``)."""
        loaded = self._ctx.remembered_at(game_id, version)
        usual = loaded is not None and loaded.table_full() and not loaded.state.is_terminal()
        for session in driven:
            cursor = session.cursor
            if (
                cursor is None
                or cursor.after != version
                or session.prompted >= version
                or session.seat is None
                or session.message is None
                or session not in self._sessions.get(game_id, ())
            ):
                continue  # (not moved on here, or the session's task has it already)
            if not usual or loaded is None:
                session.redo = True
                if cursor.wake is not None:
                    cursor.wake()
                continue
            session.prompted = await self._prompt(
                session, session.seat, version, loaded, session.message
            )

    async def _answer(self, act: pb.PlayAct) -> None:
        requested = act.seat if act.HasField("seat") else None
        # (the result written inside its message: one given to the constructor is copied)
        message = pb.PlayResponse(game_id=act.game_id)
        result = message.result
        result.SetInParent()
        result.request_id = act.request_id
        session = await self._session_of(act.game_id, requested)
        seat = requested
        try:
            if session is None:
                unreachable = self._unreachable_for(act.game_id, requested)
                if unreachable is not None:
                    raise unreachable
                raise invalid(
                    f"no session of game {act.game_id[:64]!r}"
                    + ("" if requested is None else f" seat {requested}")
                    + " on this stream: subscribe first",
                )
            seat = session.seat
            # (the act is the SubmitAction, its fields named alike, when it names the
            # seat its session asked for: no request built and the action copied in)
            request = (
                act if requested == session.requested else submit_request(act, session.requested)
            )
            # (its result carries the version alone: no events built for it)
            response = await submit_action(self._ctx, request, session.caller, events=False)
            result.version = response.version
        except ServiceError as exc:
            result.error.CopyFrom(play_error(exc))
        except StoreUnavailableError as exc:
            result.error.CopyFrom(play_error(store_unavailable(exc)))
        except Exception:
            log.exception("play_act_failed", game_id=act.game_id, request_id=act.request_id)
            result.error.CopyFrom(play_error(internal()))
        if seat is not None:
            message.seat = seat
        if not result.HasField("error") and self._landed.get(act.game_id, -1) < result.version:
            self._landed[act.game_id] = result.version
        if session is None or not self._hold(session, message, act.expected_version):
            await self._send(message)

    async def _session_of(self, game_id: str, seat: int | None) -> _Session | None:
        """The authenticated session an act names (None: none, or it was refused).
        Each session of the game is awaited until it is authenticated or over, also
        one subscribed while the act waited: a subscribe that replaces the session
        the act was waiting for (a client resubscribing twice) leaves it the new one."""
        awaited: set[_Session] = set()
        # (one already authenticated, or over, has nothing to await: most often all)
        while waiting := [
            s for s in self._sessions.get(game_id, ()) if not s.ready.done() and s not in awaited
        ]:
            for session in waiting:
                awaited.add(session)
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.shield(session.ready)
        found = [
            s
            for s in self._sessions.get(game_id, [])
            if s.ready.done() and not s.ready.cancelled() and s.names(seat)
        ]
        return found[0] if len(found) == 1 else None

    # ------------------------------------------------------------------ a session

    async def _run(self, session: _Session, request: pb.PlaySubscribe) -> None:
        game_id = session.game_id
        try:
            loaded = await self._ctx.load(game_id)
            seat = acting_seat(
                self._ctx.config, loaded, session.caller, session.requested, required=True
            )
            assert seat is not None
            watch = pb.WatchGameRequest(
                game_id=game_id,
                from_version=request.from_version,
                after_cursor=request.after_cursor,
            )
            start = await stream_start(self._ctx, watch, loaded)
            # (the game's sessions and the client's streams: a lease while it is open)
            hold = await hold_stream(self._ctx, "play", game_id, session.caller)
            session.seat = seat
            self._unreachable.pop((game_id, seat), None)
            session.ready.set_result(seat)
            # (the store's log reader reads the game while a session follows it, and
            # no longer: services/store/redis/log_reader.py)
            self._ctx.store.follow(game_id)
            try:
                final = await self._play(session, seat, loaded, start, request.prompts_only)
            finally:
                self._ctx.store.unfollow(game_id)
                if hold is not None:
                    await hold.release()
            closed = pb.PlayClosed()
            if final is not None:
                closed.final_view.CopyFrom(view_of(final, seat))
            await self._release_game(session.game_id)
            await self._send(pb.PlayResponse(game_id=game_id, seat=seat, closed=closed))
        except asyncio.CancelledError:
            raise
        except ServiceError as exc:
            if exc.reason == "SHUTTING_DOWN":
                await self._stop()
                return
            await self._fail(session, exc)
        except StoreUnavailableError as exc:
            error = store_unavailable(exc)
            self._unreachable[(game_id, session.requested)] = error
            if session.seat is not None:
                self._unreachable[(game_id, session.seat)] = error
            await self._fail(session, error)
        except Exception:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # (a cancelled log read may fail on its way out: the memory store's
                # condition on Python 3.11 does): the session is being ended anyway
                raise asyncio.CancelledError() from None
            log.exception("play_session_failed", game_id=game_id)
            await self._fail(session, internal())
        finally:
            if not session.ready.done():
                session.ready.cancel()
            sessions = self._sessions.get(game_id, [])
            if session in sessions:
                sessions.remove(session)
            if not sessions:
                self._sessions.pop(game_id, None)
                self._prompted.pop(game_id, None)
                self._landed.pop(game_id, None)
            task = asyncio.current_task()
            if task is None or not task.cancelling():  # (an ended session's: its ender checks)
                await self._finish_if_done()

    def _unreachable_for(self, game_id: str, seat: int | None) -> ServiceError | None:
        """The store's refusal that ended the session an act names, if that is why it
        has none (an act naming no seat: of any seat of the game)."""
        if seat is not None:
            return self._unreachable.get((game_id, seat))
        found = [e for (g, _), e in self._unreachable.items() if g == game_id]
        return found[0] if found else None

    async def _fail(self, session: _Session, error: ServiceError) -> None:
        await self._release_game(session.game_id)
        seat = session.seat if session.seat is not None else session.requested
        await self._send(_closed(session.game_id, seat, error))

    async def _play(
        self, session: _Session, seat: int, loaded: Loaded, start: StreamStart, prompts_only: bool
    ) -> Loaded | None:
        """The watch's loop (:func:`.watch._stream`), with a prompt after each version
        the seat may act at (and no events when ``prompts_only``: the log still drives
        the session, its entries only read for their versions, not decoded: the game's
        end is the state's, judged at the newest version for the prompt).
        The game at its end when it is over (its final view closes the session)."""
        ctx, game_id = self._ctx, session.game_id
        poll = ctx.config.watch_poll_seconds

        def message(**kind: object) -> pb.PlayResponse:
            return pb.PlayResponse(game_id=game_id, seat=seat, **kind)  # type: ignore[arg-type]

        if start.snapshot:
            await self._send(message(snapshot=view_of(loaded, seat)))
        version, skip = start.version, start.skip
        if version == 0:
            if not prompts_only:
                for event in deal_events(loaded.state, seat)[skip:]:
                    await self._send(message(event=event))
            version, skip = 1, 0
        prompted = -1
        if skip == 0 and version - 1 == loaded.version:
            prompted = await self._prompt(session, seat, version - 1, loaded, message)
            if prompted == ENDED:  # (and ``last`` below)
                prompted = version - 1
        last = loaded.version if loaded.state.is_terminal() else None
        # (prompts only: the stream may prompt the session itself after a move it
        # committed, its wait moved on meanwhile: :meth:`_drive`)
        cursor = LogCursor(version - 1) if prompts_only else None
        session.cursor, session.message = cursor, message
        while last is None or version <= last:
            behind = prompted == BEHIND
            waiting = prompted == WAITING
            recheck = BEHIND_RECHECK if behind else WAITING_RECHECK if waiting else None
            # the store's entries after the version, waiting a while for one.  Unlike
            # the watch's wait, nothing here watches the server stopping: the stream
            # does (:meth:`responses`), and its end ends every session.  That saves
            # each session two tasks and a wait per version, about 7 % of the server's
            # CPU per move (docs/LOADTEST.md, the log's entry for 5213fc3)
            if ctx.stopping.is_set():
                raise shutting_down()
            wait = poll if recheck is None else recheck
            if cursor is not None:
                cursor.after = version - 1
                session.prompted = prompted
                session.parked = last is None and recheck is None
            items = await ctx.store.wait_log(game_id, version - 1, wait, cursor)
            alive = False  # (the game moved meanwhile: it is still in the store)
            if cursor is not None:
                session.parked = False
                # (moved on, and prompted there, by the stream meanwhile: _drive)
                alive = cursor.after + 1 != version
                version, prompted = cursor.after + 1, session.prompted
            # (or the stream handed the prompt at its version back to the session:
            # the game is not as a move leaves it there, over say, see _drive)
            fresh = bool(items)
            if session.redo:
                session.redo, fresh = False, True
            if prompts_only and items:
                version, skip = items[-1].version + 1, 0
            for item in () if prompts_only else items:
                entry = spb.LogEntry.FromString(item.entry)
                first = skip if item.version == version else 0
                for index in range(first, len(entry.events)):
                    event = codec.stored_event_to_pb(entry.events[index], seat, item.version)
                    await self._send(message(event=convert.place_event(event, index)))
                version, skip = item.version + 1, 0
                if any(e.type in GAME_ENDINGS for e in entry.events):
                    last = item.version
            if (fresh or behind or waiting) and version - 1 > prompted and last is None:
                prompted = await self._prompt(session, seat, version - 1, None, message)
                if prompted == ENDED:
                    prompted = last = version - 1
                elif prompted == BEHIND and not behind:  # (logged once, not every recheck)
                    log.info("play_record_behind", game_id=game_id, seat=seat, version=version - 1)
            if not (fresh or alive) and last is None and await ctx.store.load(game_id) is None:
                return None  # expired from the store
            if not fresh and last is not None:
                break
        assert last is not None
        return await self._at(game_id, last)

    async def _at(self, game_id: str, version: int) -> Loaded | None:
        """The game at ``version`` (the cache of the process that committed it, else the
        store); None if the store has it at another version (or not at all)."""
        try:
            loaded = await self._ctx.load_committed(game_id, version)
        except ServiceError:
            return None  # (expired from the store meanwhile)
        return loaded if loaded.version == version else None

    async def _prompt(
        self,
        session: _Session,
        seat: int,
        version: int,
        loaded: Loaded | None,
        message: Callable[..., pb.PlayResponse],
    ) -> int:
        """A prompt when the game is at ``version`` (every event of it sent) and the
        seat may act; returns the version judged (or -1 when the game is further on:
        its newer events come next, and the prompt after them; BEHIND when the game's
        record is not at ``version`` yet; WAITING while a seat is free; ENDED when the
        game is over at ``version``).  The last result held for the game rides in the
        prompt (:meth:`_hold`)."""
        if loaded is None or loaded.version != version:
            # (most often the game this process remembers at that version: no await)
            remembered = self._ctx.remembered_at(session.game_id, version)
            if remembered is not None:
                loaded = remembered
            else:
                loaded = await self._ctx.load_committed(session.game_id, version)
        if not loaded.table_full() and not loaded.state.is_terminal():
            # (a join writes no log entry: the record as the store has it now)
            loaded = await self._ctx.load(session.game_id)
            if not loaded.table_full() and loaded.version == version:
                return WAITING
        if loaded.version < version:
            return BEHIND
        if loaded.version != version:
            return -1
        state = loaded.state
        if state.is_terminal():
            return ENDED
        if seat not in state.to_act:
            session.awaiting = -1
            return version
        answered = state.claim_answers_given
        if answered and session.once_per_window and session.window_prompted == version - answered:
            return version  # (prompted in this window already: that prompt still holds)
        if self._inflight.get(session.game_id):
            await self._settled(session.game_id)
            if self._landed.get(session.game_id, -1) > version:
                return -1  # (one of them moved the game on: prompted there, if at all)
        # (built in place: a prompt given to the response's constructor is copied, view
        # and all)
        response = message()
        prompt = response.prompt
        prompt.version = version
        fill_view(prompt.view, loaded, seat)
        convert.extend_actions(prompt.legal_actions, state.legal_actions(seat))
        prompt.deadline_unix = loaded.record.deadline_unix
        if state.claim_discarder is not None:
            session.window_prompted = version - answered
        session.awaiting = version
        alone, rides = self._take_held(
            session.game_id, version, seat if session.results_in_prompts else -1, state.to_act
        )
        for each in alone:
            await self._send(each)
        if rides is not None:
            prompt.result.CopyFrom(rides.result)
        await self._send(response)
        return version

    # ------------------------------------------------------------------ the server's messages

    async def _send(self, message: pb.PlayResponse) -> None:
        if not self._closed:
            outbox = self._outbox
            if outbox.full():
                await outbox.put(message)  # (a client slow to read: wait for room)
            else:
                outbox.put_nowait(message)  # (as put() does then, without its coroutine)
            self._signal()

    def _signal(self, _: object = None) -> None:
        """Wake :meth:`responses` waiting for a message (or the server's stop)."""
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_result(None)

    async def _stop(self) -> None:
        """The server stops: the stream ends (UNAVAILABLE; clients resume elsewhere)."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(asyncio.QueueFull):
                self._outbox.put_nowait(None)
            self._signal()

    async def responses(self) -> AsyncIterator[pb.PlayResponse]:
        """What to send, until the server stops (then :func:`.streams.shutting_down`)
        or the client's half-closed stream has nothing left (then it returns: OK).
        Between messages it waits on one future, set by the next message or by the
        server's stop (a task and an ``asyncio.wait`` a message cost about a tenth of
        the server's CPU per move on the memory store)."""
        stopping = asyncio.ensure_future(self._ctx.stopping.wait())
        stopping.add_done_callback(self._signal)
        loop = asyncio.get_running_loop()
        try:
            while True:
                if stopping.done():
                    raise shutting_down()
                if not self._outbox.empty():
                    item = self._outbox.get_nowait()
                    if item is None:
                        if self._finished:
                            return
                        raise shutting_down()
                    self.sent += 1
                    yield item
                    continue
                self._ready = loop.create_future()
                try:
                    await self._ready
                finally:
                    self._ready = None
        finally:
            # (closed while it waits, the generator must not leave its wait pending)
            if not stopping.done():
                stopping.remove_done_callback(self._signal)
                stopping.cancel()

    async def close(self) -> None:
        """The stream ended: end every session and pending act."""
        self._closed = True
        for sessions in list(self._sessions.values()):
            for session in list(sessions):
                await self._end(session)
        for task in list(self._acts):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _closed(game_id: str, seat: int | None, error: ServiceError) -> pb.PlayResponse:
    message = pb.PlayResponse(game_id=game_id, closed=pb.PlayClosed(error=play_error(error)))
    if seat is not None:
        message.seat = seat
    return message


def open_stream(ctx: Context, caller: Caller) -> PlayStream:
    return PlayStream(ctx, caller)


async def check_subscribe(ctx: Context, request: pb.PlaySubscribe, caller: Caller) -> None:
    """Raise the refusal a subscribe would meet (the HTTP face answers it as an error
    before it sends a stream's headers, as the watch's does)."""
    loaded = await ctx.load(request.game_id)
    requested = request.seat if request.HasField("seat") else None
    acting_seat(ctx.config, loaded, caller, requested, required=True)
    watch = pb.WatchGameRequest(
        game_id=request.game_id,
        from_version=request.from_version,
        after_cursor=request.after_cursor,
    )
    await stream_start(ctx, watch, loaded)
