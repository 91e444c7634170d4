"""Prometheus metrics: RPC counts and latencies, compare-and-set conflicts, games in play."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

RPCS = Counter("glintwick_rpc_total", "RPCs served", ["method", "code", "face"])
LATENCY = Histogram(
    "glintwick_rpc_seconds",
    "RPC latency",
    ["method", "face"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
CAS_CONFLICTS = Counter(
    "glintwick_cas_conflicts_total", "Writes refused because the game changed first (ABORTED)"
)
WATCHERS = Gauge("glintwick_watchers", "Open watch streams in this process")
GAMES_IN_PLAY = Gauge("glintwick_games_in_play", "Unfinished games in the store")
LIMIT_REFUSALS = Counter(
    "glintwick_limit_refusals_total",
    "Calls refused by a rate limit (kind rate, by call class) or a quota (kind quota, by reason)",
    ["kind", "name"],
)
DEADLINE_ACTIONS = Counter(
    "glintwick_deadline_actions_total", "Default actions applied at deadlines"
)
GAMES_ABANDONED = Counter(
    "glintwick_games_abandoned_total", "Games ended as abandoned (idle past their idle limit)"
)


# labelled children by (method, code, face): ``labels()`` validates and locks on
# every call, a few microseconds per RPC; the children never change once made
_CHILDREN: dict[tuple[str, str, str], tuple[Counter, Histogram]] = {}


def observe(method: str, code: str, face: str, seconds: float) -> None:
    key = (method, code, face)
    children = _CHILDREN.get(key)
    if children is None:
        children = _CHILDREN[key] = (RPCS.labels(method, code, face), LATENCY.labels(method, face))
    count, latency = children
    count.inc()
    latency.observe(seconds)
