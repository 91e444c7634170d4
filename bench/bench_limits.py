"""What the limits cost (issue 19): the rate-limit cell's script and a quota's lease
against the store's plainest round trip, and a call through the service with its
limit and without, on one real Redis in this one process.

* ``store``: medians (µs) of ``load`` (one HMGET: the baseline), ``take`` (the GCRA
  script) and ``hold`` (a lease), and the scripts' ratios to the load;
* ``service``: the median of GetView (a seat's, the game cached: one store read)
  through a service with the default limits and through one with ``--limits off``,
  alternated in rounds, and their ratio (the limit is one more round trip);
* ``submit``: the median of SubmitAction (a seat's move, the game cached: its
  compare-and-set, with the seat's act cell taken in the same script) through a
  service whose act limit admits every move and through one with ``--limits off``.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from bench.bench_service import _random_game
from glintwick.v1 import game_pb2 as pb
from loadtests.processes.redis import redis_server
from services.api import Caller, GameService, ServiceConfig
from services.store.base import Write
from services.store.redis import RedisStore

CALLS = 2000
ROUNDS = 5
MOVES_PER_ROUND = 300  # (a random game runs to some 3,000 moves)


async def _median_us(call: Callable[[], Awaitable[Any]], n: int = CALLS) -> float:
    spent = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        spent.append(time.perf_counter() - started)
    return statistics.median(spent) * 1e6


async def _measure(url: str) -> dict[str, Any]:
    store = RedisStore(url)
    try:
        await store.create("bench-limits", Write(b"x" * 1100))  # about a game's record
        rows: dict[str, list[float]] = {"load": [], "take": [], "hold": []}
        for _ in range(ROUNDS):
            rows["load"].append(await _median_us(lambda: store.load("bench-limits")))
            rows["take"].append(await _median_us(lambda: store.take("bench", 1e9, 1000)))
            rows["hold"].append(await _median_us(lambda: store.hold("bench", "m", 10, 60)))
        medians = {k: round(statistics.median(v), 1) for k, v in rows.items()}

        limited = GameService(store, ServiceConfig())
        unlimited = GameService(store, ServiceConfig(rates=None))
        game = await limited.create_game(
            pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2), Caller(address="b")
        )
        seat = await limited.join_game(
            pb.JoinGameRequest(game_id=game.game_id, seat=0), Caller(address="b")
        )
        caller = Caller(token=seat.token, address="b")
        view = pb.GetViewRequest(game_id=game.game_id)
        on: list[float] = []
        off: list[float] = []
        for _ in range(ROUNDS):
            # (rate 200/s would refuse most of a tight loop: the cell is taken, and
            # refused, at the same cost as admitted)
            on.append(await _median_us(lambda: _view(limited, view, caller), CALLS // 4))
            off.append(await _median_us(lambda: _view(unlimited, view, caller), CALLS // 4))
        with_limit, without = statistics.median(on), statistics.median(off)
        submit = await _submits(store)
        return {
            "store_us": medians,
            "store_ratios": {k: round(medians[k] / medians["load"], 2) for k in ("take", "hold")},
            "get_view_us": {"limited": round(with_limit, 1), "unlimited": round(without, 1)},
            "get_view_ratio": round(with_limit / without, 2),
            "submit_us": submit,
            "submit_ratio": round(submit["limited"] / submit["unlimited"], 2),
        }
    finally:
        await store.close()


async def _submits(store: RedisStore) -> dict[str, float]:
    """SubmitAction's median (µs) through a limited service (the act cell taken on
    every move, never refusing) and an unlimited one, each playing a game of its own
    worked out before the clock starts, alternated in rounds (the moves' info logs
    dropped: what is measured is the move, not a terminal's printing)."""
    logged = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        return await _submits_measured(store)
    finally:
        structlog.configure(**logged)


async def _submits_measured(store: RedisStore) -> dict[str, float]:
    services = {
        "limited": GameService(store, ServiceConfig(rate_per_second=1e9)),
        "unlimited": GameService(store, ServiceConfig(rates=None, rate_per_second=0)),
    }
    tables: dict[str, tuple[str, list[Caller], Any]] = {}
    for name, service in services.items():
        seed = f"bench-limits/{name}".encode()
        game = await service.create_game(
            pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2, seed=seed.hex()),
            Caller(address=name),
        )
        callers = []
        for seat in range(2):
            joined = await service.join_game(
                pb.JoinGameRequest(game_id=game.game_id, seat=seat), Caller(address=name)
            )
            callers.append(Caller(token=joined.token, address=name))
        tables[name] = (game.game_id, callers, iter(list(_random_game(seed))))
    versions = dict.fromkeys(services, 0)
    spent: dict[str, list[float]] = {name: [] for name in services}
    for _ in range(ROUNDS):
        for name, service in services.items():
            game_id, callers, moves = tables[name]
            times = []
            for _ in range(MOVES_PER_ROUND):
                seat, action = next(moves)
                request = pb.SubmitActionRequest(
                    game_id=game_id, expected_version=versions[name], action=action,
                    request_id=f"{name}-{versions[name]}",
                )  # fmt: skip
                started = time.perf_counter()
                await service.submit_action(request, callers[seat])
                times.append(time.perf_counter() - started)
                versions[name] += 1
            spent[name].append(statistics.median(times) * 1e6)
    return {name: round(statistics.median(v), 1) for name, v in spent.items()}


async def _view(service: GameService, request: pb.GetViewRequest, caller: Caller) -> None:
    try:
        await service.get_view(request, caller)
    except Exception as exc:  # RATE_LIMITED past the read burst: the same round trip
        if getattr(exc, "reason", "") != "RATE_LIMITED":
            raise


def run() -> dict[str, Any]:
    with redis_server() as url:
        return asyncio.run(_measure(url))


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
