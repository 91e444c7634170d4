"""The store's Lua scripts, and the index arguments of a write.

Every create and every commit is one script, run in one Redis Cluster slot (a
game's keys and its shard's indexes: :mod:`.keys`).  The indexes are written
*inside* the create and commit scripts, atomically with the record: an index entry
lost between two round trips would stall its game for good (a bot turn never listed,
a deadline that never fires, a table no one can find).  Needs Redis >= 5 (``TIME``
in a writing script).
"""

from __future__ import annotations

from functools import lru_cache

from services.store.base import Write

from .keys import SHARDS, index_key, lobby_key, shard_of

# A write's index entries, one function for both writing scripts: ``bot_turn`` 'set'
# (list the game from now, Redis's clock) or 'del' or ''; ``deadline`` a Unix time
# or 'del' or ''; ``finished`` '1' or ''; ``open`` 'add' (list the game in the
# lobby, unless it is listed) or 'del' or '' ('' everywhere: leave that index alone);
# ``shard`` and ``shards``: the lobby position's residue (:mod:`.keys`).
# (Positions are formatted with %d: Lua's own number-to-string keeps 14 digits.)
_INDEXES = """
local function indexes(keys, game, bot_turn, deadline, finished, open, shard, shards)
  local bot_turns, deadlines, active, lobby, lobby_rules, lobby_clock = unpack(keys)
  if bot_turn == 'del' then
    redis.call('ZREM', bot_turns, game)
  elseif bot_turn == 'set' then
    local now = redis.call('TIME')
    redis.call('ZADD', bot_turns, tonumber(now[1]) + tonumber(now[2]) / 1000000, game)
  end
  if deadline == 'del' then
    redis.call('ZREM', deadlines, game)
  elseif deadline ~= '' then
    redis.call('ZADD', deadlines, deadline, game)
  end
  if finished == '1' then redis.call('SREM', active, game) end
  if open == 'del' then
    redis.call('ZREM', lobby, game)
    redis.call('ZREM', lobby_rules, game)
  elseif open == 'add' and not redis.call('ZSCORE', lobby, game) then
    local t = redis.call('TIME')
    local at = tonumber(t[1]) * 1000000 + tonumber(t[2])
    local last = tonumber(redis.call('GET', lobby_clock) or 0)
    if at <= last then at = last + 1 end
    shard, shards = tonumber(shard), tonumber(shards)
    at = at + (shard - at) % shards
    at = string.format('%d', at)
    redis.call('SET', lobby_clock, at)
    redis.call('ZADD', lobby, at, game)
    redis.call('ZADD', lobby_rules, at, game)
  end
end
"""

# KEYS: record, the index keys; ARGV: record, game id, the index args
CREATE = (
    _INDEXES
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'rev', 1, 'rec', ARGV[1])
redis.call('SADD', KEYS[4], ARGV[2])
indexes({unpack(KEYS, 2, 7)}, ARGV[2], unpack(ARGV, 3, 8))
return 1
"""
)

# GCRA on one cell: ``interval`` microseconds per request, ``burst``, ``cost``.  Takes
# it and answers 0, or answers the microseconds to wait (> 0: nothing changed).
_GCRA = """
local function gcra(key, interval, burst, cost)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local arrival = tonumber(redis.call('GET', key) or now)
  if arrival < now then arrival = now end
  arrival = arrival + cost * interval
  local allowed_at = arrival - burst * interval
  if allowed_at > now then return allowed_at - now end
  redis.call('SET', key, string.format('%.0f', arrival),
             'PX', math.floor((arrival - now) / 1000) + 1)
  return 0
end
"""

# KEYS: record, log, requests, the index keys, the game's rate cell (``Write.take``);
# ARGV: expected revision, record, entry version, entry, idempotency key, response,
# ttl, game id, the index args, and with the cell: its microseconds per request and
# burst.  1: written; 0: refused by the compare-and-set or the idempotency key; below
# 0: refused by the cell, -1 - the microseconds to wait (nothing changed either way).
COMMIT = (
    _INDEXES
    + _GCRA
    + """
local rev = redis.call('HGET', KEYS[1], 'rev')
if (not rev) or tonumber(rev) ~= tonumber(ARGV[1]) then return 0 end
if ARGV[5] ~= '' and redis.call('HEXISTS', KEYS[3], ARGV[5]) == 1 then return 0 end
if KEYS[10] then
  local wait = gcra(KEYS[10], tonumber(ARGV[15]), tonumber(ARGV[16]), 1)
  if wait > 0 then return -1 - math.ceil(wait) end
end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'rec', ARGV[2])
if ARGV[3] ~= '' then redis.call('XADD', KEYS[2], ARGV[3] .. '-1', 'e', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
local ttl = tonumber(ARGV[7])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
end
indexes({unpack(KEYS, 4, 9)}, ARGV[8], unpack(ARGV, 9, 14))
return 1
"""
)

# One shard's due bot turns (up to ARGV[1]), each with when it was listed from (as
# text: a float keeps its digits), claimed for ARGV[2] seconds when that is above 0.
BOT_TURNS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0,
  tonumber(ARGV[1]))
local lease = tonumber(ARGV[2])
if lease > 0 then
  for i = 1, #due, 2 do redis.call('ZADD', KEYS[1], 'XX', now + lease, due[i]) end
end
return due
"""


# KEYS: requests; ARGV: idempotency key.  The stored response, written again (the same
# bytes) so that the WAIT after it covers the write that stored it (replica acks only).
CONFIRM = """
local response = redis.call('HGET', KEYS[1], ARGV[1])
if response then redis.call('HSET', KEYS[1], ARGV[1], response) end
return response
"""


# GCRA: KEYS: the cell; ARGV: microseconds per request, burst, cost.  Returns
# {1, 0} (allowed: the cell moved on) or {0, microseconds to wait} (nothing changed).
TAKE = (
    _GCRA
    + """
local wait = gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
if wait > 0 then return {0, string.format('%.0f', wait)} end
return {1, '0'}
"""
)

# KEYS: the set; ARGV: member, limit, lease (microseconds).  1: held; 0: full.
HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1])
   and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[3])), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.floor((tonumber(last[2]) - now) / 1000) + 1)
return 1
"""

# KEYS: the set.  Its unexpired members.
HELD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
"""


def index_args(game_id: str, write: Write) -> list[str]:
    """The scripts' index arguments for ``write`` (see _INDEXES); '' where the index
    already says the same, the common case: no index write on most moves."""
    bot_turn = "set" if write.bot_turn else ("del" if write.bot_turn_changed else "")
    deadline = ""
    if write.deadline_changed:
        deadline = "del" if write.deadline is None else repr(write.deadline)
    lobby = "add" if write.open_seats else ("del" if write.open_seats_changed else "")
    finished = "1" if write.finished else ""
    return [bot_turn, deadline, finished, lobby, *_shard_args(game_id)]


@lru_cache(maxsize=4096)
def _shard_args(game_id: str) -> tuple[str, str]:
    return str(shard_of(game_id)), str(SHARDS)


def index_keys(game_id: str, write: Write) -> tuple[str, ...]:
    """The keys of the indexes ``write`` may touch (see _INDEXES), in its order: those
    of the game's shard."""
    return shard_index_keys(shard_of(game_id), write.rule_set_hash)


@lru_cache(maxsize=1024)
def shard_index_keys(shard: int, rule_set_hash: str) -> tuple[str, ...]:
    """:func:`index_keys` of a shard and rule set, written once (every move's commit
    names them)."""
    return (
        index_key(shard, "botturns"),
        index_key(shard, "deadlines"),
        index_key(shard, "active"),
        lobby_key(shard, ""),
        lobby_key(shard, rule_set_hash),
        index_key(shard, "lobbyclock"),
    )
