"""What every use case shares: the configuration, the caller, and the :class:`Context`.

Nothing here keeps game state between requests: any replica serves any game.
The per-process things are caches — decoded records keyed by the store's revision
(a record at a revision never changes, so a cached decode is never stale), and
each game's newest cached revision, which may be stale and is only ever used under
the compare-and-set.  The limits are the store's (:mod:`.quotas`): shared by
every replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from engine.game import GameState
from engine.rulesets import PRESETS, RuleSet
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from services import codec
from services.config import Network, Quotas, Rate
from services.errors import ServiceError, invalid, not_found
from services.store.base import GameStore

from .leases import LeaseKeeper
from .records import IdleLimits, Loaded, Seated

MAX_GAME_ID = 64  # characters of a game_id (the server makes 16)

# Request ids for calls that bring none: unique within the process by a counter,
# across processes and restarts by a random prefix (a uuid4 per call costs a
# getrandom() system call and ten times the time, on every RPC)
_REQUEST_PREFIX = secrets.token_hex(6)
_request_numbers = itertools.count(1)


def new_request_id() -> str:
    return f"{_REQUEST_PREFIX}-{next(_request_numbers):x}"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: the bearer token (if any), the request id for the logs, and
    the client's address (the peer's, or the one a trusted proxy forwarded for)."""

    token: str | None = None
    request_id: str = ""
    address: str = ""


@dataclass
class ServiceConfig:
    operator_token: str | None = None
    # the act class's rate limit (moves, per seat); the other classes' (None: no rate
    # limit at all); the quotas (services/usecases/quotas.py); the proxies whose
    # forwarded-for is believed
    rate_per_second: float = 500.0
    rate_burst: int = 1000
    rates: Mapping[str, Rate] | None = field(default_factory=dict)
    quotas: Quotas = field(default_factory=Quotas)
    trusted_proxies: tuple[Network, ...] = ()
    watch_poll_seconds: float = 5.0
    cache_size: int = 4096
    clock: Callable[[], float] = time.time
    # when a game nobody plays ends abandoned (--abandon-after, --unjoined-after)
    idle: IdleLimits = field(default_factory=IdleLimits)
    presets: Mapping[str, RuleSet] = field(default_factory=lambda: dict(PRESETS))
    # The house bots a game may seat (None: any name).  The service plays no bot
    # itself: whoever starts it and its bot pool hands it the names that pool plays,
    # so a typo is refused instead of stalling a game.
    house_bots: frozenset[str] | None = None
    # FillWithBots' bot when the request names none ("": the request must name one);
    # checked like a named one, when it is used
    default_house_bot: str = ""
    # a second credential for the house-bot calls only (never CreateGameFromDeck): the
    # in-process bot pool's, when the server has no operator credential
    bot_pool_token: str | None = None


class Context:
    """The store, the configuration and the caches of one service."""

    def __init__(self, store: GameStore, config: ServiceConfig) -> None:
        self.store = store
        self.config = config
        # when each full client's open games were last checked for finished ones
        self.pruned: dict[str, float] = {}
        # the newest revision of each game this process has seen (least recently
        # used first out): a load that finds the store at that revision skips the
        # decoding, and a move whose expected version matches it is applied and
        # committed without a load
        self._newest: OrderedDict[str, Loaded] = OrderedDict()
        # the store reads in flight for a version known committed (load_committed)
        self._loading: dict[tuple[str, int], asyncio.Future[Loaded]] = {}
        # this process's commits in flight, by game: done when the store has answered
        self._committing: dict[str, asyncio.Future[None]] = {}
        self._rules_cache: dict[bytes, RuleSet] = {}
        # set when the server stops: open watches end at once (they never finish by
        # themselves, so a graceful stop would otherwise wait its whole grace for them)
        self.stopping = asyncio.Event()
        # the open streams' leases (quotas.hold_stream), renewed until the server stops
        self.leases = LeaseKeeper(store, self.stopping)

    async def load(self, game_id: str) -> Loaded:
        """The game as the store holds it now."""
        if not game_id or len(game_id) > MAX_GAME_ID:
            raise invalid(f"game_id is required (at most {MAX_GAME_ID} characters)")
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
        self.remember(game_id, loaded)
        return loaded

    async def load_committed(self, game_id: str, version: int) -> Loaded:
        """The game as the store holds it, read once it is known to be at ``version`` or
        later (its log entry has been read): the sessions that wake for the same entry,
        a table's seats on every stream of this process, share one store read.  They
        wake when the log reader has the entry, which often comes before the reply to
        the commit that wrote it, so the cache does not hold it yet; each used to read
        and decode the game itself (docs/LOADTEST.md, the log's 2026-12-02 entry for 81d2c18)."""
        remembered = self.remembered_at(game_id, version)
        if remembered is not None:
            return remembered
        commit = self._committing.get(game_id)
        if commit is not None:
            # this process is writing the game (most often the entry's own move): the
            # store's answer is on its way, and the game is remembered with it
            await asyncio.shield(commit)
            remembered = self.remembered_at(game_id, version)
            if remembered is not None:
                return remembered
        key = (game_id, version)
        loading = self._loading.get(key)
        if loading is None:
            loading = self._loading[key] = asyncio.ensure_future(self.load(game_id))
            loading.add_done_callback(lambda done: self._loaded(key, done))
        return await asyncio.shield(loading)

    def remembered_at(self, game_id: str, version: int) -> Loaded | None:
        """The game this process remembers, if it is at ``version``."""
        cached = self._newest.get(game_id)
        return cached if cached is not None and cached.version == version else None

    @contextlib.contextmanager
    def committing(self, game_id: str) -> Iterator[None]:
        """Around a commit of ``game_id``: :meth:`load_committed` waits for its answer
        rather than reading the store."""
        commit = self.commit_started(game_id)
        try:
            yield
        finally:
            self.commit_answered(game_id, commit)

    def commit_started(self, game_id: str) -> asyncio.Future[None]:
        """:meth:`committing` as a pair of calls, :meth:`commit_answered` in a
        ``finally`` (a move's: no context manager's generator on every move)."""
        commit = self._committing[game_id] = asyncio.get_running_loop().create_future()
        return commit

    def commit_answered(self, game_id: str, commit: asyncio.Future[None]) -> None:
        commit.set_result(None)
        if self._committing.get(game_id) is commit:
            del self._committing[game_id]

    def _loaded(self, key: tuple[str, int], done: asyncio.Future[Loaded]) -> None:
        if self._loading.get(key) is done:
            del self._loading[key]
        if not done.cancelled():
            done.exception()  # (retrieved: every session that wanted it may be gone)

    async def load_if_any(self, game_id: str) -> Loaded | None:
        try:
            return await self.load(game_id)
        except ServiceError:
            return None

    def cached(self, game_id: str) -> Loaded | None:
        """The newest revision of the game this process has seen: maybe stale, so
        only ever written over with the compare-and-set."""
        return self._newest.get(game_id)

    def remember(self, game_id: str, loaded: Loaded) -> None:
        newest = self._newest.get(game_id)
        if newest is None or newest.revision <= loaded.revision:
            self._newest[game_id] = loaded
            self._newest.move_to_end(game_id)
            if len(self._newest) > self.config.cache_size:
                self._newest.popitem(last=False)

    def committed(
        self, before: Loaded, record: spb.StoredGame, after: GameState, seats: Seated | None = None
    ) -> Loaded:
        """Remember what a successful write of ``record`` over ``before`` stored
        (``seats``: :class:`~.records.Seated` of ``record``, when known)."""
        loaded = Loaded(before.revision + 1, record, after, seats)
        self.remember(record.game_id, loaded)
        return loaded

    def _rules(self, message: spb.StoredRuleSet) -> RuleSet:
        blob = message.SerializeToString(deterministic=True)
        rules = self._rules_cache.get(blob)
        if rules is None:
            rules = convert.rules_from_pb(message)
            if len(self._rules_cache) < 1024:
                self._rules_cache[blob] = rules
        return rules
