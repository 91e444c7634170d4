"""Games and seats: creating a game (from a seed or explicit decks), reading it,
listing the games waiting for players (the lobby), joining a seat, filling the
empty seats with house bots."""

from __future__ import annotations

import asyncio
import base64
import hmac
import os
import re
import secrets

import structlog

from engine.errors import GlintwickError, excerpt
from engine.game import GameState
from engine.rulesets import RuleSet
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from glintwick.v1 import game_pb2 as pb
from services import codec
from services.errors import conflict, invalid, precondition
from services.store.base import GameExistsError, OpenGame

from .access import require_deck_operator, seat_of
from .context import Caller, Context
from .house_bots import check_strategy
from .moves import MAX_REQUEST_ID
from .quotas import claim_open_game, release_open_game
from .records import (
    Loaded,
    game_message,
    has_open_seats,
    join_request_hash,
    next_deadline,
    seat_infos,
    store_write,
    table_full,
    token_hash,
)
from .rule_sets import requested_rules

log = structlog.get_logger("glintwick.api")

MAX_SEED_BYTES = convert.MAX_SEED_BYTES  # CreateGameRequest.seed (hex: twice the digits)
MAX_PLAYER_NAME = 64  # characters of JoinGame's name (shown to every seat)
# a seat's compare-and-set retries before the caller gets ABORTED
_SEAT_WRITE_ATTEMPTS = 20
DEFAULT_LOBBY_PAGE = 50
MAX_LOBBY_PAGE = 200
MAX_PAGE_TOKEN = 100  # characters: ours are about 50
_RULE_SET_HASH = re.compile(r"[0-9a-f]{16}")  # RuleSet.hash
# a page token is "lobby1:<the last position read>:<the filter's hash>", base64url:
# opaque to clients, and tied to its filter (AIP-158)
_PAGE_TOKEN_PREFIX = "lobby1"


async def create_game(ctx: Context, request: pb.CreateGameRequest, caller: Caller) -> pb.Game:
    return await _create(ctx, request, [], caller)


async def create_game_from_deck(
    ctx: Context, request: pb.CreateGameFromDeckRequest, caller: Caller
) -> pb.Game:
    require_deck_operator(ctx.config, caller)
    if not request.decks:
        raise invalid("give at least one deck order in decks", "INVALID_DECK")
    return await _create(ctx, request.game, list(request.decks), caller)


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
    ctx: Context, request: pb.CreateGameRequest, decks: list[pb.DeckOrder], caller: Caller
) -> pb.Game:
    rules = requested_rules(ctx, request)
    orders = _deck_orders(rules, decks)
    seats = request.seats or rules.max_players
    if not rules.min_players <= seats <= rules.max_players:
        raise invalid(
            f"{rules.name} seats {rules.min_players}..{rules.max_players} players, not {seats}",
            "BAD_SEAT_COUNT",
        )
    try:
        given_seed = convert.seed_from_hex(request.seed)
    except ValueError as exc:
        raise invalid(str(exc), "INVALID_SEED") from exc
    for seat, strategy in request.bots.items():
        if seat >= seats:
            raise invalid(f"bot seat {seat} is not a seat of this game of {seats}", "NO_SUCH_SEAT")
        check_strategy(ctx.config, strategy)
    game_id = secrets.token_hex(8)
    # the client's open games and the service's games in play (quotas.py): after the
    # request's checks (a request refused for them counts towards neither), before the
    # deal (a flood refused by a quota costs no shuffling)
    counted = await claim_open_game(ctx, caller, game_id)
    seed = given_seed or os.urandom(32)
    try:
        state = GameState.new_game(rules, seats, seed, stock_orders=orders or None)
    except GlintwickError as exc:
        await release_open_game(ctx, counted, game_id)
        raise invalid(str(exc), "INVALID_DECK" if orders else "INVALID_ARGUMENT") from exc
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
    record.state.CopyFrom(codec.state_to_pb(state, codec.stored_rules(rules)))
    record.deadline_unix = next_deadline(record, None, state, ctx.config.clock)
    try:
        # one write with its index entries: a crash cannot leave a bots-only
        # game unlisted for the bot workers, or its first deadline unindexed
        write = store_write(None, record, state, idle=ctx.config.idle, now=ctx.config.clock())
        await ctx.store.create(game_id, write)
    except GameExistsError as exc:  # 64 random bits: practically never
        await release_open_game(ctx, counted, game_id)
        raise conflict() from exc
    # (a write whose outcome is unknown keeps its count: a game never stored is
    # dropped from it when the quota is next reached, as a finished one is)
    log.info("game_created", game_id=game_id, rules=rules.name, seats=seats, arranged=bool(orders))
    loaded = Loaded(1, record, state)
    ctx.remember(game_id, loaded)
    return game_message(loaded)


async def get_game(ctx: Context, request: pb.GetGameRequest, caller: Caller) -> pb.Game:
    return game_message(await ctx.load(request.game_id))


async def list_open_games(
    ctx: Context, request: pb.ListOpenGamesRequest, caller: Caller
) -> pb.ListOpenGamesResponse:
    rule_set_hash = _lobby_filter(ctx, request)
    if request.page_size < 0:
        raise invalid(
            f"page_size is 0..{MAX_LOBBY_PAGE}, not {request.page_size}", "INVALID_PAGE_SIZE"
        )
    size = min(request.page_size or DEFAULT_LOBBY_PAGE, MAX_LOBBY_PAGE)
    after = _page_after(request.page_token, rule_set_hash)
    # one more than the page: whether a next page exists, without an empty last page
    listed = await ctx.store.open_games(rule_set_hash, after, size + 1)
    page = listed[:size]
    found = await asyncio.gather(*(ctx.load_if_any(entry.game_id) for entry in page))
    response = pb.ListOpenGamesResponse()
    for entry, loaded in zip(page, found, strict=True):
        # (the index is written with each record: a game gone or filled since the
        # index was read is simply left out of this page)
        if loaded is not None and has_open_seats(loaded.record, loaded.state):
            response.games.append(_open_game(entry, loaded))
    if len(listed) > size:
        response.next_page_token = _page_token(page[-1].position, rule_set_hash)
    return response


def _lobby_filter(ctx: Context, request: pb.ListOpenGamesRequest) -> str:
    """The rule-set hash a lobby request filters on ("": none)."""
    if request.rule_set_name and request.rule_set_hash:
        raise invalid("give at most one of rule_set_name and rule_set_hash")
    if request.rule_set_name:
        preset = ctx.config.presets.get(request.rule_set_name)
        if preset is None:
            known = ", ".join(sorted(ctx.config.presets))
            raise invalid(
                f"unknown rule set {excerpt(request.rule_set_name)}; known: {known}"
                " (a custom rule set is found by its rule_set_hash)",
                "UNKNOWN_RULE_SET",
            )
        return preset.hash
    if request.rule_set_hash and not _RULE_SET_HASH.fullmatch(request.rule_set_hash):
        raise invalid(f"a rule_set_hash is 16 hex digits, not {excerpt(request.rule_set_hash)}")
    return request.rule_set_hash


def _page_token(position: int, rule_set_hash: str) -> str:
    raw = f"{_PAGE_TOKEN_PREFIX}:{position}:{rule_set_hash}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _page_after(token: str, rule_set_hash: str) -> int:
    """The lobby position a page token resumes after (0: the first page)."""
    if not token:
        return 0
    refused = invalid(
        "page_token is not a next_page_token of a lobby listing with this filter",
        "INVALID_PAGE_TOKEN",
    )
    if len(token) > MAX_PAGE_TOKEN:
        raise refused
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        prefix, position, filtered = raw.split(":", 2)
        after = int(position)
    except ValueError:  # (bad base64 and bad UTF-8 are ValueErrors too)
        raise refused from None
    if prefix != _PAGE_TOKEN_PREFIX or after < 0 or filtered != rule_set_hash:
        raise refused
    return after


def _open_game(entry: OpenGame, loaded: Loaded) -> pb.OpenGame:
    record = loaded.record
    return pb.OpenGame(
        game_id=record.game_id,
        rule_set_name=record.state.rules.name,
        rule_set_hash=record.state.rules.hash,
        seats=len(record.seats),
        seats_free=sum(1 for seat in record.seats if not seat.joined),
        seat_info=seat_infos(record),
        created_unix=entry.position / 1_000_000,
        deadlines=record.deadlines,
    )


async def join_game(
    ctx: Context, request: pb.JoinGameRequest, caller: Caller
) -> pb.JoinGameResponse:
    if len(request.name) > MAX_PLAYER_NAME:
        raise invalid(f"a player's name has at most {MAX_PLAYER_NAME} characters")
    if len(request.request_id) > MAX_REQUEST_ID:
        raise invalid(f"request_id has at most {MAX_REQUEST_ID} characters")
    request_hash = join_request_hash(request.request_id) if request.request_id else b""
    for _ in range(_SEAT_WRITE_ATTEMPTS):
        loaded = await ctx.load(request.game_id)
        if loaded.state.is_terminal():  # (an abandoned table's free seats went with it)
            raise precondition("GAME_OVER", "the game is over")
        record = spb.StoredGame()
        record.CopyFrom(loaded.record)
        # the same join again (its answer was lost): the seat it took, a new token
        earlier = _joined_by(record, request, request_hash)
        again = earlier is not None
        if earlier is not None:
            seat = earlier
        elif request.HasField("seat"):
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
        taken = record.seats[seat]
        if not again:
            taken.joined = True
            taken.name = request.name
            taken.join_request_hash = request_hash
        # (again: the same compare-and-set write replaces the lost answer's token hash,
        # so only the newest answer's token is the seat's)
        taken.token_hash = token_hash(token)
        if not again and table_full(record):  # the last seat: the game starts now
            record.deadline_unix = next_deadline(record, None, loaded.state, ctx.config.clock)
        write = store_write(
            loaded, record, loaded.state, idle=ctx.config.idle, now=ctx.config.clock()
        )
        if await ctx.store.commit(request.game_id, loaded.revision, write):
            log.info(
                "seat_joined_again" if again else "seat_joined",
                game_id=request.game_id,
                seat=seat,
                # (the call's x-request-id: never a join's request_id, a credential)
                request_id=caller.request_id,
            )
            fresh = ctx.committed(loaded, record, loaded.state)
            return pb.JoinGameResponse(seat=seat, token=token, game=game_message(fresh))
    raise conflict()


def _joined_by(record: spb.StoredGame, request: pb.JoinGameRequest, digest: bytes) -> int | None:
    """The seat a join with this request id hash took earlier (None: none, or no id):
    the asked seat only, when the request asks one."""
    if not digest:
        return None
    if request.HasField("seat"):
        asked = [request.seat] if request.seat < len(record.seats) else []
    else:
        asked = list(range(len(record.seats)))
    for seat in asked:
        info = record.seats[seat]
        if info.joined and hmac.compare_digest(info.join_request_hash, digest):
            return seat
    return None


async def fill_with_bots(ctx: Context, request: pb.FillWithBotsRequest, caller: Caller) -> pb.Game:
    strategy = request.strategy or ctx.config.default_house_bot
    check_strategy(ctx.config, strategy)
    for _ in range(_SEAT_WRITE_ATTEMPTS):
        loaded = await ctx.load(request.game_id)
        seat = seat_of(loaded, caller, required=True)
        free = [i for i, s in enumerate(loaded.record.seats) if not s.joined]
        if not free:
            return game_message(loaded)  # already full: nothing to do (idempotent)
        if loaded.state.is_terminal():  # (as JoinGame: an abandoned table's seats went)
            raise precondition("GAME_OVER", "the game is over")
        record = spb.StoredGame()
        record.CopyFrom(loaded.record)
        for i in free:
            record.seats[i].joined = True
            record.seats[i].bot = strategy
            record.seats[i].name = f"bot:{strategy}"
        # the table is full: the game starts now (its first turn's clock with it)
        record.deadline_unix = next_deadline(record, None, loaded.state, ctx.config.clock)
        write = store_write(
            loaded, record, loaded.state, idle=ctx.config.idle, now=ctx.config.clock()
        )
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
