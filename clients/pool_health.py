"""The health of a house-bot pool worker over HTTP, for a Kubernetes probe.

``GET /livez``: 200 while the worker's loop goes round (between two rounds: one
listing, retried as the SDK does, and a wait of at most
:data:`clients.botpool.MAX_BACKOFF_SECONDS`), 503 once it has not for
:data:`STALL_SECONDS`: a stuck worker, which a restart cures.
``GET /readyz``: 200 while listing the bot turns works, 503 while it fails (the
server unreachable, its store down): nothing a restart of this worker cures, so the
liveness probe ignores it; the PodDisruptionBudget counts ready workers.
"""

from __future__ import annotations

import time

from aiohttp import web

from clients.botpool import BotPool

#: the loop not going round for this long means the worker is stuck: well past a
#: listing against a frozen server (the SDK's 5 attempts of 10 s) and the longest wait
STALL_SECONDS = 120.0


def health_app(pool: BotPool) -> web.Application:
    async def live(_: web.Request) -> web.Response:
        stalled = time.monotonic() - pool.heartbeat
        if stalled > STALL_SECONDS:
            return web.Response(status=503, text=f"the pool loop stalled {stalled:.0f}s\n")
        return web.Response(text="live\n")

    async def ready(_: web.Request) -> web.Response:
        if pool.listing_fails:
            return web.Response(status=503, text="listing the bot turns fails\n")
        return web.Response(text="ready\n")

    app = web.Application()
    app.router.add_get("/livez", live)
    app.router.add_get("/readyz", ready)
    return app


async def start_health(pool: BotPool, address: str) -> web.AppRunner:
    """Serve :func:`health_app` on ``address`` (host:port); cleanup() the runner to stop."""
    host, _, port = address.rpartition(":")
    runner = web.AppRunner(health_app(pool), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host.strip("[]"), int(port)).start()
    return runner
