"""What the load test loads: a deployed service (``--target``), or a server it starts
(``glintwick serve`` on free ports, :mod:`loadtests.processes.server`) over the store it
starts (a redis-server or a Redis Cluster, :mod:`loadtests.processes.redis` and
:mod:`~loadtests.processes.cluster`; or the embedded memory store)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field

import psutil

from loadtests.processes.cluster import redis_cluster
from loadtests.processes.redis import redis_server
from loadtests.processes.server import ServerProcess

#: the CPU group of the server's processes
SERVER = "server (glintwick)"


@dataclass
class Service:
    grpc_target: str
    http_url: str
    #: the processes whose CPU time is sampled, by group (none of a deployed service)
    watch: dict[str, list[int]] = field(default_factory=dict)


@contextlib.contextmanager
def service(args: argparse.Namespace) -> Iterator[Service]:
    """The service under load for the block; what it started is stopped after."""
    if args.target:
        yield Service(args.target, args.http_target or "http://127.0.0.1:8080")
        return
    with contextlib.ExitStack() as stack:
        store = "memory"
        if args.store == "redis":
            store = stack.enter_context(redis_server())
        elif args.store == "cluster":  # six nodes: loadtests/processes/cluster.py
            store = stack.enter_context(redis_cluster()).url
        elif args.workers > 1:
            print("--workers > 1 needs the Redis store; using 1", file=sys.stderr)
            args.workers = 1
        # the load generator stands for many clients: it names each simulated user's
        # own address in x-forwarded-for, believed from it as from an ingress
        options = ["--no-bots", "--trusted-proxy", "127.0.0.1"]
        server = ServerProcess(
            args.out, *options, store=store, workers=args.workers, http=True,
            root=args.server_root,
        )  # fmt: skip
        stack.enter_context(server)
        with urllib.request.urlopen(f"{server.http_url}/healthz", timeout=5) as answer:
            if answer.status != 200:
                raise RuntimeError(f"the server is not healthy: {answer.status}")
        watch = {SERVER: [server.pid]}
        redis_pids = [
            p.pid for p in psutil.Process().children() if p.name().startswith("redis-server")
        ]
        if redis_pids:
            watch["redis-server"] = redis_pids
        print(
            f"serving: gRPC {server.address}, HTTP {server.http_url}, store {args.store}, "
            f"{args.workers} worker(s)"
        )
        yield Service(server.address, server.http_url, watch)
