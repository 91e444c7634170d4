"""Bootstrap: the grpc.aio server and the HTTP face in one process, health,
reflection, the deadline sweeper, graceful shutdown, and ``--workers N``.

Health follows the store (:mod:`services.store.health`): the overall status and
the GameService's are NOT_SERVING while the store cannot be reached, from start-up
on (the server starts and waits for its store, as a Kubernetes readiness probe
expects), and SERVING again when it answers.  ``glintwick.liveness`` stays SERVING
as long as the process serves at all: the liveness and start-up probes' service,
so that a store outage takes replicas out of the load balancer, not restarts them.

The in-process house-bot pool is not the service's: the ``glintwick`` command (the
composition root) hands :func:`run` a :data:`Sidecar` that plays it, and the names
of the bots it plays (``ServerOptions.house_bots``).  The service imports no client.

One Python process saturates one core; with the Redis store, ``--workers N``
starts N processes that share the ports (SO_REUSEPORT, as in grpc's
multiprocessing example): the stateless design paying off on one machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import secrets
import signal
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import grpc
import orjson
import structlog
from aiohttp import web
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from engine.game import ENGINE_FORM
from engine.solver import SOLVER_FORM
from glintwick.v1 import game_pb2 as pb
from services import reflection
from services.api import GameService, ServiceConfig
from services.config import STORE_SCHEMES, ServerOptions
from services.grpc_api import Servicer, add_to_server
from services.rest import HttpRunner, build_app
from services.store.base import GameStore, StoreUnavailableError
from services.store.health import MonitoredStore, StoreMonitor, redacted
from services.store.memory import MemoryStore
from services.usecases.limits import MAX_GRPC_MESSAGE_BYTES
from services.usecases.records import IdleLimits

log = structlog.get_logger("glintwick.server")

T = TypeVar("T")

# Something that runs beside the server for as long as it serves, given the server's
# gRPC address (host:port, reachable from this process) and the credential of the
# house-bot calls: the in-process house-bot pool, when `bot_pool_wanted`.
Sidecar = Callable[[str, str], Awaitable[None]]

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GameService"].full_name
# SERVING while the process serves, whatever its store: for liveness probes
LIVENESS_SERVICE = "glintwick.liveness"

# the longest the deadline sweeper waits after an unexpected failure (it doubles)
_SWEEP_BACKOFF_MAX = 30.0


def _json_line(event: Any, **options: Any) -> str:
    return orjson.dumps(event, **options).decode()


class _Timestamp:
    """The ``timestamp`` of a line as structlog's ``TimeStamper(fmt="iso", utc=True)``
    writes it (``2026-12-06T00:29:01.115686Z``) at a fifth of its cost: the date and
    time of day formatted once a second, not a ``datetime`` built and formatted a line."""

    __slots__ = ("prefix", "second")

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def __call__(self, logger: Any, method_name: str, event: Any) -> Any:
        now = time.time()
        second = int(now)
        if second != self.second:
            self.prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self.second = second
        event["timestamp"] = f"{self.prefix}.{int((now - second) * 1e6):06d}Z"
        return event


def configure_logging(fmt: str = "auto") -> None:
    """structlog: JSON lines outside a terminal (production), readable in one.

    A move logs a line, so the JSON path is structlog's fast one: orjson's bytes
    written as they are to stderr's binary buffer (no str decoded and encoded
    again), a short chain (no context variables: nothing binds any), a cheap
    timestamp, and the loggers cached on first use.  Each line is one ``write()``
    (print() writes the line and its newline apart, and the processes of
    ``--workers N``, sharing stderr, could splice their lines).
    """
    stream = sys.stderr
    json_lines = fmt == "json" or (fmt == "auto" and not stream.isatty())
    binary = getattr(stream, "buffer", None)
    factory: Any
    renderer: structlog.types.Processor
    if json_lines and binary is not None:
        renderer = structlog.processors.JSONRenderer(orjson.dumps, option=orjson.OPT_NON_STR_KEYS)
        factory = structlog.BytesLoggerFactory(binary)
    elif json_lines:  # (a text stream alone: a test's, say)
        renderer = structlog.processors.JSONRenderer(_json_line, option=orjson.OPT_NON_STR_KEYS)
        factory = structlog.WriteLoggerFactory(file=stream)
    else:
        renderer = structlog.dev.ConsoleRenderer()
        factory = structlog.WriteLoggerFactory(file=stream)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            _Timestamp(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=factory,
        cache_logger_on_first_use=True,
    )


def run_async(main: Coroutine[Any, Any, T], event_loop: str = "auto") -> T:
    """Run ``main`` on the chosen event loop: uvloop (libuv's loop, which grpc.aio,
    aiohttp and redis-py all run on) unless the standard one is asked for, or
    uvloop is not installed and not required.  Measured on one server process: about
    a tenth more empty RPCs and a twentieth more moves per second (BENCHMARKS.md)."""
    if event_loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if event_loop == "uvloop":
                raise
        else:
            return uvloop.run(main)
    return asyncio.run(main)


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: the running event loop, for the logs."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.startswith("uvloop") else "asyncio"


def make_store(
    url: str, finished_ttl: int, *, ack_replicas: int = 0, ack_timeout_ms: int = 500
) -> GameStore:
    """The store of ``url``; ``ack_replicas`` > 0: Redis acknowledges each write once that
    many replicas have it (the memory store has none: it ignores them)."""
    if url == "memory":
        return MemoryStore(finished_ttl=finished_ttl)
    if url.startswith(STORE_SCHEMES):
        from services.store.redis import RedisStore

        return RedisStore(
            url,
            finished_ttl=finished_ttl,
            ack_replicas=ack_replicas,
            ack_timeout=ack_timeout_ms / 1000,
        )
    raise ValueError(f"unknown store {url!r}: use 'memory' or a redis:// (or redis+cluster://) URL")


class TlsError(ValueError):
    """The TLS files cannot serve: missing, unreadable, or not a certificate and its key."""


@dataclass(frozen=True)
class Tls:
    """One certificate chain and key, for both faces."""

    grpc_credentials: grpc.ServerCredentials
    http_context: ssl.SSLContext


def load_tls(cert: str | None, key: str | None) -> Tls | None:
    """The TLS of ``--tls-cert``/``--tls-key`` (None: neither given, plaintext), checked
    here once so that a bad file is one clear error, not a failure inside grpc."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise TlsError("--tls-cert and --tls-key go together: give both or neither")
    pem: dict[str, bytes] = {}
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        try:
            with open(path, "rb") as file:
                pem[flag] = file.read()
        except OSError as exc:
            raise TlsError(f"{flag} {path}: {exc.strerror or exc}") from None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise TlsError(
            f"--tls-cert {cert} --tls-key {key}: not a PEM certificate and its private key"
            f" ({exc.reason or exc})"
        ) from None
    credentials = grpc.ssl_server_credentials([(pem["--tls-key"], pem["--tls-cert"])])
    return Tls(credentials, context)


@dataclass
class RunningServer:
    grpc_server: grpc.aio.Server
    grpc_port: int
    http_runner: web.AppRunner | None
    http_port: int
    service: GameService
    health: HealthServicer
    sweeper: asyncio.Task[None]
    monitor: StoreMonitor
    monitoring: asyncio.Task[None]
    # with TLS, a plaintext port on the loopback interface for the in-process bot pool
    # (whose certificate need not name this host); 0: the pool uses grpc_port
    sidecar_port: int = 0

    async def stop(self, grace: float = 5.0) -> None:
        await self.health.enter_graceful_shutdown()
        self.service.end_watches()  # endless streams: never worth the grace
        tasks = (self.sweeper, self.monitoring)
        for task in tasks:
            task.cancel()
        # bounded: a cancel swallowed below them (3.11's asyncio.wait_for did) must not
        # hold the stop for ever
        _, stuck = await asyncio.wait(tasks, timeout=grace + 1.0)
        for task in stuck:
            log.warning("task_ignored_its_cancel", task=task.get_name())
        await self.grpc_server.stop(grace)
        if self.http_runner is not None:
            await self.http_runner.cleanup()
        await self.service.store.close()


async def _sweep(service: GameService, every: float, monitor: StoreMonitor) -> None:
    """Apply passed deadlines (and end idle games) every ``every`` seconds.  While
    the store is down it waits for it (the monitor has logged the outage); after an
    unexpected failure it logs it and waits twice as long each time, up to
    _SWEEP_BACKOFF_MAX."""
    from services import metrics

    pause = every
    while True:
        await monitor.wait_available()
        try:
            swept = await service.expire_deadlines()
            if swept.actions:
                metrics.DEADLINE_ACTIONS.inc(swept.actions)
            if swept.abandoned:
                metrics.GAMES_ABANDONED.inc(swept.abandoned)
            pause = every
        except asyncio.CancelledError:
            raise
        except StoreUnavailableError:
            pass  # (the monitor probes now: the next round waits for the store)
        except Exception:
            log.exception("deadline_sweep_failed", retry_seconds=pause)
            pause = min(pause * 2, _SWEEP_BACKOFF_MAX)
        await asyncio.sleep(pause)


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]") or "127.0.0.1", int(port)


async def start(options: ServerOptions, store: GameStore | None = None) -> RunningServer:
    """Start serving; ports 0 pick free ones (see RunningServer's ports).

    The store is checked first: unreachable, the server logs ``store_unavailable``
    (its URL without credentials, and the error) and serves NOT_SERVING until it
    answers."""
    store_name = redacted(options.store) if store is None else type(store).__name__
    inner = store or make_store(
        options.store,
        options.finished_ttl,
        ack_replicas=options.replica_acks,
        ack_timeout_ms=options.ack_timeout_ms,
    )
    monitor = StoreMonitor(inner, store_name)
    await monitor.probe()
    service = GameService(
        MonitoredStore(inner, monitor),
        ServiceConfig(
            operator_token=options.operator_token,
            bot_pool_token=options.bot_pool_token,
            rate_per_second=options.rate_per_second,
            rate_burst=options.rate_burst,
            rates=options.rates,
            quotas=options.quotas,
            trusted_proxies=options.trusted_proxies,
            house_bots=options.house_bots,
            default_house_bot=options.default_house_bot,
            idle=IdleLimits(options.abandon_after, options.unjoined_after),
        ),
    )
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 1 if options.reuse_port else 0),
            # (--max-connection-age: clients reconnect, and so spread over new replicas)
            ("grpc.max_connection_age_ms", round(options.max_connection_age * 1000)),
            ("grpc.max_connection_age_grace_ms", round(options.max_connection_age_grace * 1000)),
            # (gRPC's default, set here so that GetLimits tells what is enforced)
            ("grpc.max_receive_message_length", MAX_GRPC_MESSAGE_BYTES),
        ]
    )
    # the servicer's methods are bound from the descriptor at run time
    add_to_server(Servicer(service), server)  # type: ignore[abstract]
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable(
        server, (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name)
    )
    tls = load_tls(options.tls_cert, options.tls_key)
    sidecar_port = 0
    if tls is None:
        port = server.add_insecure_port(options.grpc_address)
    else:
        port = server.add_secure_port(options.grpc_address, tls.grpc_credentials)
        sidecar_port = server.add_insecure_port("127.0.0.1:0")
    if port == 0:
        raise OSError(f"cannot bind gRPC to {options.grpc_address}")
    await server.start()
    runner: web.AppRunner | None = None
    http_port = 0
    if options.http_address:
        runner = HttpRunner(build_app(service, cors_origins=options.cors_origins), access_log=None)
        await runner.setup()
        host, wanted = _split(options.http_address)
        site = web.TCPSite(
            runner,
            host,
            wanted,
            reuse_port=options.reuse_port or None,
            ssl_context=None if tls is None else tls.http_context,
        )
        await site.start()
        bound = runner.addresses
        http_port = int(bound[0][1]) if bound else wanted

    async def publish(serving: bool) -> None:
        # (SERVING while some part of the store answers: docs/OPERATIONS.md)
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await health.set("", status)
        await health.set(SERVICE_NAME, status)

    await health.set(LIVENESS_SERVICE, health_pb2.HealthCheckResponse.SERVING)
    await publish(monitor.serving)
    monitor.on_change(publish)
    monitoring = asyncio.create_task(monitor.run(), name="store-monitor")
    sweeper = asyncio.create_task(
        _sweep(service, options.sweep_seconds, monitor), name="deadline-sweeper"
    )
    log.info(
        "serving",
        grpc_port=port,
        http_port=http_port,
        store=store_name,
        health="SERVING" if monitor.serving else "NOT_SERVING (waiting for the store)",
        pid=os.getpid(),
        event_loop=loop_name(),
        solver=SOLVER_FORM,
        engine=ENGINE_FORM,
        tls=tls is not None,
    )
    return RunningServer(
        server, port, runner, http_port, service, health, sweeper, monitor, monitoring, sidecar_port
    )


async def serve(options: ServerOptions, bot_pool: Sidecar | None = None) -> None:
    running = await start(options)
    # What start-up built (modules, rule tables, the server) lives as long as the
    # process: frozen out of the cyclic collector's sight, it is no longer walked
    # by every full collection that request garbage triggers.  (Cheap insurance:
    # on the benchmarks its effect is within the noise.)
    gc.freeze()
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    extra: list[asyncio.Task[None]] = []
    if bot_pool is not None and bot_pool_wanted(options):
        extra.append(start_sidecar(running, options, bot_pool))
    await stopping.wait()
    log.info("shutting_down")
    for task in extra:
        task.cancel()
    for task in extra:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await running.stop()


def bot_pool_wanted(options: ServerOptions) -> bool:
    """Whether ``serve`` plays house-bot seats in process (``--bot-pool``, ``--no-bots``):
    by default with the embedded store; with Redis, run ``glintwick bots`` workers."""
    if not options.bots or options.bot_pool == "off":
        return False
    return options.bot_pool == "on" or options.store == "memory"


def start_sidecar(
    running: RunningServer, options: ServerOptions, sidecar: Sidecar
) -> asyncio.Task[None]:
    """Run ``sidecar`` against this server's own gRPC port, so that an in-process bot
    pool takes the very path an outside ``glintwick bots`` worker does.  It gets the
    bot-pool credential, else the operator's; with neither, a random bot-pool
    credential of its own (one for all ``--workers``), good for the house-bot calls
    only."""
    config = running.service.config
    token = config.bot_pool_token or config.operator_token
    if not token:
        token = config.bot_pool_token = secrets.token_urlsafe(32)
    host, _ = _split(options.grpc_address)
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    address = f"{host}:{running.grpc_port}"
    if running.sidecar_port:
        address = f"127.0.0.1:{running.sidecar_port}"

    async def accompany() -> None:
        try:
            await sidecar(address, token)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("sidecar_failed")

    return asyncio.create_task(accompany())


def _worker(options: ServerOptions, bot_pool: Sidecar | None) -> None:
    configure_logging(options.log_format)
    run_async(serve(options, bot_pool), options.event_loop)


def run(options: ServerOptions, bot_pool: Sidecar | None = None) -> int:
    """Serve until SIGTERM/SIGINT; ``bot_pool`` (picklable, for ``--workers``) runs in
    every process when :func:`bot_pool_wanted`."""
    configure_logging(options.log_format)
    if options.workers <= 1:
        run_async(serve(options, bot_pool), options.event_loop)
        return 0
    if options.store == "memory":
        log.error("workers_need_redis", hint="several processes share state only through Redis")
        return 2
    options = replace(options, reuse_port=True)
    pooled = bot_pool is not None and bot_pool_wanted(options)
    if pooled and not (options.operator_token or options.bot_pool_token):
        # every process's pool may reach any process through the shared port: one
        # credential for all of them
        options = replace(options, bot_pool_token=secrets.token_urlsafe(32))
    processes = [
        multiprocessing.get_context("spawn").Process(target=_worker, args=(options, bot_pool))
        for _ in range(options.workers)
    ]
    for process in processes:
        process.start()

    def forward(signum: int, _: object) -> None:
        for process in processes:
            if process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for process in processes:
        process.join()
    return 0
