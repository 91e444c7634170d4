"""The Redis store (:class:`RedisStore`): one Lua compare-and-set per write, each in one
Redis Cluster slot, on one Redis or a Redis Cluster with the same keys and scripts.

A module a concept, each building on the ones before it:

* :mod:`.keys` — the key layout: the index shards, a game's keys, the limits' keys;
* :mod:`.scripts` — the Lua scripts (create, commit, bot turns, limits) and the
  index arguments of a write;
* :mod:`.replies` — Redis's answers as the store's values;
* :mod:`.errors` — what Redis unreachable (or refusing writes) looks like, as
  :class:`~services.store.base.StoreUnavailableError`;
* :mod:`.connections` — connections packed by hiredis, a transport closed under a
  command as unreachable, the cluster client that serves the healthy primaries;
* :mod:`.link` — a store's clients, deadlines and replica acks, shared with its log
  readers;
* :mod:`.log_reader` — ``wait_log``'s one reader per shard;
* :mod:`.store` — :class:`RedisStore`, the :class:`~services.store.base.GameStore`.
"""

from services.store.redis.connections import (
    CLUSTER_SCHEMES,
    cluster_client,
    cluster_url,
    connection_pool,
)
from services.store.redis.keys import (
    SHARDS,
    game_keys,
    game_rate_key,
    hold_key,
    index_key,
    lobby_key,
    rate_key,
    shard_of,
)
from services.store.redis.log_reader import LINGER, READ_BLOCK_MS, READ_COUNT, WAKE_TTL_MS
from services.store.redis.store import CLAIM_ROUNDS, RedisStore

__all__ = [
    "CLAIM_ROUNDS",
    "CLUSTER_SCHEMES",
    "LINGER",
    "READ_BLOCK_MS",
    "READ_COUNT",
    "SHARDS",
    "WAKE_TTL_MS",
    "RedisStore",
    "cluster_client",
    "cluster_url",
    "connection_pool",
    "game_keys",
    "game_rate_key",
    "hold_key",
    "index_key",
    "lobby_key",
    "rate_key",
    "shard_of",
]
