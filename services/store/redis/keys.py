"""The store's keys: a game's, its shard's indexes, and the limits' own.

The games are spread over ``SHARDS`` (16) index shards: a game's shard is
``crc32(id) % SHARDS`` (UTF-8), and every key of the shard carries its hash tag
``{sNN}`` (``{s00}`` … ``{s15}``), so a game's keys and its shard's share of every
cross-game index sit in one slot, and one script may update them all atomically.
(``SHARDS`` is part of the layout: changing it moves every game; never for a live
deployment.)

* ``g:{sNN}:<id>:rec`` — hash: ``rev`` (the compare-and-set token) and ``rec`` (the record)
* ``g:{sNN}:<id>:log`` — stream: one entry per accepted action, id ``<version>-1``
* ``g:{sNN}:<id>:req`` — hash: idempotency key → the stored response
* ``glintwick:{sNN}:deadlines`` — sorted set: the shard's game ids by when their
  deadline passes (the sweeper re-checks every due game against its record);
* ``glintwick:{sNN}:active`` — set of the shard's unfinished game ids;
* ``glintwick:{sNN}:botturns`` — sorted set: game id by when it is listed from (when
  a house-bot seat started waiting, or when a worker's lease on the turn ends; times
  from Redis's clock, so replicas' clocks do not matter);
* ``glintwick:{sNN}:lobby`` — sorted set: the shard's games with a free seat, by
  position: when listed (at creation), microseconds of Redis's clock rounded up to
  the next one that is ``NN`` modulo ``SHARDS`` (a shard's positions never meet
  another's), made unique within the shard by ``glintwick:{sNN}:lobbyclock`` (the
  last position given: ``SHARDS`` more when two games share one), so a position is
  an exact cursor for the lobby's pages;
* ``glintwick:{sNN}:lobby:<rule-set hash>`` — the same, for one rule set: a filtered
  lobby page is one range read per shard, never a scan past other rule sets' games;
* ``glintwick:{sNN}:rate:<id>:<name>`` — string: a rate-limit cell of one game (as
  ``glintwick:rate:`` below: a seat's act limit), in the game's slot, so that a move's
  commit script takes it itself (``Write.take``: no round trip of its own);
* ``glintwick:{sNN}:wake:<random hex>`` — stream: a log reader's wake
  (:mod:`.log_reader`).

The limits every replica shares (:mod:`services.usecases.quotas`), each in one key
of its own, changed by a script that touches that key alone (whose hash tag is the
whole name: one Redis Cluster slot each, wherever the indexes go):

* ``glintwick:rate:{<name>}`` — string: a rate-limit cell (GCRA), the theoretical
  arrival time of the next request in microseconds of Redis's clock (``TIME``),
  expiring when the cell is full again: a client gone leaves nothing behind;
* ``glintwick:hold:{<name>}`` — sorted set: a bounded set of leases (a client's
  open games, a game's or a client's streams), members by when their lease ends
  (Redis's clock), trimmed on every hold, expiring with its last lease.
"""

from __future__ import annotations

import zlib
from functools import lru_cache

#: the index shards (see the module's docstring): part of the key layout
SHARDS = 16


def shard_of(game_id: str) -> int:
    """The index shard of a game (its keys' hash tag)."""
    return zlib.crc32(game_id.encode("utf-8", "surrogatepass")) % SHARDS


def hash_tag(shard: int) -> str:
    """A shard's hash tag, ``{sNN}``: every key that carries it is in the shard's slot."""
    return f"{{s{shard:02d}}}"


def index_key(shard: int, name: str) -> str:
    """An index of one shard: ``deadlines``, ``active``, ``botturns``, ``lobby``,
    ``lobby:<rule-set hash>``, ``lobbyclock``, ``wake:<hex>``."""
    return f"glintwick:{hash_tag(shard)}:{name}"


def lobby_key(shard: int, rule_set_hash: str) -> str:
    """A shard's lobby index of one rule set ("": of every rule set)."""
    return index_key(shard, f"lobby:{rule_set_hash}" if rule_set_hash else "lobby")


@lru_cache(maxsize=8192)
def game_keys(game_id: str) -> tuple[str, str, str]:
    """A game's record, log and idempotency keys (its shard's hash tag: one slot),
    written once a game (every move's commit names them)."""
    tag = hash_tag(shard_of(game_id))
    return (f"g:{tag}:{game_id}:rec", f"g:{tag}:{game_id}:log", f"g:{tag}:{game_id}:req")


def rate_key(name: str) -> str:
    """A rate-limit cell's key: its own hash tag (one slot, whatever else shares it)."""
    return f"glintwick:rate:{{{name}}}"


def game_rate_key(game_id: str, name: str) -> str:
    """A game's rate-limit cell: in its shard's slot, which its commit script may take."""
    return index_key(shard_of(game_id), f"rate:{game_id}:{name}")


def hold_key(name: str) -> str:
    """A bounded set's key: its own hash tag."""
    return f"glintwick:hold:{{{name}}}"
