"""What Redis unreachable, or refusing writes, looks like to redis-py: the store's
:class:`~services.store.base.StoreUnavailableError`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from redis.exceptions import (
    ClusterError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.store.base import StoreUnavailableError

# What Redis being down, restarting, frozen or read-only (a replica after a
# failover) looks like to redis-py (its ConnectionError covers a refused or dropped
# connection, a Redis still loading its data, a refused password)
# (and, on a cluster: a slot whose primary is down and not yet replaced, a slot
# moving, redirections past redis-py's limit)
UNREACHABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    ReadOnlyError,
    SlotNotCoveredError,
    OSError,
    TimeoutError,
    ClusterError,
    RedisClusterException,
    TryAgainError,
)


# What a Redis that refuses every write by its own state answers (the store cannot
# take a write now, as when down): at its maxmemory with noeviction (OOM, redis-py's
# OutOfMemoryError), short of its min-replicas-to-write (NOREPLICAS, a plain
# ResponseError).  (Every call's rate-limit cell is a write: INTERNAL for every call
# otherwise, reads too.)
_WRITES_REFUSED = (OutOfMemoryError,)
_WRITES_REFUSED_CODES = ("NOREPLICAS ",)


@contextlib.contextmanager
def reachable(*, write: bool = False) -> Iterator[None]:
    """Redis's unreachability (or refusal of writes) as the store's
    :class:`StoreUnavailableError`."""
    try:
        yield
    except UNREACHABLE as exc:
        raise StoreUnavailableError(str(exc) or type(exc).__name__, write=write) from exc
    except ResponseError as exc:
        if not isinstance(exc, _WRITES_REFUSED) and not str(exc).startswith(_WRITES_REFUSED_CODES):
            raise
        raise StoreUnavailableError(f"Redis refuses writes: {exc}", write=write) from exc
