"""Redis's answers as the store's values: text, log entries, and the merge of every
shard's range read."""

from __future__ import annotations

import heapq
from collections.abc import Awaitable
from typing import Any, TypeVar, cast

from services.store.base import LogItem

T = TypeVar("T")


def awaited(value: Awaitable[T] | T) -> Awaitable[T]:
    """redis-py types its commands for both clients; the asyncio client's are awaitables."""
    return cast(Awaitable[T], value)


def text(value: bytes | str) -> str:
    """A key, a member or an id as redis-py answers it (bytes), as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _version_of(stream_id: bytes | str) -> int:
    """A log entry's version: its stream id is ``<version>-1``."""
    return int(text(stream_id).split("-", 1)[0])


def log_items(rows: list[Any]) -> list[LogItem]:
    """A stream's entries, as XRANGE or XREAD answer them (the fields as redis-py's
    parsed dict, or the raw list: ``e``, the entry)."""
    return [
        LogItem(_version_of(i), bytes(f[b"e"] if isinstance(f, dict) else f[1])) for i, f in rows
    ]


def merged(rows_by_shard: list[list[Any]], limit: int) -> list[tuple[float, str, int]]:
    """The ``limit`` lowest-scored (member, score) pairs of every shard's range read
    (each in score order), as (score, member, shard)."""
    scored = (
        [(float(score), text(member), shard) for member, score in rows]
        for shard, rows in enumerate(rows_by_shard)
    )
    return list(heapq.merge(*scored))[:limit]
