"""Server options from flags and GLINTWICK_* environment variables (no heavy imports)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: the call classes each rate limit is for (services/usecases/quotas.py)
CALL_CLASSES = ("create", "join", "read", "act", "analyse", "stream")


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate limit: ``per_second`` on average, ``burst`` at once (0 per second: none)."""

    per_second: float
    burst: int


#: the default rate of each call class per client key, besides act (``--rate`` and
#: ``--burst``, 500/s and 1,000): far above a person at the browser table (a call or
#: two a second) and above a fast bot or a tournament over the API from one address
#: (tens of games at once), far below a flood (issue 19: 1,045 creates a second)
DEFAULT_RATES: dict[str, Rate] = {
    "create": Rate(20.0, 200),
    "join": Rate(50.0, 200),
    "read": Rate(200.0, 1000),
    "analyse": Rate(20.0, 100),
    "stream": Rate(100.0, 1000),
}
#: the act class's default per seat (``--rate``, ``--burst``)
DEFAULT_ACT_RATE = Rate(500.0, 1000)


@dataclass(frozen=True, slots=True)
class Quotas:
    """What one client, one game and the service may hold at once (0: no quota)."""

    open_games: int = 200  # unfinished games one client created
    game_watchers: int = 256  # open watches of one game
    game_sessions: int = 256  # open play sessions of one game (from all clients)
    client_streams: int = 256  # open watches and play sessions of one client
    games_in_play: int = 200_000  # unfinished games on the service (~1.1 KB each)


NO_QUOTAS = Quotas(0, 0, 0, 0, 0)
QUOTA_NAMES = tuple(Quotas.__dataclass_fields__)


def rate_limits(text: str) -> dict[str, Rate] | None:
    """``--limits``: ``CLASS=RATE/BURST`` pairs, comma-separated (``off``: no rate
    limit at all: None)."""
    if text.strip().lower() == "off":
        return None
    rates: dict[str, Rate] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        name, _, value = item.partition("=")
        per_second, slash, burst = value.partition("/")
        try:
            rate = Rate(float(per_second), int(burst) if slash else max(1, int(float(per_second))))
        except ValueError:
            rate = Rate(-1.0, -1)
        if name.strip() not in CALL_CLASSES or rate.per_second < 0 or rate.burst < 0:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not CLASS=RATE/BURST with a class of {', '.join(CALL_CLASSES)}"
            )
        rates[name.strip()] = rate
    return rates


def quotas(text: str) -> Quotas:
    """``--quotas``: ``NAME=N`` pairs, comma-separated (0: none; ``off``: no quota)."""
    if text.strip().lower() == "off":
        return NO_QUOTAS
    given: dict[str, int] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        name, _, value = item.partition("=")
        if name.strip() not in QUOTA_NAMES or not value.strip().isdigit():
            raise argparse.ArgumentTypeError(
                f"{item!r} is not NAME=N with a name of {', '.join(QUOTA_NAMES)}"
            )
        given[name.strip()] = int(value)
    return Quotas(**given)


def trusted_proxies(text: str) -> tuple[Network, ...]:
    """``--trusted-proxy``: CIDRs, comma-separated (an address alone: itself)."""
    try:
        return tuple(
            ipaddress.ip_network(c.strip(), strict=False) for c in text.split(",") if c.strip()
        )
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of CIDRs: {exc}") from exc


@dataclass
class ServerOptions:
    grpc_address: str = "127.0.0.1:50051"
    http_address: str = "127.0.0.1:8080"
    store: str = "memory"
    workers: int = 1
    operator_token: str | None = None
    bot_pool_token: str | None = None  # accepted for the house-bot calls only
    finished_ttl: int = 24 * 3600
    # seconds without a move after which a game ends abandoned, and a table with a
    # free seat sooner (0: never; docs/OPERATIONS.md, "Abandoned games")
    abandon_after: float = 3 * 3600.0
    unjoined_after: float = 30 * 60.0
    rate_per_second: float = DEFAULT_ACT_RATE.per_second  # the act class, per seat
    rate_burst: int = DEFAULT_ACT_RATE.burst
    # the other call classes' rates (by class; the defaults for those not given) and
    # None: no rate limit at all (--limits off); the quotas; the proxies whose
    # X-Forwarded-For is believed
    rates: dict[str, Rate] | None = field(default_factory=dict)
    quotas: Quotas = field(default_factory=Quotas)
    trusted_proxies: tuple[Network, ...] = ()
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
    # TLS on both faces (PEM files, both or neither); None: plaintext
    tls_cert: str | None = None
    tls_key: str | None = None
    # the web origins whose pages may call the HTTP face (CORS); "*": any
    cors_origins: frozenset[str] = frozenset()
    # a gRPC connection is closed (GOAWAY) after this many seconds, and its calls
    # in flight get the grace to finish: clients then reconnect, and round_robin
    # over a headless Service spreads them again over replicas added since
    max_connection_age: float = 300.0
    max_connection_age_grace: float = 30.0
    # When a write is acknowledged (docs/OPERATIONS.md, "Durability"): "local" once the
    # Redis primary applied it; "replica" once ``ack_replicas`` replicas confirmed it
    # (Redis WAIT, up to ``ack_timeout_ms``; else UNAVAILABLE REPLICA_ACK_TIMEOUT).
    # The memory store has no replica: it ignores the mode.
    ack: str = "local"
    ack_replicas: int = 1
    ack_timeout_ms: int = 500

    @property
    def replica_acks(self) -> int:
        """The replicas each write waits for (0: acknowledged by the primary alone)."""
        return self.ack_replicas if self.ack == "replica" else 0


def bot_names(text: str) -> frozenset[str]:
    """The names of a comma-separated list (``--house-bots``)."""
    return frozenset(n.strip() for n in text.split(",") if n.strip())


def cors_origins(given: list[str] | str | None) -> frozenset[str]:
    """The origins of ``--cors-origin`` (repeatable, each comma-separated)."""
    if given is None:
        return frozenset()
    texts = [given] if isinstance(given, str) else given
    return frozenset(o.strip().rstrip("/") for t in texts for o in t.split(",") if o.strip())


# ------------------------------------------------------------------ flag values
# Each flag's default may come from its GLINTWICK_* variable: the default is the
# variable's raw text, which argparse converts with the flag's type only when the
# flag is not given, so a bad variable is one clear error (naming the variable),
# and never breaks ``--help``.


def env_default(variable: str, fallback: str | None) -> str | None:
    """The default of a flag: its environment variable's text, else ``fallback``."""
    return os.environ.get(variable, fallback)


def flag_help(text: str, variable: str) -> str:
    """A flag's help with its environment variable and its default."""
    return f"{text} [env {variable}; default: %(default)s]"


def _type(name: str, convert: Callable[[str], T], ok: Callable[[T], bool]) -> Callable[[str], T]:
    def parse(text: str) -> T:
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {name}")
        return value

    parse.__name__ = name  # argparse names the type in its messages
    return parse


positive_int = _type("a positive integer", int, lambda n: n >= 1)
non_negative_int = _type("an integer >= 0", int, lambda n: n >= 0)
positive_float = _type("a positive number", float, lambda x: x > 0)
non_negative_float = _type("a number >= 0", float, lambda x: x >= 0)


def one_of(*names: str) -> Callable[[str], str]:
    """A choice, checked for a default from the environment too (argparse checks
    ``choices`` only for a flag given on the command line)."""
    return _type(" or ".join(repr(n) for n in names), str, lambda text: text in names)


def address(text: str) -> str:
    """``host:port`` with a port 0..65535 (0: any free port)."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not host:port with a port 0..65535")
    if not host.strip("[]"):
        raise argparse.ArgumentTypeError(f"{text!r} names no host (e.g. 127.0.0.1:{port})")
    return text


def optional_address(text: str) -> str:
    """``host:port``, or '' for none."""
    return text if text == "" else address(text)


# (``redis+cluster://`` and ``rediss+cluster://``: a Redis Cluster, any node of it)
STORE_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")


def store_url(text: str) -> str:
    """'memory' or a Redis URL."""
    if text == "memory" or (text.startswith(STORE_SCHEMES) and len(text) > len("unix://")):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not 'memory' or a redis://, rediss://, unix://, redis+cluster://"
        " or rediss+cluster:// URL"
    )


def with_password(url: str, password: str | None) -> str:
    """``url`` with ``password`` (``--store-password``) as its credential, when it has
    none of its own: the URL may sit where anyone reads it, the password in a Secret."""
    if not password or url == "memory":
        return url
    parts = urllib.parse.urlsplit(url)
    if parts.password is not None:
        return url  # the URL's own credential wins: the operator wrote it there
    user = urllib.parse.quote(parts.username or "", safe="")
    secret = urllib.parse.quote(password, safe="")
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:{secret}@{host}"))


class _Repeatable(argparse.Action):
    """A repeatable flag whose first use replaces its default (from the environment)
    rather than adding to it, as every other flag's value replaces its variable's."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        so_far = getattr(namespace, self.dest)
        items = [] if so_far is None or so_far is self.default else list(so_far)
        setattr(namespace, self.dest, [*items, values])


def add_arguments(parser: argparse.ArgumentParser, *, house_bots: str | None = None) -> None:
    """The server's flags; ``house_bots``: the --house-bots default (None: any name)."""

    def add(name: str, variable: str, fallback: str | None, text: str, **options: object) -> None:
        parser.add_argument(
            name,
            default=env_default(variable, fallback),
            help=flag_help(text, variable),
            **options,  # type: ignore[arg-type]
        )

    add("--grpc", "GLINTWICK_GRPC", "127.0.0.1:50051", "gRPC host:port", type=address)
    add(
        "--http",
        "GLINTWICK_HTTP",
        "127.0.0.1:8080",
        "HTTP host:port ('' for none)",
        type=optional_address,
    )
    add(
        "--store",
        "GLINTWICK_STORE",
        "memory",
        "'memory', redis://host:port/db, or redis+cluster://host:port (a Redis Cluster)",
        type=store_url,
    )
    add(
        "--store-password",
        "GLINTWICK_STORE_PASSWORD",
        None,
        "the store's password, when its URL has none (e.g. from a Kubernetes Secret)",
    )
    add(
        "--workers",
        "GLINTWICK_WORKERS",
        "1",
        "server processes sharing the ports (Redis store only)",
        type=positive_int,
    )
    add(
        "--operator-token",
        "GLINTWICK_OPERATOR_TOKEN",
        None,
        "the operator credential: enables CreateGameFromDeck and the house-bot calls",
    )
    add(
        "--house-bots",
        "GLINTWICK_HOUSE_BOTS",
        house_bots,
        "comma-separated bots a game may seat as house bots (CreateGame bots, FillWithBots)",
    )
    add(
        "--bot-pool-token",
        "GLINTWICK_BOT_POOL_TOKEN",
        None,
        "a credential for house-bot pool workers only (ListBotTurns, acting for"
        " house-bot seats; never CreateGameFromDeck)",
    )
    add(
        "--finished-ttl",
        "GLINTWICK_FINISHED_TTL",
        str(24 * 3600),
        "seconds a finished game is kept",
        type=positive_int,
    )
    add(
        "--abandon-after",
        "GLINTWICK_ABANDON_AFTER",
        str(3 * 3600),
        "seconds without a move after which a game ends abandoned (0: never)",
        type=non_negative_float,
    )
    add(
        "--unjoined-after",
        "GLINTWICK_UNJOINED_AFTER",
        str(30 * 60),
        "seconds after which a table with a seat nobody joined ends abandoned (0: never)",
        type=non_negative_float,
    )
    add(
        "--rate",
        "GLINTWICK_RATE",
        f"{DEFAULT_ACT_RATE.per_second:g}",
        "moves/s per seat, the act class's rate limit (0: no limit)",
        type=non_negative_float,
    )
    add(
        "--burst",
        "GLINTWICK_BURST",
        str(DEFAULT_ACT_RATE.burst),
        "moves per seat at once (the act class's burst)",
        type=non_negative_int,
    )
    add(
        "--limits",
        "GLINTWICK_LIMITS",
        "",
        "rate limits per client, CLASS=RATE/BURST comma-separated, classes "
        + ", ".join(c for c in CALL_CLASSES if c != "act")
        + " (act: --rate/--burst); RATE 0: none; 'off': no rate limit at all; defaults: "
        + ", ".join(f"{c}={r.per_second:g}/{r.burst}" for c, r in DEFAULT_RATES.items()),
        type=rate_limits,
    )
    add(
        "--quotas",
        "GLINTWICK_QUOTAS",
        "",
        "quotas, NAME=N comma-separated (0: none; 'off': no quota); defaults: "
        + ", ".join(f"{n}={getattr(Quotas(), n)}" for n in QUOTA_NAMES),
        type=quotas,
    )
    add(
        "--trusted-proxy",
        "GLINTWICK_TRUSTED_PROXIES",
        "",
        "CIDRs (comma-separated) of the proxies whose X-Forwarded-For names the client",
        type=trusted_proxies,
    )
    add(
        "--bot-pool",
        "GLINTWICK_BOT_POOL",
        "auto",
        "play house-bot seats in process (auto: with the memory store only)",
        choices=["auto", "on", "off"],
        type=one_of("auto", "on", "off"),
    )
    add(
        "--bot-concurrency",
        "GLINTWICK_BOT_CONCURRENCY",
        "4",
        "house-bot turns the in-process pool plays at once",
        type=positive_int,
    )
    parser.add_argument("--no-bots", action="store_true", help="the same as --bot-pool off")
    add(
        "--tls-cert",
        "GLINTWICK_TLS_CERT",
        None,
        "a PEM certificate (chain): serve gRPC and HTTP over TLS (with --tls-key)",
    )
    add(
        "--tls-key",
        "GLINTWICK_TLS_KEY",
        None,
        "the PEM private key of --tls-cert",
    )
    cors = env_default("GLINTWICK_CORS_ORIGIN", None)
    parser.add_argument(
        "--cors-origin",
        action=_Repeatable,
        default=None if cors is None else [cors],
        metavar="ORIGIN",
        help=flag_help(
            "a web origin (https://host[:port]; '*': any) whose pages may call the HTTP"
            " face; repeatable or comma-separated",
            "GLINTWICK_CORS_ORIGIN",
        ),
    )
    add(
        "--max-connection-age",
        "GLINTWICK_MAX_CONNECTION_AGE",
        "300",
        "seconds a gRPC connection lives before the server asks the client to reconnect"
        " (clients then spread again over replicas added since)",
        type=positive_float,
    )
    add(
        "--max-connection-age-grace",
        "GLINTWICK_MAX_CONNECTION_AGE_GRACE",
        "30",
        "seconds the calls of a connection past its age get to finish (long streams resume)",
        type=non_negative_float,
    )
    add(
        "--ack",
        "GLINTWICK_ACK",
        "local",
        "acknowledge a write once the Redis primary applied it (local) or once"
        " --ack-replicas replicas confirmed it (replica: Redis WAIT); the memory store"
        " ignores it",
        choices=["local", "replica"],
        type=one_of("local", "replica"),
    )
    add(
        "--ack-replicas",
        "GLINTWICK_ACK_REPLICAS",
        "1",
        "with --ack replica: the replicas that must confirm each write",
        type=positive_int,
    )
    add(
        "--ack-timeout-ms",
        "GLINTWICK_ACK_TIMEOUT_MS",
        "500",
        "with --ack replica: how long a write waits for its replicas before it is"
        " answered UNAVAILABLE (REPLICA_ACK_TIMEOUT; it may be applied: retry it)",
        type=positive_int,
    )
    add(
        "--log-format",
        "GLINTWICK_LOG_FORMAT",
        "auto",
        "log lines as JSON or for a console (auto: console on a terminal)",
        choices=["auto", "json", "console"],
        type=one_of("auto", "json", "console"),
    )
    add(
        "--event-loop",
        "GLINTWICK_EVENT_LOOP",
        "auto",
        "the asyncio event loop: uvloop (auto: when installed) or the standard one",
        choices=["auto", "uvloop", "asyncio"],
        type=one_of("auto", "uvloop", "asyncio"),
    )


def options_from(args: argparse.Namespace) -> ServerOptions:
    return ServerOptions(
        grpc_address=args.grpc,
        http_address=args.http,
        store=with_password(args.store, args.store_password),
        workers=args.workers,
        operator_token=args.operator_token or None,
        bot_pool_token=args.bot_pool_token or None,
        house_bots=None if args.house_bots is None else bot_names(args.house_bots),
        finished_ttl=args.finished_ttl,
        abandon_after=args.abandon_after,
        unjoined_after=args.unjoined_after,
        rate_per_second=args.rate,
        rate_burst=args.burst,
        rates=args.limits,
        quotas=args.quotas,
        trusted_proxies=args.trusted_proxy,
        bots=not args.no_bots,
        bot_pool=args.bot_pool,
        bot_concurrency=args.bot_concurrency,
        log_format=args.log_format,
        event_loop=args.event_loop,
        tls_cert=args.tls_cert or None,
        tls_key=args.tls_key or None,
        cors_origins=cors_origins(args.cors_origin),
        max_connection_age=args.max_connection_age,
        max_connection_age_grace=args.max_connection_age_grace,
        ack=args.ack,
        ack_replicas=args.ack_replicas,
        ack_timeout_ms=args.ack_timeout_ms,
    )
