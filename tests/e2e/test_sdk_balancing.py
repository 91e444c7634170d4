"""The SDK over several servers and against a frozen one, through real sockets.

Two ``glintwick serve`` processes (memory store: Pings need no shared state): one
client given both addresses spreads its calls over both (each server's own Ping
count, from its /metrics); a server frozen with SIGSTOP makes a call fail with
DEADLINE_EXCEEDED within the client's timeout, or a block's shorter deadline.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import grpc
import pytest

from clients.sdk import CallError, GlintwickClient, channel_target
from tests.redis_server import free_port
from tests.support.processes import (
    glintwick_command,
    logged_process,
    wait_for_log_event,
)

START_SECONDS = 30.0  # a serve process's start on a busy machine
SLACK = 2.0  # seconds a busy machine may add to a deadline's failure


@contextlib.contextmanager
def served(logs: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, int]]:
    """A ``glintwick serve`` on free ports, once it serves: (process, gRPC, HTTP port)."""
    grpc_port, http_port = free_port(), free_port()
    command = [*glintwick_command(), "serve", "--grpc", f"127.0.0.1:{grpc_port}",
               "--http", f"127.0.0.1:{http_port}", "--log-format", "json", "--no-bots"]  # fmt: skip
    with logged_process(command, logs) as process:
        wait_for_log_event(process, logs, timeout=START_SECONDS)
        yield process, grpc_port, http_port


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[list[tuple[subprocess.Popen[bytes], int, int]]]:
    with served(tmp_path / "a.log") as first, served(tmp_path / "b.log") as second:
        yield [first, second]


async def pings_served(http_port: int) -> float:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{http_port}/metrics") as answer,
    ):
        text = await answer.text()
    total = 0.0
    for labels, value in re.findall(r"^glintwick_rpc_total\{([^}]*)\} (\S+)$", text, re.M):
        if 'method="Ping"' in labels and 'face="grpc"' in labels:
            total += float(value)
    return total


@contextlib.contextmanager
def frozen(process: subprocess.Popen[bytes]) -> Iterator[None]:
    os.kill(process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(process.pid, signal.SIGCONT)


def test_a_list_of_addresses_is_one_ipv4_target() -> None:
    assert channel_target("127.0.0.1:1") == "127.0.0.1:1"
    assert channel_target(["127.0.0.1:1", "127.0.0.2:2"]) == "ipv4:127.0.0.1:1,127.0.0.2:2"
    assert channel_target(["[::1]:1", "[::1]:2"]) == "ipv6:[::1]:1,[::1]:2"
    with pytest.raises(ValueError, match="dns:///"):
        channel_target(["game.example:1", "127.0.0.1:2"])


async def test_calls_from_one_client_reach_every_server(
    two_servers: list[tuple[subprocess.Popen[bytes], int, int]],
) -> None:
    addresses = [f"127.0.0.1:{grpc_port}" for _, grpc_port, _ in two_servers]
    before = [await pings_served(http_port) for _, _, http_port in two_servers]
    async with GlintwickClient(addresses) as client:
        for _ in range(40):
            await client.ping()
    served_now = [await pings_served(http_port) for _, _, http_port in two_servers]
    counts = [after - was for after, was in zip(served_now, before, strict=True)]
    assert sum(counts) == 40
    assert min(counts) >= 10, counts  # round robin: about half each


async def test_a_dns_target_balances_too(
    two_servers: list[tuple[subprocess.Popen[bytes], int, int]],
) -> None:
    _, grpc_port, http_port = two_servers[0]
    before = await pings_served(http_port)
    async with GlintwickClient(f"dns:///127.0.0.1:{grpc_port}") as client:
        for _ in range(5):
            await client.ping()
    assert await pings_served(http_port) - before == 5


async def test_a_frozen_server_fails_a_call_within_the_timeout(
    two_servers: list[tuple[subprocess.Popen[bytes], int, int]],
) -> None:
    process, grpc_port, _ = two_servers[0]
    async with GlintwickClient(f"127.0.0.1:{grpc_port}", timeout=1.5) as client:
        await client.ping()  # connected
        with frozen(process):
            started = time.monotonic()
            with pytest.raises(CallError) as failed:
                await client.ping()
            took = time.monotonic() - started
            assert failed.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            assert 1.4 <= took < 1.5 + SLACK, took

            # a block's deadline overrides the client's, for its calls only
            started = time.monotonic()
            with client.deadline(0.3), pytest.raises(CallError) as failed:
                await client.ping()
            took = time.monotonic() - started
            assert failed.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            assert took < 0.3 + SLACK / 2, took
            assert client.timeout == 1.5
        await client.ping()  # thawed: the same client goes on
