"""Server options from flags and GLINTWICK_* environment variables (no heavy imports)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass


@dataclass
class ServerOptions:
    grpc_address: str = "127.0.0.1:50051"
    http_address: str = "127.0.0.1:8080"
    store: str = "memory"
    workers: int = 1
    operator_token: str | None = None
    bot_pool_token: str | None = None  # accepted for the house-bot calls only
    finished_ttl: int = 24 * 3600
    rate_per_second: float = 500.0
    rate_burst: int = 1000
    sweep_seconds: float = 0.25
    reuse_port: bool = False
    bots: bool = True  # False (--no-bots): never run the in-process bot pool
    bot_pool: str = "auto"  # the in-process house-bot pool: auto (memory store only) | on | off
    # The bots a game may seat as house bots (--house-bots; None: any name) and the one
    # FillWithBots seats when the request names none (""): the names of whatever bot
    # pool plays them, which the service does not know (the `glintwick` command does)
    house_bots: frozenset[str] | None = None
    default_house_bot: str = ""
    bot_concurrency: int = 4  # house-bot turns the in-process pool plays at once
    log_format: str = "auto"  # auto | json | console
    event_loop: str = "auto"  # auto (uvloop when installed) | uvloop | asyncio


def bot_names(text: str) -> frozenset[str]:
    """The names of a comma-separated list (``--house-bots``)."""
    return frozenset(n.strip() for n in text.split(",") if n.strip())


def add_arguments(parser: argparse.ArgumentParser, *, house_bots: str | None = None) -> None:
    """The server's flags; ``house_bots``: the --house-bots default (None: any name)."""
    env = os.environ.get
    parser.add_argument(
        "--grpc", default=env("GLINTWICK_GRPC", "127.0.0.1:50051"), help="gRPC host:port"
    )
    parser.add_argument(
        "--http",
        default=env("GLINTWICK_HTTP", "127.0.0.1:8080"),
        help="HTTP host:port ('' for none)",
    )
    parser.add_argument(
        "--store", default=env("GLINTWICK_STORE", "memory"), help="'memory' or redis://host:port/db"
    )
    parser.add_argument("--workers", type=int, default=int(env("GLINTWICK_WORKERS", "1")))
    parser.add_argument(
        "--operator-token",
        default=env("GLINTWICK_OPERATOR_TOKEN"),
        help="enables CreateGameFromDeck",
    )
    parser.add_argument(
        "--house-bots",
        default=env("GLINTWICK_HOUSE_BOTS", house_bots),
        help="comma-separated bots a game may seat as house bots (CreateGame bots, FillWithBots)",
    )
    parser.add_argument(
        "--bot-pool-token",
        default=env("GLINTWICK_BOT_POOL_TOKEN"),
        help="a credential for house-bot pool workers only (ListBotTurns, acting for"
        " house-bot seats; never CreateGameFromDeck)",
    )
    parser.add_argument(
        "--finished-ttl", type=int, default=int(env("GLINTWICK_FINISHED_TTL", str(24 * 3600)))
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=float(env("GLINTWICK_RATE", "500")),
        help="requests/s per seat",
    )
    parser.add_argument("--burst", type=int, default=int(env("GLINTWICK_BURST", "1000")))
    parser.add_argument(
        "--bot-pool",
        choices=["auto", "on", "off"],
        default=env("GLINTWICK_BOT_POOL", "auto"),
        help="play house-bot seats in process (auto: with the memory store only)",
    )
    parser.add_argument(
        "--bot-concurrency",
        type=int,
        default=int(env("GLINTWICK_BOT_CONCURRENCY", "4")),
        help="house-bot turns the in-process pool plays at once",
    )
    parser.add_argument("--no-bots", action="store_true", help="the same as --bot-pool off")
    parser.add_argument(
        "--log-format",
        choices=["auto", "json", "console"],
        default=env("GLINTWICK_LOG_FORMAT", "auto"),
    )
    parser.add_argument(
        "--event-loop",
        choices=["auto", "uvloop", "asyncio"],
        default=env("GLINTWICK_EVENT_LOOP", "auto"),
        help="the asyncio event loop: uvloop (auto: when installed) or the standard one",
    )


def options_from(args: argparse.Namespace) -> ServerOptions:
    return ServerOptions(
        grpc_address=args.grpc,
        http_address=args.http,
        store=args.store,
        workers=args.workers,
        operator_token=args.operator_token or None,
        bot_pool_token=args.bot_pool_token or None,
        house_bots=None if args.house_bots is None else bot_names(args.house_bots),
        finished_ttl=args.finished_ttl,
        rate_per_second=args.rate,
        rate_burst=args.burst,
        bots=not args.no_bots,
        bot_pool=args.bot_pool,
        bot_concurrency=args.bot_concurrency,
        log_format=args.log_format,
        event_loop=args.event_loop,
    )
