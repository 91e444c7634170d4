"""Rate limits on every call and quotas, shared by every replica through the store.

**Who is limited.**  Each call is charged to its caller's *client key*: the seat
token when the call brings one (hashed: the store never sees a token), otherwise
the client's address (an IPv6 address by its /64, what one host is usually given).
The address is the connection's peer, or, when the peer is a trusted proxy
(``--trusted-proxy``), the rightmost address of ``X-Forwarded-For`` that is not a
trusted proxy itself (:func:`client_address`): a client cannot pick its address by
sending the header, only a proxy of ours adds to it.  A token that turns out to be
no seat's (UNAUTHENTICATED) is charged to the address as well, so that inventing
tokens gives no fresh limits.  The operator's and the bot pool's credentials are
exempt from every limit and quota: they are the service's own workers (the house-bot
pool plays hundreds of seats through one credential).

**Rate limits** are per call class (:data:`CALL_CLASSES`: create, join, read, act,
analyse, stream), each ``rate`` a second and ``burst`` at once per client key, a GCRA
cell in the store (:meth:`GameStore.take`, one atomic script on one key, on the
store's clock): N replicas admit what one does, not N times it.  A move is charged
to its seat (game and seat, once authenticated), on the unary call and on a play
stream alike.  A refusal is RESOURCE_EXHAUSTED (HTTP 429), ``RATE_LIMITED``, with the
wait until a call would pass (RetryInfo, ``Retry-After``), and changes nothing.

**Quotas** (:class:`Quotas`), each refusal RESOURCE_EXHAUSTED with its own reason and
counted in ``glintwick_limit_refusals_total``:

* the unfinished games a client created (``QUOTA_OPEN_GAMES``): a bounded set of
  game ids per client key in the store; when it is full, the games since finished
  (or gone) are dropped from it and the create tried once more (at most once a
  second per client and process), so a finished game stops counting without any
  write at its end;
* the games in play on the whole service (``QUOTA_GAMES_IN_PLAY``): the store's count
  of unfinished games, read before each create (two racing creates may both pass at
  the cap: it may be exceeded by the creates in flight at once);
* the watchers of a game, the play sessions of a game, and the streams (watches and
  sessions together) of a client (``QUOTA_GAME_WATCHERS``, ``QUOTA_GAME_SESSIONS``,
  ``QUOTA_CLIENT_STREAMS``): bounded sets of leases in the store, held while the
  stream is open and renewed by one task per process (:mod:`.leases`); a replica
  that dies leaves its leases to end by themselves after ``LEASE_SECONDS``.

**A store that cannot be reached** admits the call (fail-open): every call that needs
the store then fails UNAVAILABLE by itself, and those that need none (Ping,
AnalyseHand, GetLimits) keep answering during an outage, as before the limits.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import secrets
import time
from collections.abc import Iterable

import grpc
import structlog

from services import metrics
from services.config import DEFAULT_RATES, Network, Rate
from services.errors import ServiceError
from services.store.base import CellTake, StoreUnavailableError

from .access import is_operator
from .context import Caller, Context, ServiceConfig
from .leases import LEASE_SECONDS, StreamHold

log = structlog.get_logger("glintwick.limits")

#: seconds a created game counts towards its client's open games at most (a game that
#: is still unfinished by then is abandoned, and ends long before by its expiry)
OPEN_GAME_SECONDS = 7 * 24 * 3600.0
#: seconds between two checks of a full client's open games for finished ones
PRUNE_SECONDS = 1.0


def rate_limited(call: str, retry_after: float) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
        f"too many {call} calls from this client: retry in {retry_after:.2f} s",
        retry_after,
    )


def quota_exceeded(reason: str, message: str, retry_after: float | None = None) -> ServiceError:
    metrics.LIMIT_REFUSALS.labels("quota", reason).inc()
    return ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, reason, message, retry_after)


# ------------------------------------------------------------------ the client's key


def client_address(peer: str, forwarded: Iterable[str], trusted: tuple[Network, ...]) -> str:
    """The client's address: ``peer`` (the connection's), unless it is a trusted
    proxy: then the rightmost hop of the ``X-Forwarded-For`` values (in the order
    received) that is not a trusted proxy (each trusted proxy appends the address it
    was called from; what the client itself sent is further left, and never read
    past an untrusted hop).  A hop that is no IP address ends the walk there."""
    address = _ip(peer)
    if address is None or not _trusted(address, trusted):
        return peer
    hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        parsed = _ip(hop)
        if parsed is None:
            return hop[:64]
        if not _trusted(parsed, trusted):
            return str(parsed)
        address = parsed
    return str(address)  # every hop a proxy of ours: the leftmost


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, trusted: tuple[Network, ...]
) -> bool:
    return any(address.version == network.version and address in network for network in trusted)


def client_key(caller: Caller) -> str:
    """The key a call is charged to: its token's (hashed), else its address's."""
    if caller.token:
        return "t:" + hashlib.sha256(caller.token.encode()).hexdigest()[:32]
    return address_key(caller)


def address_key(caller: Caller) -> str:
    address = _ip(caller.address)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return "a:" + str(ipaddress.IPv6Network((address, 64), strict=False).network_address)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return "a:" + str(address.ipv4_mapped)
    return "a:" + caller.address


# ------------------------------------------------------------------ rate limits


def exempt(config: ServiceConfig, caller: Caller) -> bool:
    """The operator's and the bot pool's credentials: no limit, no quota."""
    return bool(caller.token) and is_operator(config, caller.token or "", bots=True)


def rate_of(config: ServiceConfig, call: str) -> Rate | None:
    if config.rates is None:
        return None  # --limits off
    if call == "act":
        rate = Rate(config.rate_per_second, config.rate_burst)
    else:
        rate = config.rates.get(call, DEFAULT_RATES[call])
    return rate if rate.per_second > 0 else None


async def admit(ctx: Context, call: str, caller: Caller, key: str | None = None) -> None:
    """Charge one ``call`` to ``key`` (default: the caller's client key); RATE_LIMITED
    when its limit is reached."""
    rate = rate_of(ctx.config, call)
    if rate is None or exempt(ctx.config, caller):
        return
    cell = CellTake(f"{call}:{key or client_key(caller)}", rate.per_second, rate.burst)
    await _charge(ctx, call, cell)


def seat_cell(ctx: Context, caller: Caller, seat: int) -> CellTake | None:
    """A move's act cell: its seat's, a cell of its game, which the move's commit
    takes in its own script (``Write.take``) or :func:`admit_move` takes before it;
    None when the move is not limited."""
    rate = rate_of(ctx.config, "act")
    if rate is None or exempt(ctx.config, caller):
        return None
    return CellTake(f"act:seat:{seat}", rate.per_second, rate.burst)


async def admit_move(ctx: Context, game_id: str, cell: CellTake) -> None:
    """Charge a move to its act ``cell`` (:func:`seat_cell`) of ``game_id`` on its own
    round trip; RATE_LIMITED when the cell is spent."""
    await _charge(ctx, "act", cell, game_id)


async def _charge(ctx: Context, call: str, cell: CellTake, game_id: str | None = None) -> None:
    try:
        admission = await ctx.store.take(cell.name, cell.rate, cell.burst, game_id=game_id)
    except StoreUnavailableError:
        return  # fail-open: the call meets the outage itself if it needs the store
    if not admission.allowed:
        metrics.LIMIT_REFUSALS.labels("rate", call).inc()
        raise rate_limited(call, admission.retry_after)


async def charge_bad_token(ctx: Context, call: str, caller: Caller) -> None:
    """A token that is no seat's: the call is charged to the address too (RATE_LIMITED
    instead of UNAUTHENTICATED once the address has used its limit)."""
    if caller.token:
        await admit(ctx, call, Caller(address=caller.address), address_key(caller))


# ------------------------------------------------------------------ games


async def claim_open_game(ctx: Context, caller: Caller, game_id: str) -> str | None:
    """Count ``game_id`` towards its creator's open games; the set's key (None: not
    counted), which :func:`release_open_game` takes if the create then fails."""
    config = ctx.config
    quotas = config.quotas
    if exempt(config, caller):
        return None
    store = ctx.store
    try:
        if quotas.games_in_play > 0 and await store.games_in_play() >= quotas.games_in_play:
            raise quota_exceeded(
                "QUOTA_GAMES_IN_PLAY",
                f"the service holds its most games in play ({quotas.games_in_play}): retry later",
                LEASE_SECONDS,
            )
        if quotas.open_games <= 0:
            return None
        key = f"open:{client_key(caller)}"
        if await store.hold(key, game_id, quotas.open_games, OPEN_GAME_SECONDS):
            return key
        # full: the games finished (or gone) since stop counting, then once more (at
        # most once a PRUNE_SECONDS per client and process: a flood at its quota does
        # not re-check its games on every refusal)
        now = time.monotonic()
        if now - ctx.pruned.get(key, -PRUNE_SECONDS) >= PRUNE_SECONDS:
            if len(ctx.pruned) > 10_000:
                ctx.pruned.clear()
            ctx.pruned[key] = now
            held = await store.held(key)
            done = set(held) - await store.unfinished(held)
            if done:
                await store.release(key, *done)
                if await store.hold(key, game_id, quotas.open_games, OPEN_GAME_SECONDS):
                    return key
    except StoreUnavailableError:
        return None  # fail-open (the create itself then meets the outage)
    raise quota_exceeded(
        "QUOTA_OPEN_GAMES",
        f"this client has {quotas.open_games} unfinished games: finish one (or let one"
        " expire) before creating another",
    )


async def release_open_game(ctx: Context, key: str | None, game_id: str) -> None:
    if key is not None:
        with contextlib.suppress(StoreUnavailableError):
            await ctx.store.release(key, game_id)


# ------------------------------------------------------------------ streams


_STREAMS_COUNTED = {
    "QUOTA_GAME_WATCHERS": "watches of this game",
    "QUOTA_GAME_SESSIONS": "play sessions of this game",
    "QUOTA_CLIENT_STREAMS": "open streams of this client",
}


async def hold_stream(ctx: Context, kind: str, game_id: str, caller: Caller) -> StreamHold | None:
    """Lease a stream's place: a watch (``kind`` "watch") or a play session ("play")
    of ``game_id`` by ``caller``; a quota's refusal when its game or its client is full.
    None: nothing held (exempt, no quotas, or the store unreachable)."""
    config = ctx.config
    quotas = config.quotas
    if exempt(config, caller):
        return None
    per_game, reason = (
        (quotas.game_watchers, "QUOTA_GAME_WATCHERS")
        if kind == "watch"
        else (quotas.game_sessions, "QUOTA_GAME_SESSIONS")
    )
    wanted = [
        (f"{kind}:{game_id}", per_game, reason),
        (f"streams:{client_key(caller)}", quotas.client_streams, "QUOTA_CLIENT_STREAMS"),
    ]
    wanted = [(key, limit, why) for key, limit, why in wanted if limit > 0]
    if not wanted:
        return None
    hold = StreamHold(ctx.leases, secrets.token_hex(8), tuple((k, n) for k, n, _ in wanted))
    reached = 0  # the leases taken, or in flight
    try:
        for key, limit, why in wanted:
            reached += 1
            if not await ctx.store.hold(key, hold.member, limit, LEASE_SECONDS):
                reached -= 1  # (refused: not held)
                what = _STREAMS_COUNTED[why]
                raise quota_exceeded(why, f"there are {limit} {what} already: close one first")
    except BaseException as exc:
        # refused, the store unreachable, or cancelled (the client gone): no lease of
        # this stream stays behind (one taken, or in flight, would count for its whole
        # lease, never renewed: a game filled by watches that never opened)
        with contextlib.suppress(StoreUnavailableError):
            for key, _, _ in wanted[:reached]:
                await ctx.store.release(key, hold.member)
        if isinstance(exc, StoreUnavailableError):
            return None  # (fail-open)
        raise
    ctx.leases.keep(hold)
    return hold
