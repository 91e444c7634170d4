"""Moves: validating an action, and the one path of a submitted one.

request → decode → on the game (the cached one when it is at the version the
client expects, else a fresh load) authenticate the seat, answer a repeated
request id, take the seat's rate-limit token (the store's), check the version → the engine
applies the action (pure) → one compare-and-set write that also appends the log
entry and remembers the idempotent response (and, on the cached game, takes the
seat's rate-limit token itself: one round trip for a move) → respond.  On a cached game every
doubt (the token not in its record, a refusal by the engine or the rate limit, a lost
compare-and-set) sends the move once more, on a fresh load, whose answer is final:
so every answer is the one a fresh load gives (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import structlog

from engine.actions import Action, Claim, PassClaim
from engine.errors import GlintwickError, IllegalActionError, InvalidActionError
from engine.events import Event
from engine.game import GameState
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import ServiceError, conflict, invalid, precondition, stale
from services.store.base import CellTake, LogItem, RateRefusedError

from .access import acting_seat, requested_seat
from .context import Caller, Context
from .quotas import admit_move, seat_cell
from .records import Loaded, next_deadline, store_write, table_not_full

log = structlog.get_logger("glintwick.api")

MAX_REQUEST_ID = 128


def decode_action(message: pb.Action) -> Action:
    try:
        return convert.action_from_pb(message)
    except InvalidActionError as exc:
        raise invalid(str(exc), "MALFORMED_ACTION") from exc


def engine_error(exc: GlintwickError) -> ServiceError:
    if isinstance(exc, IllegalActionError):
        return precondition(exc.reason.value, exc.message)
    return invalid(str(exc), "MALFORMED_ACTION")


async def validate_action(
    ctx: Context, request: pb.ValidateActionRequest, caller: Caller
) -> pb.ValidateActionResponse:
    loaded = await ctx.load(request.game_id)
    seat = acting_seat(ctx.config, loaded, caller, requested_seat(request), required=True)
    assert seat is not None
    action = decode_action(request.action)
    if not loaded.table_full():
        refusal = table_not_full(loaded.record)
        return pb.ValidateActionResponse(
            legal=False, reason=refusal.reason, message=refusal.message, version=loaded.version
        )
    try:
        loaded.state.check(seat, action)
    except IllegalActionError as exc:
        return pb.ValidateActionResponse(
            legal=False, reason=exc.reason.value, message=exc.message, version=loaded.version
        )
    except InvalidActionError as exc:
        raise invalid(str(exc)) from exc
    return pb.ValidateActionResponse(legal=True, version=loaded.version)


async def submit_action(
    ctx: Context,
    request: pb.SubmitActionRequest | pb.PlayAct,
    caller: Caller,
    *,
    events: bool = True,
) -> pb.SubmitActionResponse:
    """``events``: the answer carries the mover's events (a Play act's result carries
    its version alone: its answer, and the one kept for its request id, has none, and
    a repeat of the request gets them from the log entry: :func:`_replayed`).  A
    PlayAct is the same request (the same fields), for the seat it names."""
    # (each field read once: a protobuf field read is a call into upb)
    request_id = request.request_id
    if len(request_id) > MAX_REQUEST_ID:
        raise invalid(f"request_id has at most {MAX_REQUEST_ID} characters")
    action = decode_action(request.action)
    game_id = request.game_id
    expected = request.expected_version
    requested = requested_seat(request)
    # First the cached game when the client and this process agree on the newest
    # version (one store round trip: the compare-and-set alone judges whether it is
    # still the store's), then a fresh load (None), whose answer is final.
    cached = ctx.cached(game_id)
    on_version = cached is not None and cached.version == expected
    tries = [cached, None] if on_version else [None]
    charged = False  # this request took its token from the seat's bucket
    for candidate in tries:
        on_cache = candidate is not None
        loaded = candidate if candidate is not None else await ctx.load(game_id)
        try:
            seat = acting_seat(ctx.config, loaded, caller, requested, required=True)
        except ServiceError:
            if on_cache:
                continue  # (a seat joined since the cached revision, say)
            raise
        assert seat is not None
        idem_key = f"{seat}:{request_id}" if request_id else None
        # (on the cache no look-up: the compare-and-set refuses a stored request id)
        if not on_cache and idem_key is not None:
            earlier = await ctx.store.idempotent_response(game_id, idem_key)
            if earlier is not None:
                answer = await _replayed(ctx, game_id, earlier, expected, action, request_id, seat)
                log.info("action_replayed", **_fields(request, caller, seat, loaded))
                return answer
        if not loaded.table_full():
            if on_cache:
                continue  # (a seat may have been taken since the cached revision)
            raise table_not_full(loaded.record)
        # (the seat's act limit, shared by every replica: services/usecases/quotas.py;
        # on the cache, taken by the commit's own script, no round trip of its own: a
        # move refused before its commit, or by its compare-and-set, takes nothing
        # there and is charged on the fresh load)
        cell = seat_cell(ctx, caller, seat)
        take = cell if on_cache and not charged else None
        if not charged and take is None:
            if cell is not None:
                try:
                    await admit_move(ctx, game_id, cell)
                except ServiceError:
                    if on_cache:
                        continue  # judged fresh: a retry of a landed move gets its answer
                    raise
            charged = True
        if expected != loaded.version and not answers_window(loaded, seat, action, expected):
            raise stale(expected, loaded.version)
        try:
            state, applied = loaded.state.apply_action(seat, action)
        except GlintwickError as exc:
            if on_cache:
                continue  # a stale cache must answer ABORTED, not this: judged fresh
            raise engine_error(exc) from exc
        try:
            response = await commit_move(
                ctx, loaded, seat, action, state, applied, idem_key, by_deadline=False,
                take=take, with_events=events,
            )  # fmt: skip
        except RateRefusedError:
            continue  # (on the cache only) judged fresh: RATE_LIMITED there, or its answer
        if response is not None:
            house_bot = loaded.seated().bots[seat]
            # (bind(): the logger structlog cached on first use, at once; an attribute
            # of its lazy proxy costs a failed look-up first)
            log.bind().info(
                "action_applied",
                game_id=game_id,
                seat=seat,
                request_id=request_id or caller.request_id,
                action=action.KIND,
                version=response.version,
                **({"house_bot": house_bot} if house_bot else {}),
            )
            return response
        if on_cache:
            continue  # the cache was stale (or the request landed before)
        # the game moved on since the load, or the same request landed meanwhile
        if idem_key is not None:
            earlier = await ctx.store.idempotent_response(game_id, idem_key)
            if earlier is not None:
                return await _replayed(ctx, game_id, earlier, expected, action, request_id, seat)
        window = isinstance(action, Claim | PassClaim) and loaded.state.claim_discarder is not None
        if window and seat in loaded.state.to_act and len(tries) < MAX_WINDOW_TRIES:
            # another answer of the window landed first: this one is judged again on the
            # game as it is now (still to answer there, it applies: the order is free)
            tries.append(None)
            continue
        log.info("action_conflict", **_fields(request, caller, seat, loaded))
        raise conflict()
    raise AssertionError("the try on a fresh load answers")


#: loads a claim answer is judged on when other answers of its window land meanwhile
#: (each landing one leaves one seat fewer to race: a window has at most three)
MAX_WINDOW_TRIES = 6


def answers_window(loaded: Loaded, seat: int, action: Action, expected: int) -> bool:
    """Whether ``action``, sent at version ``expected`` that is not the game's, is a
    May I? answer judged against its window rather than the version: sent at any
    version since the window opened (only the window's earlier answers moved it since,
    and the rules make the order of the answers irrelevant: the first claimant in turn
    order after the discarder wins), it applies while its seat has yet to answer.  So
    each seat of a window answers the one prompt it got there, however many answers
    landed before its own."""
    if not isinstance(action, Claim | PassClaim):
        return False
    state = loaded.state
    answered = state.claim_answers_given
    return (
        answered > 0
        and loaded.version - answered <= expected < loaded.version
        and (seat in state.to_act)
    )


async def _replayed(
    ctx: Context,
    game_id: str,
    earlier: bytes,
    expected: int,
    action: Action,
    request_id: str,
    seat: int,
) -> pb.SubmitActionResponse:
    """The first answer to a request id, for the same request again; another request
    under that id (another action or expected version) is refused, REQUEST_ID_REUSED.
    The request is the move its answer's version logged (the log entry keeps the
    action, and its version is the expected one plus one, or later for a claim answer):
    no store change, one log read, and only on a replay.  An answer kept without the
    mover's events (a Play act's: :func:`commit_move`'s ``with_events``) gets them from
    that entry, as a watcher of the seat does (the same messages: tests/unit/test_convert.py)."""
    answer = pb.SubmitActionResponse.FromString(earlier)
    # (a claim answer is judged against its window: it may have landed later than
    # the version after the one it was sent at)
    claim = isinstance(action, Claim | PassClaim)
    same = expected + 1 == answer.version or (claim and expected < answer.version)
    if same:
        items = await ctx.store.read_log(game_id, answer.version - 1, limit=1)
        if items and items[0].version == answer.version:
            entry = spb.LogEntry.FromString(items[0].entry)
            same = convert.action_from_pb(entry.action) == action
            if same and not answer.events:
                add_event = answer.events.add
                for index, stored in enumerate(entry.events):
                    out = add_event()
                    codec.fill_event_pb(out, stored, seat, answer.version)
                    convert.place_event(out, index)
    if not same:
        raise invalid(
            f"request_id {request_id[:40]!r} was used for another request of this seat "
            f"(applied at version {answer.version}): send a new request under a new id",
            "REQUEST_ID_REUSED",
        )
    return answer


def _fields(
    request: pb.SubmitActionRequest | pb.PlayAct, caller: Caller, seat: int, loaded: Loaded
) -> dict[str, object]:
    """A move's log fields."""
    fields: dict[str, object] = {
        "game_id": request.game_id,
        "seat": seat,
        "request_id": request.request_id or caller.request_id,
    }
    house_bot = loaded.record.seats[seat].bot
    if house_bot:
        fields["house_bot"] = house_bot
    return fields


async def apply_move(
    ctx: Context, loaded: Loaded, seat: int, action: Action, *, by_deadline: bool
) -> pb.SubmitActionResponse | None:
    """Apply and commit a move without a request (a default action); None when
    another writer changed the game first."""
    try:
        state, events = loaded.state.apply_action(seat, action)
    except GlintwickError as exc:
        raise engine_error(exc) from exc
    return await commit_move(ctx, loaded, seat, action, state, events, None, by_deadline)


async def commit_move(
    ctx: Context,
    loaded: Loaded,
    seat: int,
    action: Action,
    state: GameState,
    events: list[Event],
    idem_key: str | None,
    by_deadline: bool,
    take: CellTake | None = None,
    with_events: bool = True,
) -> pb.SubmitActionResponse | None:
    """One compare-and-set of an applied move; None when the game moved on first
    (or ``idem_key`` is stored already).  ``take``: the move's act cell, taken in the
    same step (RateRefusedError: refused by it, nothing written).  ``with_events``:
    the answer (and the one kept for ``idem_key``) carries the mover's events."""
    version = state.action_count
    record = spb.StoredGame()
    record.CopyFrom(loaded.record)
    codec.update_state_pb(record.state, loaded.state, state)
    seats = loaded.seated()  # (a move changes no seat: its record's copy has the same)
    full = seats.full
    record.deadline_unix = next_deadline(record, loaded.state, state, ctx.config.clock, full)
    entry = spb.LogEntry(
        version=version,
        seat=seat,
        action=convert.action_message(action),  # (copied in)
        by_deadline=by_deadline,
        request_id=idem_key or "",
    )
    stored = entry.events
    for event in events:
        codec.fill_stored_event(stored.add(), event)
    # the mover's events as a watcher of that seat gets them from the log (written
    # from the engine's events: the same message, tests/unit/test_convert.py checks,
    # at a third of the cost of reading the stored Structs back)
    response = pb.SubmitActionResponse(version=version)
    if with_events:
        add_event = response.events.add
        for index, event in enumerate(events):
            out = add_event()
            payload = event.for_seat(seat)
            convert.fill_event(out, payload.pop("type"), payload.pop("seat"), payload, version)
            convert.place_event(out, index)
    write = store_write(
        loaded,
        record,
        state,
        idle=ctx.config.idle,
        now=ctx.config.clock(),
        by_deadline=by_deadline,
        entry=LogItem(version, entry.SerializeToString()),
        idempotency_key=idem_key,
        response=response.SerializeToString() if idem_key else None,
        take=take,
        full=full,
    )
    game_id = record.game_id
    commit = ctx.commit_started(game_id)
    try:
        if not await ctx.store.commit(game_id, loaded.revision, write):
            return None
        ctx.committed(loaded, record, state, seats)
    finally:
        ctx.commit_answered(game_id, commit)
    return response
