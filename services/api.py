"""The application core: one coroutine per RPC, shared by the gRPC and HTTP faces.

A move's full path: decode and authenticate the seat → load the game (record +
revision) from the store → the engine validates and applies the action (pure) →
one compare-and-set write that also appends the log entry and remembers the
idempotent response → respond.  Watchers read the log.  The fast path skips the
load when the move's expected version is the one of the newest game this process
has cached; the compare-and-set then decides whether that cache was current, and
on any doubt the full path answers (docs/ARCHITECTURE.md).

Nothing here keeps game state between requests: any replica serves any game.
The per-process things are caches — decoded records keyed by the store's revision
(a record at a revision never changes, so a cached decode is never stale), and
each game's newest cached revision, which may be stale and is only ever used under
the compare-and-set — and the per-seat rate limiter (a replica limits what it
serves).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field

import structlog

from engine.actions import Action, Discard, Draw, DrawSource, EndTurn, PassClaim
from engine.cards import JOKER_RANK, NO_SUIT, SUITS, cards_from_codes, kind_code
from engine.cards import card as card_of
from engine.errors import GlintwickError, IllegalActionError, InvalidActionError
from engine.events import Event
from engine.game import GameState, Phase
from engine.rulesets import PRESETS, RuleSet
from engine.solver import Analysis, analyse, best_selection
from engine.views import seat_view, spectator_view
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import (
    ServiceError,
    conflict,
    denied,
    invalid,
    not_found,
    precondition,
    rate_limited,
    stale,
    unauthenticated,
)
from services.store.base import GameExistsError, GameStore, LogItem, Write

log = structlog.get_logger("glintwick.api")

MAX_HAND = 30
MAX_SEED_BYTES = 64
MAX_REQUEST_ID = 128
MAX_STRATEGY = 64
DEFAULT_FILL_STRATEGY = "greedy"
MAX_BOT_TURNS = 1000
MAX_LEASE_SECONDS = 300


# Request ids for calls that bring none: unique within the process by a counter,
# across processes and restarts by a random prefix (a uuid4 per call costs a
# getrandom() system call and ten times the time, on every RPC)
_REQUEST_PREFIX = secrets.token_hex(6)
_request_numbers = itertools.count(1)


def new_request_id() -> str:
    return f"{_REQUEST_PREFIX}-{next(_request_numbers):x}"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: the bearer token (if any) and the request id for the logs."""

    token: str | None = None
    request_id: str = ""


@dataclass
class Loaded:
    revision: int
    record: spb.StoredGame
    state: GameState

    @property
    def version(self) -> int:
        return self.state.action_count


class RateLimiter:
    """A token bucket per key: ``rate`` requests per second, bursts of ``burst``."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def allow(self, key: str) -> bool:
        if self._rate <= 0:
            return True
        now = self._clock()
        tokens, last = self._buckets.pop(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - last) * self._rate)
        allowed = tokens >= 1.0
        self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
        if len(self._buckets) > 100_000:
            self._buckets.popitem(last=False)
        return allowed


@dataclass
class ServiceConfig:
    operator_token: str | None = None
    rate_per_second: float = 500.0
    rate_burst: int = 1000
    watch_poll_seconds: float = 5.0
    cache_size: int = 4096
    clock: Callable[[], float] = time.time
    presets: Mapping[str, RuleSet] = field(default_factory=lambda: dict(PRESETS))
    # the house-bot strategies a game may name (None: any name; the server passes the
    # bot registry's, so a typo is refused instead of stalling a game)
    bot_strategies: frozenset[str] | None = None
    # a second credential for the house-bot calls only (never CreateGameFromDeck): the
    # in-process bot pool's, when the server has no operator credential
    bot_pool_token: str | None = None


def _token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _engine_error(exc: GlintwickError) -> ServiceError:
    if isinstance(exc, IllegalActionError):
        return precondition(exc.reason.value, exc.message)
    return invalid(str(exc), "MALFORMED_ACTION")


class GameService:
    def __init__(self, store: GameStore, config: ServiceConfig | None = None) -> None:
        self.store = store
        self.config = config or ServiceConfig()
        self._limiter = RateLimiter(self.config.rate_per_second, self.config.rate_burst)
        # the newest revision of each game this process has seen (least recently
        # used first out): a load that finds the store at that revision skips the
        # decoding, and a move whose expected version matches it is applied and
        # committed without a load
        self._newest: OrderedDict[str, Loaded] = OrderedDict()
        self._rules_cache: dict[bytes, RuleSet] = {}

    # ------------------------------------------------------------------ loading

    async def load(self, game_id: str) -> Loaded:
        if not game_id or len(game_id) > 64:
            raise invalid("game_id is required (at most 64 characters)")
        snapshot = await self.store.load(game_id)
        if snapshot is None:
            raise not_found(game_id)
        cached = self._newest.get(game_id)
        if cached is not None and cached.revision == snapshot.revision:
            self._newest.move_to_end(game_id)
            return cached
        record = spb.StoredGame.FromString(snapshot.record)
        state = codec.state_from_pb(record.state, self._rules(record.state.rules))
        loaded = Loaded(snapshot.revision, record, state)
        self._remember(game_id, loaded)
        return loaded

    def _remember(self, game_id: str, loaded: Loaded) -> None:
        newest = self._newest.get(game_id)
        if newest is None or newest.revision <= loaded.revision:
            self._newest[game_id] = loaded
            self._newest.move_to_end(game_id)
            if len(self._newest) > self.config.cache_size:
                self._newest.popitem(last=False)

    def _rules(self, message: pb.RuleSet) -> RuleSet:
        blob = message.SerializeToString(deterministic=True)
        rules = self._rules_cache.get(blob)
        if rules is None:
            rules = convert.rules_from_pb(message)
            if len(self._rules_cache) < 1024:
                self._rules_cache[blob] = rules
        return rules

    def _seat_of(self, loaded: Loaded, caller: Caller, required: bool) -> int | None:
        if caller.token is None:
            if required:
                raise unauthenticated("this call needs a seat token (authorization: Bearer …)")
            return None
        digest = _token_hash(caller.token)
        for seat, info in enumerate(loaded.record.seats):
            if info.joined and hmac.compare_digest(info.token_hash, digest):
                return seat
        raise unauthenticated("the token does not belong to a seat of this game")

    def _is_operator(self, token: str, *, bots: bool) -> bool:
        """The operator credential (or, for the house-bot calls, the bot pool's)."""
        accepted = [self.config.operator_token]
        if bots:
            accepted.append(self.config.bot_pool_token)
        return any(a and hmac.compare_digest(token.encode(), a.encode()) for a in accepted)

    def _require_operator(self, caller: Caller, what: str) -> None:
        if not (self.config.operator_token or self.config.bot_pool_token):
            raise denied(
                f"{what} is disabled on this server (no operator credential)", "OPERATOR_DISABLED"
            )
        if caller.token is None or not self._is_operator(caller.token, bots=True):
            raise unauthenticated(f"{what} needs the operator credential")

    def _acting_seat(
        self, loaded: Loaded, caller: Caller, requested: int | None, required: bool
    ) -> int | None:
        """The seat a request acts or sees for.

        Without ``requested``: the token's seat (None for a spectator).  With it: the
        operator credential may name a house-bot seat (never a human's), a seat token
        only its own seat.
        """
        if requested is None:
            return self._seat_of(loaded, caller, required)
        seats = loaded.record.seats
        if requested >= len(seats):
            raise invalid(f"no seat {requested} in a game of {len(seats)}", "NO_SUCH_SEAT")
        if caller.token is None:
            raise unauthenticated("naming a seat needs its token or the operator credential")
        if self._is_operator(caller.token, bots=True):
            if not seats[requested].bot:
                raise denied(
                    f"seat {requested} is not a house bot: the operator acts for house bots only",
                    "NOT_A_HOUSE_BOT",
                )
            return requested
        own = self._seat_of(loaded, caller, required=True)
        if own != requested:
            raise denied(f"this token is seat {own}'s, not seat {requested}'s", "NOT_YOUR_SEAT")
        return requested

    @staticmethod
    def _requested_seat(
        request: pb.GetViewRequest
        | pb.ListLegalActionsRequest
        | pb.SubmitActionRequest
        | pb.ValidateActionRequest,
    ) -> int | None:
        return request.seat if request.HasField("seat") else None

    def _limit(self, game_id: str, seat: int) -> None:
        if not self._limiter.allow(f"{game_id}:{seat}"):
            raise rate_limited()

    def _game_pb(self, loaded: Loaded) -> pb.Game:
        record = loaded.record
        return pb.Game(
            game_id=record.game_id,
            rule_set=record.state.rules,
            seats=loaded.state.seats,
            seat_info=[
                pb.SeatInfo(seat=i, joined=s.joined, name=s.name, bot=s.bot)
                for i, s in enumerate(record.seats)
            ],
            version=loaded.version,
            finished=loaded.state.is_terminal(),
            deadlines=record.deadlines,
            arranged=record.arranged,
        )

    # ------------------------------------------------------------------ rule sets

    async def list_rule_sets(
        self, request: pb.ListRuleSetsRequest, caller: Caller
    ) -> pb.ListRuleSetsResponse:
        return pb.ListRuleSetsResponse(
            rule_sets=[convert.rules_to_pb(r) for _, r in sorted(self.config.presets.items())]
        )

    def _requested_rules(self, request: pb.CreateGameRequest | pb.AnalyseHandRequest) -> RuleSet:
        """The rule set a request names or gives (the ``rules`` oneof)."""
        # (the custom rule set is read only when given: an unset message field
        # read makes a stub, on every AnalyseHand call)
        which = request.WhichOneof("rules")
        if which == "custom_rule_set":
            try:
                return convert.rules_from_pb(request.custom_rule_set)
            except (InvalidActionError, ValueError) as exc:
                raise invalid(str(exc), "INVALID_RULE_SET") from exc
        if which == "rule_set_name" or which is None:
            chosen = request.rule_set_name or "whiskertrail"
            if chosen not in self.config.presets:
                known = ", ".join(sorted(self.config.presets))
                raise invalid(f"unknown rule set {chosen!r}; known: {known}", "UNKNOWN_RULE_SET")
            return self.config.presets[chosen]
        raise invalid("choose a rule set")

    # ------------------------------------------------------------------ games

    async def create_game(self, request: pb.CreateGameRequest, caller: Caller) -> pb.Game:
        return await self._create(request, {})

    async def create_game_from_deck(
        self, request: pb.CreateGameFromDeckRequest, caller: Caller
    ) -> pb.Game:
        operator = self.config.operator_token
        if not operator:
            raise denied(
                "explicit decks are disabled on this server (no operator credential)",
                "OPERATOR_DISABLED",
            )
        if caller.token is None or not hmac.compare_digest(
            caller.token.encode(), operator.encode()
        ):
            raise unauthenticated("explicit decks need the operator credential")
        orders: dict[int, list[int]] = {}
        for deck in request.decks:
            if deck.round in orders:
                raise invalid(f"round {deck.round} has two deck orders")
            orders[deck.round] = list(deck.cards)
        if not orders:
            raise invalid("give at least one deck order")
        return await self._create(request.game, orders)

    async def _create(self, request: pb.CreateGameRequest, orders: dict[int, list[int]]) -> pb.Game:
        rules = self._requested_rules(request)
        seats = request.seats or rules.max_players
        if not rules.min_players <= seats <= rules.max_players:
            raise invalid(
                f"{rules.name} seats {rules.min_players}..{rules.max_players} players, not {seats}",
                "BAD_SEAT_COUNT",
            )
        if len(request.seed) > MAX_SEED_BYTES:
            raise invalid(f"a seed has at most {MAX_SEED_BYTES} bytes")
        for seat, strategy in request.bots.items():
            if seat >= seats:
                raise invalid(f"bot seat {seat} is not a seat of this game")
            self._check_strategy(strategy)
        seed = request.seed or os.urandom(32)
        try:
            state = GameState.new_game(rules, seats, seed, stock_orders=orders or None)
        except GlintwickError as exc:
            raise invalid(str(exc), "INVALID_DECK" if orders else "INVALID_ARGUMENT") from exc
        game_id = secrets.token_hex(8)
        record = spb.StoredGame(
            game_id=game_id,
            seats=[
                spb.StoredSeat(
                    joined=seat in request.bots,
                    bot=request.bots.get(seat, ""),
                    name=f"bot:{request.bots[seat]}" if seat in request.bots else "",
                )
                for seat in range(seats)
            ],
            deadlines=request.deadlines,
            arranged=bool(orders),
        )
        record.state.CopyFrom(codec.state_to_pb(state, convert.rules_to_pb(rules)))
        record.deadline_unix = self._next_deadline(record, None, state)
        try:
            # one write with its index entries: a crash cannot leave a bots-only
            # game unlisted for the bot workers, or its first deadline unindexed
            await self.store.create(game_id, self._write(None, record, state))
        except GameExistsError as exc:  # 64 random bits: practically never
            raise conflict() from exc
        log.info(
            "game_created", game_id=game_id, rules=rules.name, seats=seats, arranged=bool(orders)
        )
        loaded = Loaded(1, record, state)
        self._remember(game_id, loaded)
        return self._game_pb(loaded)

    async def get_game(self, request: pb.GetGameRequest, caller: Caller) -> pb.Game:
        return self._game_pb(await self.load(request.game_id))

    async def join_game(self, request: pb.JoinGameRequest, caller: Caller) -> pb.JoinGameResponse:
        for _ in range(20):
            loaded = await self.load(request.game_id)
            record = spb.StoredGame()
            record.CopyFrom(loaded.record)
            if request.HasField("seat"):
                seat = request.seat
                if seat >= len(record.seats):
                    raise invalid(
                        f"no seat {seat} in a game of {len(record.seats)}", "NO_SUCH_SEAT"
                    )
                if record.seats[seat].joined:
                    raise precondition("SEAT_TAKEN", f"seat {seat} is taken")
            else:
                free = [i for i, s in enumerate(record.seats) if not s.joined]
                if not free:
                    raise precondition("GAME_FULL", "every seat is taken")
                seat = free[0]
            token = secrets.token_urlsafe(24)
            record.seats[seat].joined = True
            record.seats[seat].name = request.name[:64]
            record.seats[seat].token_hash = _token_hash(token)
            write = self._write(loaded, record, loaded.state)
            if await self.store.commit(request.game_id, loaded.revision, write):
                log.info(
                    "seat_joined", game_id=request.game_id, seat=seat, request_id=caller.request_id
                )
                fresh = self._committed(loaded, record, loaded.state)
                return pb.JoinGameResponse(seat=seat, token=token, game=self._game_pb(fresh))
        raise conflict()

    # ------------------------------------------------------------------ house bots

    def _check_strategy(self, strategy: str) -> None:
        known = self.config.bot_strategies
        if not strategy or len(strategy) > MAX_STRATEGY:
            raise invalid(f"a house bot's strategy is a bot name of 1..{MAX_STRATEGY} characters")
        if known is not None and strategy not in known:
            raise invalid(
                f"unknown bot {strategy!r}; known: {', '.join(sorted(known))}", "UNKNOWN_BOT"
            )

    @staticmethod
    def bot_seat(record: spb.StoredGame, state: GameState) -> int | None:
        """The house-bot seat that may act now, if any (the first by claim priority).

        House bots play once the table is full (every seat joined, by a player or a
        bot) and until the game is over.
        """
        seats = record.seats
        # (who may act first: on most moves none is a bot, and that settles it)
        waiting = next((seat for seat in state.to_act if seats[seat].bot), None)
        if waiting is None or state.is_terminal() or not all(s.joined for s in seats):
            return None
        return waiting

    def _bot_turn(
        self,
        before_record: spb.StoredGame | None,
        before: GameState | None,
        record: spb.StoredGame,
        after: GameState,
    ) -> tuple[bool, bool]:
        """The write's bot-turn fields: whether a house bot may act after it, and
        whether the index may need a change (a bot could act before or after)."""
        waiting = self.bot_seat(record, after) is not None
        was = (
            before_record is not None
            and before is not None
            and self.bot_seat(before_record, before) is not None
        )
        return waiting, waiting or was

    def _write(
        self,
        before: Loaded | None,
        record: spb.StoredGame,
        after: GameState,
        *,
        entry: LogItem | None = None,
        idempotency_key: str | None = None,
        response: bytes | None = None,
    ) -> Write:
        """The store write of ``record`` (holding ``after``) over ``before`` (None: a new
        game): its deadline and bot-turn index fields worked out in one place, so no
        write can forget them (a game missing from the bot-turn index stalls)."""
        bot_turn, bot_turn_changed = self._bot_turn(
            before.record if before else None, before.state if before else None, record, after
        )
        return Write(
            record=record.SerializeToString(),
            entry=entry,
            idempotency_key=idempotency_key,
            response=response,
            finished=after.is_terminal(),
            deadline=record.deadline_unix or None,
            deadline_changed=before is None or record.deadline_unix != before.record.deadline_unix,
            bot_turn=bot_turn,
            bot_turn_changed=bot_turn_changed,
        )

    def _committed(self, before: Loaded, record: spb.StoredGame, after: GameState) -> Loaded:
        """Remember what a successful write of ``record`` over ``before`` stored."""
        loaded = Loaded(before.revision + 1, record, after)
        self._remember(record.game_id, loaded)
        return loaded

    async def fill_with_bots(self, request: pb.FillWithBotsRequest, caller: Caller) -> pb.Game:
        strategy = request.strategy or DEFAULT_FILL_STRATEGY
        self._check_strategy(strategy)
        for _ in range(20):
            loaded = await self.load(request.game_id)
            seat = self._seat_of(loaded, caller, required=True)
            free = [i for i, s in enumerate(loaded.record.seats) if not s.joined]
            if not free:
                return self._game_pb(loaded)  # already full: nothing to do (idempotent)
            record = spb.StoredGame()
            record.CopyFrom(loaded.record)
            for i in free:
                record.seats[i].joined = True
                record.seats[i].bot = strategy
                record.seats[i].name = f"bot:{strategy}"
            write = self._write(loaded, record, loaded.state)
            if await self.store.commit(request.game_id, loaded.revision, write):
                log.info(
                    "seats_filled_with_bots",
                    game_id=request.game_id,
                    seat=seat,
                    bots=free,
                    strategy=strategy,
                    request_id=caller.request_id,
                )
                return self._game_pb(self._committed(loaded, record, loaded.state))
        raise conflict()

    async def list_bot_turns(
        self, request: pb.ListBotTurnsRequest, caller: Caller
    ) -> pb.ListBotTurnsResponse:
        self._require_operator(caller, "listing house-bot turns")
        limit = min(request.limit or 100, MAX_BOT_TURNS)
        lease = min(request.lease_seconds, MAX_LEASE_SECONDS)
        ids = await self.store.bot_turns(limit, float(lease))
        found = await asyncio.gather(*(self._load_if_any(i) for i in ids))
        response = pb.ListBotTurnsResponse()
        for loaded in found:
            seat = None if loaded is None else self.bot_seat(loaded.record, loaded.state)
            if loaded is None or seat is None:
                continue  # gone, or moved on since the index was read
            response.turns.append(
                pb.BotTurn(
                    game_id=loaded.record.game_id,
                    seat=seat,
                    strategy=loaded.record.seats[seat].bot,
                    version=loaded.version,
                )
            )
        return response

    async def _load_if_any(self, game_id: str) -> Loaded | None:
        try:
            return await self.load(game_id)
        except ServiceError:
            return None

    # ------------------------------------------------------------------ views

    def _view(self, loaded: Loaded, seat: int | None) -> pb.View:
        plain = seat_view(loaded.state, seat) if seat is not None else spectator_view(loaded.state)
        return convert.view_to_pb(
            plain, loaded.record.game_id, loaded.version, loaded.record.deadline_unix
        )

    async def get_view(self, request: pb.GetViewRequest, caller: Caller) -> pb.View:
        loaded = await self.load(request.game_id)
        seat = self._acting_seat(loaded, caller, self._requested_seat(request), required=False)
        return self._view(loaded, seat)

    async def list_legal_actions(
        self, request: pb.ListLegalActionsRequest, caller: Caller
    ) -> pb.ListLegalActionsResponse:
        loaded = await self.load(request.game_id)
        seat = self._acting_seat(loaded, caller, self._requested_seat(request), required=True)
        assert seat is not None
        actions = loaded.state.legal_actions(seat)
        return pb.ListLegalActionsResponse(
            version=loaded.version, seat=seat, actions=convert.legal_actions_to_pb(actions)
        )

    # ------------------------------------------------------------------ moves

    async def validate_action(
        self, request: pb.ValidateActionRequest, caller: Caller
    ) -> pb.ValidateActionResponse:
        loaded = await self.load(request.game_id)
        seat = self._acting_seat(loaded, caller, self._requested_seat(request), required=True)
        assert seat is not None
        action = self._decode_action(request.action)
        try:
            loaded.state.check(seat, action)
        except IllegalActionError as exc:
            return pb.ValidateActionResponse(
                legal=False, reason=exc.reason.value, message=exc.message, version=loaded.version
            )
        except InvalidActionError as exc:
            raise invalid(str(exc)) from exc
        return pb.ValidateActionResponse(legal=True, version=loaded.version)

    @staticmethod
    def _decode_action(message: pb.Action) -> Action:
        try:
            return convert.action_from_pb(message)
        except InvalidActionError as exc:
            raise invalid(str(exc), "MALFORMED_ACTION") from exc

    async def submit_action(
        self, request: pb.SubmitActionRequest, caller: Caller
    ) -> pb.SubmitActionResponse:
        if len(request.request_id) > MAX_REQUEST_ID:
            raise invalid(f"request_id has at most {MAX_REQUEST_ID} characters")
        action = self._decode_action(request.action)
        limited = False
        newest = self._newest.get(request.game_id)
        if newest is not None and newest.version == request.expected_version:
            # The fast path: the client and this process agree on the newest version,
            # so try the move on the cached game and let the compare-and-set judge
            # whether that is still the store's.  One store round trip per move; on
            # any doubt (unknown token, engine error, lost race) the full path below
            # answers from a fresh load, so the result is always the one it gives.
            seat = self._seat_or_none(newest, caller, self._requested_seat(request))
            if seat is not None:
                try:
                    state, events = newest.state.apply_action(seat, action)
                except GlintwickError:
                    pass  # a stale cache must answer ABORTED, not this: judge it fresh
                else:
                    # over the limit: the full path decides (a retry of a move that
                    # landed gets its stored answer there, before the limit)
                    limited = self._limiter.allow(f"{request.game_id}:{seat}")
                if limited:
                    idem_key = f"{seat}:{request.request_id}" if request.request_id else None
                    response = await self._commit_move(
                        newest, seat, action, state, events, idem_key, by_deadline=False
                    )
                    if response is not None:
                        house_bot = newest.record.seats[seat].bot
                        self._log_applied(request, caller, seat, action, response, house_bot)
                        return response
        return await self._submit_loaded(request, caller, action, limited)

    async def _submit_loaded(
        self, request: pb.SubmitActionRequest, caller: Caller, action: Action, limited: bool
    ) -> pb.SubmitActionResponse:
        loaded = await self.load(request.game_id)
        seat = self._acting_seat(loaded, caller, self._requested_seat(request), required=True)
        assert seat is not None
        bound = log.bind(
            game_id=request.game_id, seat=seat, request_id=request.request_id or caller.request_id
        )
        if loaded.record.seats[seat].bot:
            bound = bound.bind(house_bot=loaded.record.seats[seat].bot)
        idem_key = f"{seat}:{request.request_id}" if request.request_id else None
        if idem_key is not None:
            earlier = await self.store.idempotent_response(request.game_id, idem_key)
            if earlier is not None:
                bound.info("action_replayed")
                return pb.SubmitActionResponse.FromString(earlier)
        if not limited:
            self._limit(request.game_id, seat)
        if request.expected_version != loaded.version:
            raise stale(request.expected_version, loaded.version)
        response = await self._apply(loaded, seat, action, idem_key, by_deadline=False)
        if response is None:
            if idem_key is not None:
                earlier = await self.store.idempotent_response(request.game_id, idem_key)
                if earlier is not None:
                    return pb.SubmitActionResponse.FromString(earlier)
            bound.info("action_conflict")
            raise conflict()
        self._log_applied(request, caller, seat, action, response, loaded.record.seats[seat].bot)
        return response

    @staticmethod
    def _log_applied(
        request: pb.SubmitActionRequest,
        caller: Caller,
        seat: int,
        action: Action,
        response: pb.SubmitActionResponse,
        house_bot: str = "",
    ) -> None:
        log.info(
            "action_applied",
            game_id=request.game_id,
            seat=seat,
            request_id=request.request_id or caller.request_id,
            action=action.KIND,
            version=response.version,
            **({"house_bot": house_bot} if house_bot else {}),
        )

    def _seat_or_none(self, loaded: Loaded, caller: Caller, requested: int | None) -> int | None:
        try:
            return self._acting_seat(loaded, caller, requested, required=True)
        except ServiceError:
            return None

    async def _apply(
        self, loaded: Loaded, seat: int, action: Action, idem_key: str | None, by_deadline: bool
    ) -> pb.SubmitActionResponse | None:
        """Apply and commit; None when another writer changed the game first."""
        try:
            state, events = loaded.state.apply_action(seat, action)
        except GlintwickError as exc:
            raise _engine_error(exc) from exc
        return await self._commit_move(loaded, seat, action, state, events, idem_key, by_deadline)

    async def _commit_move(
        self,
        loaded: Loaded,
        seat: int,
        action: Action,
        state: GameState,
        events: list[Event],
        idem_key: str | None,
        by_deadline: bool,
    ) -> pb.SubmitActionResponse | None:
        """One compare-and-set of an applied move; None when the game moved on first."""
        version = state.action_count
        record = spb.StoredGame()
        record.CopyFrom(loaded.record)
        codec.update_state_pb(record.state, loaded.state, state)
        record.deadline_unix = self._next_deadline(record, loaded.state, state)
        entry = spb.LogEntry(
            version=version,
            seat=seat,
            action=convert.action_to_pb(action),
            by_deadline=by_deadline,
            request_id=idem_key or "",
        )
        stored = entry.events
        for event in events:
            codec.fill_stored_event(stored.add(), event)
        # the mover's events as a watcher of that seat gets them from the log
        response = pb.SubmitActionResponse(version=version)
        add_event = response.events.add
        for event_message in stored:
            codec.fill_event_pb(add_event(), event_message, seat, version)
        write = self._write(
            loaded,
            record,
            state,
            entry=LogItem(version, entry.SerializeToString()),
            idempotency_key=idem_key,
            response=response.SerializeToString() if idem_key else None,
        )
        if not await self.store.commit(record.game_id, loaded.revision, write):
            return None
        self._committed(loaded, record, state)
        return response

    # ------------------------------------------------------------------ deadlines

    def _next_deadline(
        self, record: spb.StoredGame, before: GameState | None, after: GameState
    ) -> float:
        """When the running deadline passes (0: none).

        A turn's deadline starts when the turn starts and runs through its draw and
        plays; a claim window's starts when the window opens.
        """
        if after.is_terminal():
            return 0.0
        limits = record.deadlines
        seconds = limits.claim_seconds if after.phase is Phase.CLAIM else limits.turn_seconds
        if not seconds:
            return 0.0
        same_stage = (
            before is not None
            and before.round_number == after.round_number
            and (before.phase is Phase.CLAIM) == (after.phase is Phase.CLAIM)
            and before.current == after.current
            and record.deadline_unix > 0
        )
        if same_stage:
            return record.deadline_unix
        return self.config.clock() + seconds

    @staticmethod
    def default_action(state: GameState, seat: int) -> Action:
        """The documented safe move for a seat whose deadline passed.

        Claim window: pass.  Draw: from the stock (from the discard pile where the
        stock cannot be drawn).  Play: discard the highest-penalty card it may
        (ties: the lowest id); end the turn where there are no discards.
        """
        legal = state.legal_actions(seat)
        if state.phase is Phase.CLAIM:
            return PassClaim()
        draws = [a for a in legal if isinstance(a, Draw)]
        if draws:
            stock = [a for a in draws if a.source is DrawSource.STOCK]
            return stock[0] if stock else draws[0]
        discards = [a for a in legal if isinstance(a, Discard)]
        if discards:
            rules = state.rules
            return max(
                discards, key=lambda a: (rules.penalty(card_of(a.card, rules.decks)), -a.card)
            )
        if any(isinstance(a, EndTurn) for a in legal):
            return EndTurn()
        return legal[0]

    async def expire_deadlines(self) -> int:
        """Apply default actions for every passed deadline; returns how many were applied.

        Any replica may run this at the same time as others: each default action is
        one compare-and-set, so exactly one replica's write lands.
        """
        applied = 0
        now = self.config.clock()
        for game_id in await self.store.due_deadlines(now):
            for _ in range(16):
                try:
                    loaded = await self.load(game_id)
                except ServiceError:
                    break
                deadline = loaded.record.deadline_unix
                if not deadline or deadline > now or loaded.state.is_terminal():
                    break
                seat = loaded.state.to_act[0]
                action = self.default_action(loaded.state, seat)
                response = await self._apply(loaded, seat, action, None, by_deadline=True)
                if response is None:
                    break  # another replica got there first
                applied += 1
                log.info(
                    "deadline_action",
                    game_id=game_id,
                    seat=seat,
                    action=action.KIND,
                    version=response.version,
                )
        return applied

    # ------------------------------------------------------------------ watching

    async def watch_game(
        self, request: pb.WatchGameRequest, caller: Caller
    ) -> AsyncGenerator[pb.WatchGameResponse, None]:
        loaded = await self.load(request.game_id)
        seat = self._seat_of(loaded, caller, required=False)
        after = request.from_version
        if after > loaded.version:
            raise invalid(f"from_version {after} is ahead of the game (version {loaded.version})")
        if after == 0:
            yield pb.WatchGameResponse(snapshot=self._view(loaded, seat))
            after = loaded.version
        # a finished game's log ends with its last version: stop once that is sent
        last = loaded.version if loaded.state.is_terminal() else None
        while True:
            if last is not None and after >= last:
                return
            items = await self.store.wait_log(
                request.game_id, after, self.config.watch_poll_seconds
            )
            for item in items:
                entry = spb.LogEntry.FromString(item.entry)
                for stored in entry.events:
                    yield pb.WatchGameResponse(
                        event=codec.stored_event_to_pb(stored, seat, item.version)
                    )
                after = item.version
                if any(e.type == "game_ended" for e in entry.events):
                    last = item.version
            if last is not None and not items:
                return
            if not items:
                snapshot = await self.store.load(request.game_id)
                if snapshot is None:
                    return

    # ------------------------------------------------------------------ analysis and replays

    async def analyse_hand(
        self, request: pb.AnalyseHandRequest, caller: Caller
    ) -> pb.AnalyseHandResponse:
        rules = self._requested_rules(request)
        # (each field read once: a protobuf field read is a call into upb)
        codes = request.hand
        ids = request.hand_ids
        round_number = request.round
        best_only = request.best_only
        if codes and ids:
            raise invalid("give the hand as codes or as ids, not both")
        if len(codes) > MAX_HAND or len(ids) > MAX_HAND:
            raise invalid(f"a hand has at most {MAX_HAND} cards")
        try:
            rules.contract(round_number)
            if ids:
                if len(set(ids)) != len(ids):
                    raise InvalidActionError("a card id appears twice")
                hand = [card_of(i, rules.decks) for i in ids]
                if any(c.id >= rules.deck_size for c in hand):
                    raise InvalidActionError("a card id is not in this rule set's deck")
            else:
                hand = cards_from_codes(codes, rules.decks, rules.jokers)
            if best_only:
                best = best_selection(hand, rules, round_number)
                result = Analysis(best is not None, best, None, ())
            else:
                result = analyse(hand, rules, round_number)
        except GlintwickError as exc:
            raise invalid(str(exc)) from exc
        # Fields set one by one: upb looks every keyword argument up by name, which
        # cost about a fifth more (callgrind) than assigning the attributes.
        response = pb.AnalyseHandResponse()
        response.feasible = result.feasible
        best = result.best
        if best is not None:
            response.points_laid = best.points
            response.jokers = best.jokers
            melds = response.melds
            for index, meld in enumerate(best.melds):
                added = melds.add()
                added.index = index
                added.kind = convert.KIND_TO_PB[meld.kind]
                added.rank = meld.rank
                if meld.suit >= 0:
                    added.suit = SUITS[meld.suit]
                added.owner = -1
                add_card = added.cards.add
                for c in meld.cards:
                    wire = add_card()
                    wire.id = c.id
                    wire.code = c.code
        if result.missing is not None and not best_only:
            response.missing = result.missing
        if result.outs:
            response.outs.extend([_KIND_CODES[kind] for kind in result.outs])
        return response

    async def get_replay(self, request: pb.GetReplayRequest, caller: Caller) -> pb.Replay:
        loaded = await self.load(request.game_id)
        if not loaded.state.is_terminal():
            raise precondition(
                "GAME_NOT_FINISHED", "the replay (with the seed) is published once the game is over"
            )
        replay = pb.Replay(
            game=self._game_pb(loaded),
            seed=loaded.state.seed,
            scores=loaded.state.scores,
            winners=loaded.state.winners(),
            decks=[
                pb.DeckOrder(round=o.round, cards=o.cards) for o in loaded.record.state.stock_orders
            ],
        )
        after = 0
        while True:
            items = await self.store.read_log(request.game_id, after)
            if not items:
                break
            for item in items:
                entry = spb.LogEntry.FromString(item.entry)
                replay.steps.append(
                    pb.ReplayStep(
                        version=item.version,
                        seat=entry.seat,
                        action=entry.action,
                        by_deadline=entry.by_deadline,
                    )
                )
                after = item.version
        return replay

    async def ping(self, request: pb.PingRequest, caller: Caller) -> pb.PingResponse:
        return pb.PingResponse()


# every (rank, suit) kind's code, looked up once per out
_KIND_CODES = {(r, s): kind_code(r, s) for r in range(1, 14) for s in range(4)} | {
    (JOKER_RANK, NO_SUIT): kind_code(JOKER_RANK, NO_SUIT)
}


def replay_events(replay: pb.Replay) -> list[Event]:
    """Re-run a replay from its seed with the engine; the events of every step (for checks)."""
    rules = convert.rules_from_pb(replay.game.rule_set)
    orders = {d.round: list(d.cards) for d in replay.decks}
    state = GameState.new_game(rules, replay.game.seats, replay.seed, stock_orders=orders or None)
    events: list[Event] = []
    for step in replay.steps:
        state, produced = state.apply_action(step.seat, convert.action_from_pb(step.action))
        events.extend(produced)
    return events
