"""The SDK and the bot pool over several servers and against a frozen one, through real sockets.

Two ``glintwick serve`` processes (memory store: Pings need no shared state): one
client given both addresses spreads its calls over both (each server's own Ping
count, from its /metrics); so does one given a DNS name with both addresses, as a
headless Service is (a DNS server on the loopback answers the name with 127.0.0.1
and 127.0.0.2, where the two servers listen on one port), and so does a
``glintwick bots`` worker given that name (each server's own ListBotTurns count).
A server with a short ``--max-connection-age`` makes a client reconnect (a new
socket), which is how clients spread again over replicas added since; a server
frozen with SIGSTOP makes a call fail with DEADLINE_EXCEEDED within the client's
timeout, or a block's shorter deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import cast

import aiohttp
import dns.message
import dns.rdatatype
import dns.rrset
import grpc
import psutil
import pytest

from clients.sdk import CallError, GlintwickClient, channel_target
from loadtests.processes.child import ChildProcess, glintwick_command
from loadtests.processes.ports import free_port
from loadtests.processes.server import ServerProcess

START_SECONDS = 30.0  # a serve process's start on a busy machine
SLACK = 2.0  # seconds a busy machine may add to a deadline's failure


BOT_POOL_TOKEN = "pool-credential"
NAME = "glintwick-grpc.test."  # the headless Service's name, resolved by the DNS server below


def served(
    logs: Path, name: str, *flags: str, host: str = "127.0.0.1", grpc_port: int = 0
) -> ServerProcess:
    """A ``glintwick serve`` (memory store) on free ports (or ``grpc_port``) of ``host``,
    HTTP on 127.0.0.1; as a context manager, started and waited for until it serves."""
    return ServerProcess(
        logs, "--no-bots", "--bot-pool-token", BOT_POOL_TOKEN, *flags,
        name=name, http=True, host=host, grpc_port=grpc_port,
    )  # fmt: skip


class _Names(asyncio.DatagramProtocol):
    """A DNS server answering :data:`NAME` with several IPv4 addresses (and nothing else)."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, sender: tuple[str, int]) -> None:
        query = dns.message.from_wire(data)
        answer = dns.message.make_response(query)
        for question in query.question:
            if question.name.to_text().lower() == NAME and question.rdtype == dns.rdatatype.A:
                answer.answer.append(
                    dns.rrset.from_text(question.name, 1, "IN", "A", *self.addresses)
                )
        assert self.transport is not None
        self.transport.sendto(answer.to_wire(), sender)


@contextlib.asynccontextmanager
async def dns_name(addresses: list[str]) -> AsyncIterator[str]:
    """A DNS server on a free loopback port answering :data:`NAME` with ``addresses``:
    the ``dns://server/`` authority of a gRPC target naming it."""
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(
        lambda: _Names(addresses), local_addr=("127.0.0.1", 0)
    )
    try:
        port = transport.get_extra_info("sockname")[1]
        yield f"dns://127.0.0.1:{port}/"
    finally:
        transport.close()


@pytest.fixture
def two_hosts(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    """Two servers on one gRPC port of two loopback addresses (127.0.0.1, 127.0.0.2)."""
    port = free_port()
    with (
        served(tmp_path, "a", host="127.0.0.1", grpc_port=port) as first,
        served(tmp_path, "b", host="127.0.0.2", grpc_port=port) as second,
    ):
        yield [first, second]


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    with served(tmp_path, "a") as first, served(tmp_path, "b") as second:
        yield [first, second]


async def pings_served(server: ServerProcess, method: str = "Ping") -> float:
    """The calls of ``method`` a server has answered over gRPC (its /metrics)."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{server.http_url}/metrics") as answer,
    ):
        text = await answer.text()
    total = 0.0
    for labels, value in re.findall(r"^glintwick_rpc_total\{([^}]*)\} (\S+)$", text, re.M):
        if f'method="{method}"' in labels and 'face="grpc"' in labels:
            total += float(value)
    return total


@contextlib.contextmanager
def frozen(server: ServerProcess) -> Iterator[None]:
    server.freeze()
    try:
        yield
    finally:
        server.thaw()


def test_a_list_of_addresses_is_one_ipv4_target() -> None:
    assert channel_target("127.0.0.1:1") == "127.0.0.1:1"
    assert channel_target(["127.0.0.1:1", "127.0.0.2:2"]) == "ipv4:127.0.0.1:1,127.0.0.2:2"
    assert channel_target(["[::1]:1", "[::1]:2"]) == "ipv6:[::1]:1,[::1]:2"
    with pytest.raises(ValueError, match="dns:///"):
        channel_target(["game.example:1", "127.0.0.1:2"])


async def test_calls_from_one_client_reach_every_server(
    two_servers: list[ServerProcess],
) -> None:
    addresses = [server.address for server in two_servers]
    before = [await pings_served(server) for server in two_servers]
    async with GlintwickClient(addresses) as client:
        for _ in range(40):
            await client.ping()
    served_now = [await pings_served(server) for server in two_servers]
    counts = [after - was for after, was in zip(served_now, before, strict=True)]
    assert sum(counts) == 40
    assert min(counts) >= 10, counts  # round robin: about half each


async def test_a_dns_target_balances_too(
    two_servers: list[ServerProcess],
) -> None:
    server = two_servers[0]
    before = await pings_served(server)
    async with GlintwickClient(f"dns:///{server.address}") as client:
        for _ in range(5):
            await client.ping()
    assert await pings_served(server) - before == 5


async def test_a_dns_name_of_several_addresses_balances_over_them(
    two_hosts: list[ServerProcess],
) -> None:
    port = two_hosts[0].grpc_port
    before = [await pings_served(server) for server in two_hosts]
    async with (
        dns_name(["127.0.0.1", "127.0.0.2"]) as authority,
        GlintwickClient(f"{authority}{NAME}:{port}") as client,
    ):
        for _ in range(40):
            await client.ping()
    counts = [await pings_served(s) - was for s, was in zip(two_hosts, before, strict=True)]
    assert sum(counts) == 40
    assert min(counts) >= 10, counts  # round robin over the name's addresses


async def test_the_bot_pool_balances_over_a_dns_name(
    two_hosts: list[ServerProcess], tmp_path: Path
) -> None:
    port, health = two_hosts[0].grpc_port, free_port()
    async with dns_name(["127.0.0.1", "127.0.0.2"]) as authority:
        command = [*glintwick_command(), "bots", "--target", f"{authority}{NAME}:{port}",
                   "--bot-pool-token", BOT_POOL_TOKEN, "--poll", "0.05",
                   "--health", f"127.0.0.1:{health}", "--log-format", "json"]  # fmt: skip
        logs = tmp_path / "bots.log"
        with ChildProcess(command, logs) as pool:
            pool.wait_for_event("bot_pool_started", timeout=START_SECONDS)
            # each idle poll is one ListBotTurns: round robin sends them to both servers
            deadline = time.monotonic() + START_SECONDS
            while True:
                counts = [await pings_served(s, "ListBotTurns") for s in two_hosts]
                if min(counts) >= 5 or time.monotonic() > deadline:
                    break
                assert pool.poll() is None, logs.read_text()
                await asyncio.sleep(0.2)
            # the probes' endpoint (k8s/base/bots.yaml): live, and ready as listing works
            async with aiohttp.ClientSession() as session:
                for path in ("/livez", "/readyz"):
                    async with session.get(f"http://127.0.0.1:{health}{path}") as answer:
                        assert answer.status == 200, path
    assert min(counts) >= 5, (counts, logs.read_text()[-2000:])


def _sockets_to(port: int) -> set[int]:
    """The local ports of this process's TCP connections to ``port`` on the loopback."""
    return {
        c.laddr.port
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port
    }


@pytest.mark.parametrize(("age", "recycled"), [(1.0, True), (300.0, False)])
async def test_a_connection_is_recycled_at_its_max_age(
    tmp_path: Path, age: float, recycled: bool
) -> None:
    flags = ["--max-connection-age", str(age), "--max-connection-age-grace", "0.5"]
    with served(tmp_path, "server", *flags) as server:
        grpc_port = server.grpc_port
        seen: set[int] = set()
        async with GlintwickClient(server.address) as client:
            finish = time.monotonic() + 3.5 * 1.0
            while time.monotonic() < finish:
                await client.ping()  # (a call in a reconnection is retried by the SDK)
                seen |= _sockets_to(grpc_port)
                await asyncio.sleep(0.1)
    # past its age the server ends the connection (GOAWAY) and the client opens another
    assert (len(seen) >= 2) is recycled, seen


async def test_a_frozen_server_fails_a_call_within_the_timeout(
    two_servers: list[ServerProcess],
) -> None:
    server = two_servers[0]
    async with GlintwickClient(server.address, timeout=1.5) as client:
        await client.ping()  # connected
        with frozen(server):
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
