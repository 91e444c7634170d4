"""Games and seats: creating a game (from a seed or explicit decks), reading it,
joining a seat, filling the empty seats with house bots."""

from __future__ import annotations

import os
import secrets

import structlog

from engine.errors import GlintwickError
from engine.game import GameState
from engine.rulesets import RuleSet
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import conflict, invalid, precondition
from services.store.base import GameExistsError

from .access import require_deck_operator, seat_of
from .context import Caller, Context
from .house_bots import check_strategy
from .records import Loaded, game_message, next_deadline, store_write, token_hash
from .rule_sets import requested_rules

log = structlog.get_logger("glintwick.api")

MAX_SEED_BYTES = 64
MAX_PLAYER_NAME = 64  # characters of JoinGame's name (shown to every seat)
# a seat's compare-and-set retries before the caller gets ABORTED
_SEAT_WRITE_ATTEMPTS = 20


async def create_game(ctx: Context, request: pb.CreateGameRequest, caller: Caller) -> pb.Game:
    return await _create(ctx, request, [])


async def create_game_from_deck(
    ctx: Context, request: pb.CreateGameFromDeckRequest, caller: Caller
) -> pb.Game:
    require_deck_operator(ctx.config, caller)
    if not request.decks:
        raise invalid("give at least one deck order in decks", "INVALID_DECK")
    return await _create(ctx, request.game, list(request.decks))


def _deck_orders(rules: RuleSet, decks: list[pb.DeckOrder]) -> dict[int, list[int]]:
    """The arranged decks by round, checked with the API's field names (``decks[i]``)."""
    orders: dict[int, list[int]] = {}
    everything = list(range(rules.deck_size))
    for i, deck in enumerate(decks):
        if not 1 <= deck.round <= rules.rounds:
            raise invalid(
                f"decks[{i}]: {rules.name} has rounds 1..{rules.rounds}, not {deck.round}",
                "INVALID_DECK",
            )
        if deck.round in orders:
            raise invalid(f"decks[{i}]: round {deck.round} has two deck orders", "INVALID_DECK")
        if sorted(deck.cards) != everything:
            raise invalid(
                f"decks[{i}].cards must hold every card id 0..{rules.deck_size - 1} exactly once",
                "INVALID_DECK",
            )
        orders[deck.round] = list(deck.cards)
    return orders


async def _create(
    ctx: Context, request: pb.CreateGameRequest, decks: list[pb.DeckOrder]
) -> pb.Game:
    rules = requested_rules(ctx, request)
    orders = _deck_orders(rules, decks)
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
            raise invalid(f"bot seat {seat} is not a seat of this game of {seats}", "NO_SUCH_SEAT")
        check_strategy(ctx.config, strategy)
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
    record.deadline_unix = next_deadline(record, None, state, ctx.config.clock)
    try:
        # one write with its index entries: a crash cannot leave a bots-only
        # game unlisted for the bot workers, or its first deadline unindexed
        await ctx.store.create(game_id, store_write(None, record, state))
    except GameExistsError as exc:  # 64 random bits: practically never
        raise conflict() from exc
    log.info("game_created", game_id=game_id, rules=rules.name, seats=seats, arranged=bool(orders))
    loaded = Loaded(1, record, state)
    ctx.remember(game_id, loaded)
    return game_message(loaded)


async def get_game(ctx: Context, request: pb.GetGameRequest, caller: Caller) -> pb.Game:
    return game_message(await ctx.load(request.game_id))


async def join_game(
    ctx: Context, request: pb.JoinGameRequest, caller: Caller
) -> pb.JoinGameResponse:
    if len(request.name) > MAX_PLAYER_NAME:
        raise invalid(f"a player's name has at most {MAX_PLAYER_NAME} characters")
    for _ in range(_SEAT_WRITE_ATTEMPTS):
        loaded = await ctx.load(request.game_id)
        record = spb.StoredGame()
        record.CopyFrom(loaded.record)
        if request.HasField("seat"):
            seat = request.seat
            if seat >= len(record.seats):
                raise invalid(f"no seat {seat} in a game of {len(record.seats)}", "NO_SUCH_SEAT")
            if record.seats[seat].joined:
                raise precondition("SEAT_TAKEN", f"seat {seat} is taken")
        else:
            free = [i for i, s in enumerate(record.seats) if not s.joined]
            if not free:
                raise precondition("GAME_FULL", "every seat is taken")
            seat = free[0]
        token = secrets.token_urlsafe(24)
        record.seats[seat].joined = True
        record.seats[seat].name = request.name
        record.seats[seat].token_hash = token_hash(token)
        write = store_write(loaded, record, loaded.state)
        if await ctx.store.commit(request.game_id, loaded.revision, write):
            log.info(
                "seat_joined", game_id=request.game_id, seat=seat, request_id=caller.request_id
            )
            fresh = ctx.committed(loaded, record, loaded.state)
            return pb.JoinGameResponse(seat=seat, token=token, game=game_message(fresh))
    raise conflict()


async def fill_with_bots(ctx: Context, request: pb.FillWithBotsRequest, caller: Caller) -> pb.Game:
    strategy = request.strategy or ctx.config.default_house_bot
    check_strategy(ctx.config, strategy)
    for _ in range(_SEAT_WRITE_ATTEMPTS):
        loaded = await ctx.load(request.game_id)
        seat = seat_of(loaded, caller, required=True)
        free = [i for i, s in enumerate(loaded.record.seats) if not s.joined]
        if not free:
            return game_message(loaded)  # already full: nothing to do (idempotent)
        record = spb.StoredGame()
        record.CopyFrom(loaded.record)
        for i in free:
            record.seats[i].joined = True
            record.seats[i].bot = strategy
            record.seats[i].name = f"bot:{strategy}"
        write = store_write(loaded, record, loaded.state)
        if await ctx.store.commit(request.game_id, loaded.revision, write):
            log.info(
                "seats_filled_with_bots",
                game_id=request.game_id,
                seat=seat,
                bots=free,
                strategy=strategy,
                request_id=caller.request_id,
            )
            return game_message(ctx.committed(loaded, record, loaded.state))
    raise conflict()
