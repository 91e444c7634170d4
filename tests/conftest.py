"""Fixtures of every suite: the session's Redis Cluster (started only if a test asks)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from loadtests.processes.cluster import RedisCluster, redis_cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[RedisCluster]:
    """A real six-node Redis Cluster on free ports, one for the session (a few seconds
    to start); a test empties it with ``cluster.flush()``."""
    with redis_cluster() as started:
        yield started


@pytest.fixture
def fresh_cluster(cluster: RedisCluster) -> RedisCluster:
    """The session's cluster, emptied for this test (and whole again: a test may have
    killed a primary)."""
    for port in set(cluster.ports) - set(cluster.pids):
        cluster.restart(port)
    cluster.flush()
    return cluster
