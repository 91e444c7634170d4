"""The campaign's fault steps, one after another: each does its fault and repairs it."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from loadtests.faults.campaign import Clients
from loadtests.faults.figures import Figures
from loadtests.processes.server import ServerProcess

if TYPE_CHECKING:  # (the topologies make their store steps of this module's)
    from loadtests.faults.topologies import Topology


@dataclass
class Context:
    topology: Topology
    servers: list[ServerProcess]
    clients: Clients
    figures: Figures


class Step(Protocol):
    name: str

    async def inject(self, context: Context) -> str:
        """Do the fault and repair it (restart, resume): the campaign then measures.
        The answer: what it did ("" when its name says it)."""
        ...


@dataclass
class KillServer:
    index: int
    down: float = 3.0
    name: str = "kill-server"

    async def inject(self, context: Context) -> str:
        server = context.servers[self.index]
        server.kill()
        await asyncio.sleep(self.down)
        server.store = context.topology.url  # (a cluster's node that runs now)
        await asyncio.to_thread(server.start)
        return f"server {self.index}"


@dataclass
class KillStore:
    name: str = "kill-store"

    async def inject(self, context: Context) -> str:
        killed = await asyncio.to_thread(context.topology.kill)
        await asyncio.sleep(1.0)
        restarted = await asyncio.to_thread(context.topology.restart)
        return "; ".join(filter(None, [killed, restarted]))


@dataclass
class FreezeStore:
    seconds: float = 5.0
    name: str = "freeze-store"

    async def inject(self, context: Context) -> str:
        frozen = await asyncio.to_thread(context.topology.freeze)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            resumed = await asyncio.to_thread(context.topology.thaw)
        return "; ".join(filter(None, [frozen, resumed]))


@dataclass
class DropClients:
    seconds: float = 5.0
    name: str = "drop-clients"

    async def inject(self, context: Context) -> str:
        clients = context.clients
        clients.dropping = True
        try:
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                await asyncio.sleep(0.5)
                await clients.replace(random.randrange(len(clients.pool)))
        finally:
            clients.dropping = False
        return ""


def steps_for(topology: Topology, seconds: float = 5.0) -> list[Step]:
    """The campaign's faults in order; ``seconds``: how long Redis stays frozen and the
    clients drop calls (a killed server stays down for most of it)."""
    return [
        KillServer(0, down=seconds * 0.6),
        *topology.store_steps(seconds),
        DropClients(seconds),
        KillServer(1, down=seconds * 0.6),
    ]
