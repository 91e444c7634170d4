"""The ``glintwick`` command: the one composition root that knows every layer.

Each subcommand maps to its layer's own entry point, imported lazily so that
``glintwick solve`` never pays for gRPC and ``glintwick serve`` never for tournaments.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

# Only the standard library at module level: a command imports what it runs, its flags'
# types (services.config) included, no more (tests/unit/test_cli.py checks what
# ``solve`` loads).
if TYPE_CHECKING:
    import asyncio

    from services.config import ServerOptions
    from services.server import RunningServer, Sidecar
    from services.store.base import GameStore


class CommandError(Exception):
    """A failure the command explains in one line on stderr (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (argparse's default prints the usage first)."""

    def error(self, message: str) -> NoReturn:
        import os
        import re

        # a bad default from the environment: name the variable it came from
        flag = re.match(r"argument (--[\w-]+)", message)
        action = self._option_string_actions.get(flag.group(1)) if flag else None
        variable = re.search(r"env (GLINTWICK_\w+)", (action.help or "") if action else "")
        if variable and variable.group(1) in os.environ:
            message += f" (from {variable.group(1)} unless the flag is given)"
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("glintwick")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata would cost every
    other command as much as a solver query)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings,
            dest=dest,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> NoReturn:
        sys.stdout.write(f"glintwick {_version()}\n")
        parser.exit()


def _solve_line(line: str) -> dict[str, Any]:
    from engine.cards import cards_from_codes
    from engine.errors import GlintwickError
    from engine.melds import meld_codes_json
    from engine.rulesets import ruleset
    from engine.solver import analyse

    try:
        query = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"error": f"not JSON: {exc.msg} at column {exc.colno}"}
    if not isinstance(query, dict):
        return {"error": "a query is a JSON object with ruleset, round and hand"}
    try:
        name = query["ruleset"]
        round_number = query["round"]
        hand_codes = query["hand"]
        if not isinstance(name, str):
            raise ValueError("ruleset must be a string")
        if isinstance(round_number, bool) or not isinstance(round_number, int):
            raise ValueError("round must be an integer (1-based)")
        if not isinstance(hand_codes, list) or not all(isinstance(c, str) for c in hand_codes):
            raise ValueError("hand must be a list of card codes")
        rules = ruleset(name)
        rules.contract(round_number)
        hand = cards_from_codes(hand_codes, rules.decks, rules.jokers)
        result = analyse(hand, rules, round_number)
    except KeyError as exc:
        return {"error": f"missing field {exc.args[0]!r} (need ruleset, round, hand)"}
    except (ValueError, GlintwickError) as exc:
        return {"error": str(exc)}
    best = result.best
    return {
        "feasible": result.feasible,
        "points_laid": best.points if best is not None else None,
        "melds": [meld_codes_json(m) for m in best.melds] if best is not None else [],
        "jokers": best.jokers if best is not None else 0,
        "missing": result.missing,
    }


def solve(stdin: TextIO, stdout: TextIO) -> int:
    """JSON lines in, one JSON line out per query, in order; bad lines get an error line."""
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(_solve_line(line), ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


def simulate(args: argparse.Namespace, stdout: TextIO) -> int:
    """Play random games in process (the ``random`` bot at every seat) and print a summary."""
    import random
    import time

    from clients.bots.random_bot import RandomBot
    from clients.turn import engine_turn
    from engine.game import GameState
    from engine.rulesets import ruleset

    rules = ruleset(args.ruleset)
    seats = args.seats or rules.max_players
    rng = random.Random(args.seed)  # one stream for every seat and game: reproducible runs
    player = RandomBot(args.seed)
    steps = 0
    wins = [0.0] * seats
    totals = [0] * seats
    started = time.perf_counter()
    for game_index in range(args.games):
        seed = f"{args.seed}:{game_index}".encode()
        state = GameState.new_game(rules, seats, seed)
        while not state.is_terminal():
            seat = state.to_act[0] if len(state.to_act) == 1 else rng.choice(state.to_act)
            state, _, _ = engine_turn(state, seat, player, rng)
            steps += 1
        winners = state.winners()
        for seat in winners:
            wins[seat] += 1 / len(winners)
        for seat, score in enumerate(state.scores):
            totals[seat] += score
    elapsed = time.perf_counter() - started
    summary = {
        "ruleset": rules.name,
        "ruleset_hash": rules.hash,
        "games": args.games,
        "seats": seats,
        "seed": args.seed,
        "actions": steps,
        "actions_per_second": round(steps / elapsed) if elapsed else None,
        "mean_score_per_seat": [round(t / max(args.games, 1), 1) for t in totals],
        "win_share_per_seat": [round(w / max(args.games, 1), 3) for w in wins],
    }
    stdout.write(json.dumps(summary, indent=2) + "\n")
    return 0


def _ruleset_arg(text: str) -> Any:
    """A preset name, or a JSON file holding a custom rule set's plain form."""
    from pathlib import Path

    from engine.errors import InvalidActionError
    from engine.rulesets import PRESETS, RuleSet

    if text in PRESETS:
        return PRESETS[text]
    try:
        data = json.loads(Path(text).read_text())
        if not isinstance(data, dict):
            raise CommandError(f"--ruleset {text}: a rule set file holds a JSON object")
        return RuleSet.from_dict(data)
    except FileNotFoundError:
        known = ", ".join(sorted(PRESETS))
        raise CommandError(f"--ruleset {text}: no such preset ({known}) or file") from None
    except OSError as exc:
        raise CommandError(f"--ruleset {text}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise CommandError(f"--ruleset {text}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except InvalidActionError as exc:
        raise CommandError(f"--ruleset {text}: {exc}") from None


def tournament(args: argparse.Namespace, stdout: TextIO) -> int:
    """Run a bot tournament against --target, or against an embedded in-memory server."""
    import asyncio
    from pathlib import Path

    from clients.bots.registry import resolve_specs

    try:
        from clients.tournament import report
        from clients.tournament.tournament import Config, run
    except ModuleNotFoundError as exc:  # the server's install leaves the extra out
        sys.stderr.write(
            f"glintwick tournament: needs the tournament extra ({exc.name} is missing):"
            " pip install 'glintwick[tournament]'\n"
        )
        return 2
    if args.merge:
        return _merge_tournament(args, stdout)
    rules = _ruleset_arg(args.ruleset)
    shard = None
    if args.shards is not None:
        from clients.tournament.shards import Shard

        if args.shard_index is None:
            raise CommandError("--shards needs --shard-index (or env JOB_COMPLETION_INDEX)")
        if not args.out:
            raise CommandError("--shards needs --out: the directory of the shard's results")
        if not int(args.shard_index) < args.shards:
            raise CommandError(f"--shard-index {args.shard_index} is not below --shards")
        shard = Shard(int(args.shard_index), args.shards)
    sprt = None
    if args.sprt:
        pair = resolve_specs(args.sprt)
        if len(pair) != 2:
            raise CommandError(f"--sprt takes two bots, A,B: {args.sprt!r}")
        sprt = (pair[0], pair[1])
    bots = resolve_specs(args.bots)
    config = Config(
        rules=rules,
        bots=bots if sprt is None else list(sprt),
        deals=args.deals,
        seats=args.seats or rules.min_players,
        seed=args.seed,
        schedule=args.schedule,
        seating=args.seating,
        concurrency=args.concurrency,
        workers=args.workers,
        target=args.target,
        sprt=sprt,
        sprt_margin=args.sprt_margin,
        progress=not args.no_progress,
        transport=args.transport,
        shard=shard,
        out=Path(args.out) if args.out and shard is not None else None,
        record=Path(args.record) if args.record else None,
    )
    if config.record is not None and (config.target or not args.in_process):
        raise CommandError("--record needs --in-process (games played on the engine here)")

    async def main() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        running = None
        if config.target is None and not args.in_process:
            from services.config import ServerOptions
            from services.server import start

            running = await start(
                ServerOptions(
                    grpc_address="127.0.0.1:0", http_address="", store="memory", log_format="json"
                )
            )
            config.target = f"127.0.0.1:{running.grpc_port}"
        try:
            summary, results = await run(config)
        finally:
            if running is not None:
                await running.stop(grace=0.5)
        return summary, [r.row() for r in results]

    if not args.target and not args.in_process:
        import logging

        import structlog

        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    from clients.sdk import CallError
    from clients.tournament.shards import ShardError

    try:
        summary, rows = asyncio.run(main())
    except ShardError as exc:
        raise CommandError(str(exc)) from None
    except CallError as exc:
        if exc.code.name not in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
            raise
        raise CommandError(f"cannot reach --target {args.target}: {exc.message[:200]}") from None
    stdout.write(report.table(summary) + "\n")
    if shard is not None:
        stdout.write(
            f"shard {shard.index} of {shard.count}: {config.out and shard.file(config.out)}\n"
        )
    elif args.out:
        for path in report.write(summary, rows, Path(args.out)):
            stdout.write(f"wrote {path}\n")
    return 0 if summary["illegal"] == 0 and summary["errors"] == 0 else 1


def _merge_tournament(args: argparse.Namespace, stdout: TextIO) -> int:
    """`glintwick tournament merge PATH...`: one report from a sharded tournament."""
    from pathlib import Path

    from clients.tournament import report
    from clients.tournament.shards import ShardError
    from clients.tournament.tournament import merged

    if args.merge[0] != "merge" or len(args.merge) < 2:
        raise CommandError("usage: glintwick tournament merge DIR_OR_FILE... [--out DIR]")
    try:
        summary, results = merged([Path(p) for p in args.merge[1:]])
    except (ShardError, OSError) as exc:
        raise CommandError(f"merge: {exc}") from None
    stdout.write(report.table(summary) + "\n")
    if args.out:
        for path in report.write(summary, [r.row() for r in results], Path(args.out)):
            stdout.write(f"wrote {path}\n")
    return 0 if summary["illegal"] == 0 and summary["errors"] == 0 else 1


def bots(args: argparse.Namespace) -> int:
    """A house-bot pool worker against --target, until SIGTERM/SIGINT (docs/BOTS.md)."""
    import asyncio
    import signal

    from clients.botpool import BotPool, PoolConfigError
    from clients.pool_health import start_health
    from clients.sdk import GlintwickClient
    from services.server import configure_logging

    if not args.operator_token:
        sys.stderr.write(
            "glintwick bots: give --bot-pool-token (GLINTWICK_BOT_POOL_TOKEN) or"
            " --operator-token (GLINTWICK_OPERATOR_TOKEN)\n"
        )
        return 2
    configure_logging(args.log_format)

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with GlintwickClient(args.target) as client:
            pool = BotPool(
                client,
                args.operator_token,
                concurrency=args.concurrency,
                poll_seconds=args.poll,
                lease_seconds=args.lease,
                seed=args.seed,
                transport=args.transport,
            )
            health = await start_health(pool, args.health) if args.health else None
            try:
                await pool.run(stop)
            except PoolConfigError as exc:
                sys.stderr.write(f"glintwick bots: the server refuses the credential: {exc}\n")
                return 1
            finally:
                if health is not None:
                    await health.cleanup()
        return 0

    return asyncio.run(main())


# --------------------------------------------------------------------------- serve
# The server and its in-process house-bot pool meet here, and only here: the service
# imports no client, so this command hands it the names of the bots the pool plays
# and the pool itself (a sidecar of services.server).

# The house bots a game may seat unless --house-bots says otherwise.  Anyone may
# create a game and seat house bots, whose moves cost the bot pool's CPU, so by
# default only the cheap fair ones: not ``montecarlo`` (tens of milliseconds a move)
# nor ``oracle`` (for measuring; through the API it is ``montecarlo``).
HOUSE_BOTS = "random,greedy,strong,expert,best"
# what FillWithBots seats when the request names no bot
FILL_BOT = "greedy"


def with_house_bots(options: ServerOptions) -> ServerOptions:
    """``options`` with the house bots checked against the bots the pool can play
    (BotSpecError, a ValueError, for a spec that names no usable bot), HOUSE_BOTS when
    none were given, and FILL_BOT."""
    from clients.bots.registry import resolve_specs
    from services.config import bot_names

    names = bot_names(HOUSE_BOTS) if options.house_bots is None else options.house_bots
    resolve_specs(",".join(sorted(names)))  # every bot the server may seat must load
    return dataclasses.replace(
        options, house_bots=names, default_house_bot=options.default_house_bot or FILL_BOT
    )


async def house_bot_pool(address: str, token: str, *, concurrency: int) -> None:
    """The in-process house-bot pool (a sidecar of the server at ``address``):
    ``clients.botpool`` through the SDK, the very path of a ``glintwick bots`` worker."""
    import asyncio

    import structlog

    from clients.botpool import BotPool
    from clients.sdk import GlintwickClient

    client = GlintwickClient(address)
    pool = BotPool(client, token, concurrency=max(1, concurrency), name="in-process")
    try:
        await pool.run()
    except asyncio.CancelledError:
        raise
    except Exception:
        structlog.get_logger("glintwick.server").exception("bot_pool_failed")
    finally:
        await client.close()


def bot_pool_for(options: ServerOptions) -> Sidecar:
    """The house-bot pool sidecar of a server with ``options`` (picklable, for --workers)."""
    return functools.partial(house_bot_pool, concurrency=options.bot_concurrency)


async def start_server(options: ServerOptions, store: GameStore | None = None) -> RunningServer:
    """``services.server.start`` with this command's house bots (no pool: see start_bot_pool)."""
    from services.server import start

    return await start(with_house_bots(options), store)


def start_bot_pool(running: RunningServer, options: ServerOptions) -> list[asyncio.Task[None]]:
    """The in-process house-bot pool of a started server, as ``serve`` runs it."""
    from services.server import start_sidecar

    return [start_sidecar(running, options, bot_pool_for(options))]


def check_listening(address: str, what: str) -> None:
    """CommandError when ``address`` cannot be listened on (in use, not this host's):
    said in one line before the server starts, rather than as a traceback from its
    middle (a port taken between this check and the server's bind still fails there)."""
    import socket

    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if int(port) == 0:
        return
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise CommandError(f"{what} {address}: unknown host ({exc.strerror})") from None
    family, kind, proto, _, sockaddr = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(sockaddr)
        except OSError as exc:
            raise CommandError(f"cannot listen on {what} {address}: {exc.strerror}") from None


def house_bot_warning(options: ServerOptions) -> str | None:
    """What to tell the operator when games may seat house bots that no pool in this
    server plays (the Redis store without --bot-pool on): they wait for workers."""
    from services.server import bot_pool_wanted

    if options.house_bots == frozenset() or bot_pool_wanted(options):
        return None
    return (
        "house-bot seats are played by no pool in this server: run `glintwick bots`"
        " workers against it, or games with house bots wait for ever"
    )


def serve(args: argparse.Namespace) -> int:
    """``glintwick serve``: the server, with its house-bot pool in process when wanted."""
    import structlog

    from services.config import options_from
    from services.server import TlsError, configure_logging, load_tls, run

    options = with_house_bots(options_from(args))
    if options.workers > 1 and options.store == "memory":
        raise CommandError("--workers above 1 needs the Redis store (--store redis://...)")
    try:
        load_tls(options.tls_cert, options.tls_key)
    except TlsError as exc:
        raise CommandError(str(exc)) from None
    check_listening(options.grpc_address, "--grpc")
    if options.http_address:
        check_listening(options.http_address, "--http")
    warning = house_bot_warning(options)
    if warning is not None:
        configure_logging(options.log_format)
        structlog.get_logger("glintwick.server").warning("no_house_bot_pool", hint=warning)
    try:
        return run(options, bot_pool_for(options))
    except OSError as exc:  # a port taken since the check above, the store refusing...
        raise CommandError(str(exc) or type(exc).__name__) from None


def _simulate_flags(parser: argparse.ArgumentParser) -> None:
    from services.config import non_negative_int

    parser.add_argument(
        "--ruleset", default="whiskertrail", choices=["whiskertrail", "contract"], help="preset"
    )
    parser.add_argument("--games", type=non_negative_int, default=20, help="games to play")
    parser.add_argument(
        "--seats", type=non_negative_int, default=0, help="0: the rule set's maximum"
    )
    parser.add_argument("--seed", type=int, default=1, help="seeds the deals and the bots")


def _tournament_flags(parser: argparse.ArgumentParser) -> None:
    from services.config import address as address_type
    from services.config import env_default, non_negative_int, positive_float, positive_int

    parser.add_argument(
        "--ruleset", default="whiskertrail", help="preset name or rule-set JSON file"
    )
    parser.add_argument(
        "--bots",
        default="random,greedy,strong",
        help="comma-separated bots: names, module:Class or file.py:Class",
    )
    parser.add_argument(
        "--deals", type=positive_int, default=4, help="deal sets per lineup (SPRT: at most)"
    )
    parser.add_argument(
        "--schedule",
        default="round-robin",
        choices=["round-robin", "gauntlet", "substitution", "mutual-substitution"],
        help="lineups; substitution: the first bot is the reference, each other one takes"
        " each seat in turn among references (docs/BOTS.md); mutual-substitution: two"
        " bots, each the reference of the other (what --sprt plays)",
    )
    parser.add_argument(
        "--seating",
        default="balanced",
        choices=["balanced", "cyclic"],
        help="balanced: every cyclic seat order of a lineup (each bot sits after each"
        " other equally often); cyclic: the lineup's own order, rotated",
    )
    parser.add_argument(
        "--seats", type=non_negative_int, default=0, help="0: the rule set's minimum"
    )
    parser.add_argument("--seed", type=int, default=1, help="seeds the deals")
    parser.add_argument("--concurrency", type=positive_int, default=8, help="games at once")
    parser.add_argument(
        "--target", default=None, type=address_type, help="host:port; none: an embedded server"
    )
    parser.add_argument("--in-process", action="store_true", help="no server: play on the engine")
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="--in-process: play games in this many processes at once (same results)",
    )
    parser.add_argument("--out", default=None, help="directory for JSON, CSV and PNG")
    parser.add_argument(
        "--record",
        default=None,
        help="--in-process: write each game's replayable log here (docs/TRAINING.md)",
    )
    parser.add_argument(
        "--sprt",
        default=None,
        help="A,B: play A vs B on the mutual substitution until the SPRT decides whether A"
        " is better (docs/TOURNAMENTS.md)",
    )
    parser.add_argument(
        "--sprt-margin",
        type=positive_float,
        default=5.0,
        help="the SPRT's H1: A better than B by this many penalty points per game",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress line")
    parser.add_argument(
        "--shards",
        type=positive_int,
        default=None,
        help="play one shard of the deal sets (of this many), recorded in --out as it goes;"
        " `glintwick tournament merge DIR` then reports the whole (docs/TOURNAMENTS.md)",
    )
    parser.add_argument(
        "--shard-index",
        type=non_negative_int,
        default=env_default("JOB_COMPLETION_INDEX", None),
        help="which shard, from 0 [env JOB_COMPLETION_INDEX: a Kubernetes Indexed Job's]",
    )
    parser.add_argument(
        "merge",
        nargs="*",
        metavar="merge PATH",
        help="`merge DIR_OR_FILE...`: the report of a sharded tournament from its shards'"
        " results (the other flags but --out are not used)",
    )
    parser.add_argument(
        "--transport",
        default="play",
        choices=["play", "unary"],
        help="through a server: Play streams (one message per move) or the unary RPC loop",
    )


def _bots_flags(parser: argparse.ArgumentParser) -> None:
    from services.config import (
        env_default,
        flag_help,
        non_negative_float,
        non_negative_int,
        one_of,
        optional_address,
        positive_int,
    )

    parser.add_argument(
        "--target",
        default=env_default("GLINTWICK_TARGET", "127.0.0.1:50051"),
        help=flag_help(
            "the server's gRPC host:port, or dns:///host:port (calls go round-robin over"
            " every address the name has: a headless Service's pods)",
            "GLINTWICK_TARGET",
        ),
    )
    parser.add_argument(
        "--health",
        type=optional_address,
        default=env_default("GLINTWICK_BOT_HEALTH", ""),
        help=flag_help(
            "host:port of an HTTP health endpoint for probes: /livez (the worker's loop"
            " goes round) and /readyz (listing the bot turns works); '' for none",
            "GLINTWICK_BOT_HEALTH",
        ),
    )
    parser.add_argument(
        "--bot-pool-token",
        "--operator-token",
        dest="operator_token",
        default=env_default("GLINTWICK_BOT_POOL_TOKEN", None)
        or env_default("GLINTWICK_OPERATOR_TOKEN", None),
        help="the server's bot-pool credential (env GLINTWICK_BOT_POOL_TOKEN; it can act for"
        " house bots only) or its operator credential (env GLINTWICK_OPERATOR_TOKEN)",
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=env_default("GLINTWICK_BOT_CONCURRENCY", "8"),
        help=flag_help("games played at once", "GLINTWICK_BOT_CONCURRENCY"),
    )
    parser.add_argument(
        "--poll",
        type=non_negative_float,
        default=0.2,
        help="seconds between idle polls (doubling up to 30 while the target is unreachable)",
    )
    parser.add_argument(
        "--lease",
        type=non_negative_int,
        default=10,
        help="seconds a claimed turn is this worker's (0: none)",
    )
    parser.add_argument(
        "--seed",
        default="",
        help="seeds the bots' randomness (with game/seat/version)",
    )
    parser.add_argument(
        "--transport",
        default="play",
        choices=["play", "unary"],
        help="play the seats on one Play stream, or by GetView/ListLegalActions/SubmitAction",
    )
    parser.add_argument(
        "--log-format",
        choices=["auto", "json", "console"],
        type=one_of("auto", "json", "console"),
        default=env_default("GLINTWICK_LOG_FORMAT", "auto"),
        help=flag_help("log lines as JSON or for a console", "GLINTWICK_LOG_FORMAT"),
    )


def _serve_flags(parser: argparse.ArgumentParser) -> None:
    from services.config import add_arguments

    add_arguments(parser, house_bots=HOUSE_BOTS)


#: each subcommand: its line of help, and what adds its flags (solve has none)
SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None] | None]] = {
    "solve": (
        "solver queries as JSON lines on stdin, one JSON answer line each on stdout",
        None,
    ),
    "simulate": ("play random games in process and print a summary", _simulate_flags),
    "tournament": ("a bot tournament through the API (see docs/BOTS.md)", _tournament_flags),
    "bots": ("a house-bot pool worker: plays the server's house bots", _bots_flags),
    "serve": ("serve gRPC and HTTP/JSON (embedded store by default)", _serve_flags),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command's parser: every subcommand, with the flags of ``command`` only when
    one is named, else of all of them (so that ``solve`` neither imports
    ``services.config``, where the flags' types live, nor builds the others' flags)."""
    parser = _Parser(
        prog="glintwick",
        description=__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_line, add_flags) in SUBCOMMANDS.items():
        if add_flags is None:
            sub.add_parser(name, help=help_line)
            continue
        # every flag's help shows its default (and a server flag's, its variable)
        flags = sub.add_parser(
            name, help=help_line, formatter_class=argparse.ArgumentDefaultsHelpFormatter
        )
        if command in (None, name):
            add_flags(flags)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    # the subcommand is the first word that is no flag (the command's own flags take no
    # value); a word that names none gets every subcommand's flags, and argparse's error
    command = next((word for word in words if not word.startswith("-")), None)
    args = build_parser(command if command in SUBCOMMANDS else None).parse_args(words)
    try:
        return _dispatch(args)
    except Exception as exc:
        if not isinstance(exc, CommandError) and not _is_bot_spec_error(exc):
            raise
        sys.stderr.write(f"glintwick {args.command}: {exc}\n")  # one line, no traceback
        return 2


def _is_bot_spec_error(exc: Exception) -> bool:
    """Whether ``exc`` is the bot registry's BotSpecError, told without importing the
    registry (and the engine's game behind it) for commands that load no bot: an error
    can be one only when the registry was loaded."""
    registry = sys.modules.get("clients.bots.registry")
    return registry is not None and isinstance(exc, registry.BotSpecError)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "solve":
        return solve(sys.stdin, sys.stdout)
    if args.command == "simulate":
        return simulate(args, sys.stdout)
    if args.command == "tournament":
        return tournament(args, sys.stdout)
    if args.command == "bots":
        return bots(args)
    if args.command == "serve":
        return serve(args)
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
