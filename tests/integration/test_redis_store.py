"""The Redis store's own promises, beyond the contract both stores keep."""

from __future__ import annotations

from typing import Any

import pytest

from services.store.base import LogItem, Write
from services.store.redis import RedisStore


async def test_indexes_change_in_the_same_script_as_the_record(
    redis_store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating a game and committing a move are one script each, indexes included: a
    process that dies after the script leaves no game out of its indexes (a deadline
    never indexed would never fire).  Any second round trip fails the test here."""

    def no_second_round_trip(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an index written apart from the script")

    for name in ("pipeline", "sadd", "srem", "zadd", "zrem"):
        monkeypatch.setattr(redis_store._redis, name, no_second_round_trip)
    await redis_store.create("g", Write(b"0"))
    assert await redis_store.games_in_play() == 1
    assert await redis_store.commit("g", 1, Write(b"1", deadline=100.0))
    assert await redis_store.due_deadlines(200.0) == ["g"]
    # the same deadline again: the index is left as it is
    assert await redis_store.commit("g", 2, Write(b"2", deadline=300.0, deadline_changed=False))
    assert await redis_store.due_deadlines(200.0) == ["g"]
    assert await redis_store.commit("g", 3, Write(b"3", deadline=None))
    assert await redis_store.due_deadlines(1e12) == []
    assert await redis_store.commit("g", 4, Write(b"4", entry=LogItem(1, b"e"), finished=True))
    assert await redis_store.games_in_play() == 0
    assert await redis_store.commit("h", 1, Write(b"x")) is False  # no such game: no write
    assert await redis_store.games_in_play() == 0
