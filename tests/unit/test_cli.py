"""The ``glintwick`` command: ``solve`` answers JSON lines in order, and every failure
past argument parsing is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path

import pytest

from engine.cards import cards_from_codes
from engine.melds import build_meld
from engine.rulesets import WHISKERTRAIL, MeldKind, ruleset
from glintwick_cli import build_parser, house_bot_warning, main, solve, with_house_bots
from services.config import options_from

ROOT = Path(__file__).resolve().parents[2]


def _run(lines: list[str]) -> list[dict[str, object]]:
    out = io.StringIO()
    assert solve(io.StringIO("\n".join(lines) + "\n"), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_answers_in_order_and_bad_lines_do_not_stop_the_rest() -> None:
    trap = ["3H", "4H", "5H", "6H", "7H", "8H", "8S", "8D", "8C", "KC", "2D"]
    answers = _run(
        [
            json.dumps({"ruleset": "whiskertrail", "round": 7, "hand": trap}),
            "not json",
            json.dumps({"ruleset": "gin", "round": 1, "hand": []}),
            json.dumps({"ruleset": "contract", "round": 9, "hand": ["7H"]}),
            json.dumps({"ruleset": "contract", "round": 1, "hand": ["7H", "XX"]}),
            json.dumps({"ruleset": "contract", "round": 1}),
            json.dumps({"ruleset": "contract", "round": 3, "hand": ["2C", "9D", "KS"]}),
        ]
    )
    assert len(answers) == 7
    first = answers[0]
    assert first["feasible"] is True and first["points_laid"] == 57 and first["missing"] == 0
    assert first["jokers"] == 0
    melds = first["melds"]
    assert isinstance(melds, list)
    rules = ruleset("whiskertrail")
    used: list[str] = []
    for meld in melds:
        cards = cards_from_codes(meld["cards"], rules.decks, rules.jokers)
        build_meld(MeldKind(meld["kind"]), cards, rules)  # raises if not a valid meld
        used += meld["cards"]
    assert sorted(used) == sorted(["3H", "4H", "5H", "6H", "7H", "8H", "8S", "8D", "8C"])
    for bad in answers[1:6]:
        assert set(bad) == {"error"} and bad["error"]
    last = answers[6]
    assert last["feasible"] is False and last["points_laid"] is None and last["melds"] == []
    assert last["missing"] is None  # at least 5 cards short: beyond the search limit


def test_simulate_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--ruleset", "whiskertrail", "--games", "2", "--seats", "2"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games"] == 2 and summary["seats"] == 2
    assert abs(sum(summary["win_share_per_seat"]) - 1.0) < 1e-9


def test_serve_refuses_a_house_bot_it_cannot_load_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--house-bots", "random,nobody", "--grpc", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("glintwick serve: unknown bot 'nobody'") and err.count("\n") == 1


#: what ``glintwick solve`` must not load (each would cost a one-hand query more than its
#: answer): the wire, the HTTP face, the server's logging and stores, the clients (the
#: bot registry and the engine's game behind it, the tournaments) and their numeric stack
NOT_FOR_SOLVE = (
    "grpc",
    "google.protobuf",
    "glintwick.v1",
    "aiohttp",
    "structlog",
    "redis",
    "services.server",
    "services.store",
    "clients",
    "matplotlib",
    "numpy",
    "openskill",
    "tqdm",
)


def test_solve_imports_the_solver_and_nothing_heavy() -> None:
    """``glintwick solve`` answering one hand, in a process of its own: every module it
    imported (``python -X importtime``) is the engine's, the parser's or the standard
    library's, none of NOT_FOR_SOLVE."""
    query = {"ruleset": "contract", "round": 1, "hand": ["7H", "7S", "7D", "8C", "8D", "8S"]}
    done = _cli("solve", stdin=json.dumps(query) + "\n", python_flags=["-X", "importtime"])
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["feasible"] is True and answer["points_laid"] == 45, answer
    loaded = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "engine.solver" in loaded, sorted(loaded)  # (the listing is read right)
    heavy = sorted(
        module
        for module in loaded
        if any(module == name or module.startswith(name + ".") for name in NOT_FOR_SOLVE)
    )
    assert not heavy, f"glintwick solve imported {heavy}"


# --------------------------------------------------------------------------- failures


def _cli(
    *argv: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    python_flags: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """``python -m glintwick_cli ...`` as a user runs it (no GLINTWICK_* from the tests)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GLINTWICK_")}
    return subprocess.run(
        [sys.executable, *python_flags, "-m", "glintwick_cli", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean | (env or {}),
        cwd=ROOT,
    )


def _one_line_failure(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n"), result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["serve", "--store", "foo"], ["--store", "'foo'", "memory"]),
        (["serve", "--grpc", "notaport"], ["--grpc", "host:port"]),
        (["serve", "--http", "127.0.0.1:99999"], ["--http", "0..65535"]),
        (["serve", "--grpc", "nohost.invalid:5000"], ["unknown host"]),
        (["serve", "--house-bots", "random,nobody"], ["unknown bot 'nobody'"]),
        (["serve", "--workers", "2"], ["Redis"]),
        (["tournament", "--ruleset", "no-such-file.json", "--in-process"], ["no-such-file.json"]),
        (["tournament", "--bots", "random,nobody", "--in-process"], ["unknown bot 'nobody'"]),
        (["tournament", "--target", "127.0.0.1:1", "--deals", "1", "--no-progress"], ["reach"]),
        (["bots", "--concurrency", "0", "--bot-pool-token", "t"], ["--concurrency"]),
    ],
)
def test_every_failure_is_one_line_and_a_non_zero_exit(argv: list[str], words: list[str]) -> None:
    _one_line_failure(_cli(*argv), *words)


def test_a_port_in_use_is_one_line(taken_port: int) -> None:
    for flag in ("--grpc", "--http"):
        other = "--http" if flag == "--grpc" else "--grpc"
        result = _cli("serve", flag, f"127.0.0.1:{taken_port}", other, "127.0.0.1:0")
        _one_line_failure(result, flag, str(taken_port), "in use")


def test_a_bad_variable_is_named_and_does_not_break_help() -> None:
    env = {"GLINTWICK_WORKERS": "abc"}
    helped = _cli("serve", "--help", env=env)
    assert helped.returncode == 0 and "GLINTWICK_WORKERS" in helped.stdout
    _one_line_failure(_cli("serve", env=env), "--workers", "GLINTWICK_WORKERS", "'abc'")
    _one_line_failure(_cli("serve", env={"GLINTWICK_LOG_FORMAT": "xml"}), "--log-format")


def test_a_bad_rule_set_file_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    _one_line_failure(_cli("tournament", "--ruleset", str(broken), "--in-process"), "not JSON")
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps(WHISKERTRAIL.to_dict() | {"joker_penalty": 4294967295}))
    _one_line_failure(_cli("tournament", "--ruleset", str(invalid), "--in-process"), "0..1000")


def test_version_and_help_show_defaults_and_variables() -> None:
    version = _cli("--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"glintwick {metadata.version('glintwick')}"
    serve_help = " ".join(_cli("serve", "--help").stdout.split())
    for flag, variable, default in (
        ("--grpc", "GLINTWICK_GRPC", "127.0.0.1:50051"),
        ("--store", "GLINTWICK_STORE", "memory"),
        ("--workers", "GLINTWICK_WORKERS", "1"),
        ("--rate", "GLINTWICK_RATE", "500"),
        ("--event-loop", "GLINTWICK_EVENT_LOOP", "auto"),
        ("--ack", "GLINTWICK_ACK", "local"),
        ("--ack-timeout-ms", "GLINTWICK_ACK_TIMEOUT_MS", "500"),
    ):
        assert flag in serve_help and f"env {variable}; default: {default}]" in serve_help
    bots_help = " ".join(_cli("bots", "--help").stdout.split())
    assert "env GLINTWICK_TARGET; default: 127.0.0.1:50051]" in bots_help
    tour_help = " ".join(_cli("tournament", "--help").stdout.split())
    assert "(default: 4)" in tour_help


@pytest.mark.parametrize(
    ("argv", "warned"),
    [
        (["--store", "redis://127.0.0.1:6379/0"], True),
        (["--store", "redis://127.0.0.1:6379/0", "--bot-pool", "on"], False),
        (["--store", "redis://127.0.0.1:6379/0", "--house-bots", ""], False),
        (["--store", "memory"], False),
        (["--store", "memory", "--no-bots"], True),
    ],
)
def test_house_bots_without_a_pool_are_announced(argv: list[str], warned: bool) -> None:
    options = with_house_bots(options_from(build_parser().parse_args(["serve", *argv])))
    warning = house_bot_warning(options)
    assert (warning is not None) is warned
    if warning is not None:
        assert "glintwick bots" in warning
