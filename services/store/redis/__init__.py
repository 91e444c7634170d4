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

# (the names the importers of the former one-module store use, each re-exported)
from services.store.redis.connections import CLUSTER_SCHEMES as CLUSTER_SCHEMES
from services.store.redis.connections import cluster_client as cluster_client
from services.store.redis.connections import cluster_url as cluster_url
from services.store.redis.connections import connection_pool as connection_pool
from services.store.redis.keys import SHARDS as SHARDS
from services.store.redis.keys import game_keys as game_keys
from services.store.redis.keys import game_rate_key as game_rate_key
from services.store.redis.keys import hold_key as hold_key
from services.store.redis.keys import index_key as index_key
from services.store.redis.keys import lobby_key as lobby_key
from services.store.redis.keys import rate_key as rate_key
from services.store.redis.keys import shard_of as shard_of
from services.store.redis.log_reader import LINGER as LINGER
from services.store.redis.log_reader import READ_BLOCK_MS as READ_BLOCK_MS
from services.store.redis.log_reader import READ_COUNT as READ_COUNT
from services.store.redis.log_reader import WAKE_TTL_MS as WAKE_TTL_MS
from services.store.redis.store import CLAIM_ROUNDS as CLAIM_ROUNDS
from services.store.redis.store import RedisStore as RedisStore
