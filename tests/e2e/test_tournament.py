"""A small tournament end to end through gRPC against an embedded in-memory server."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from clients.tournament import schedule as sched
from clients.tournament.runner import run_inprocess
from clients.tournament.stats import round_endings
from clients.tournament.tournament import Config, run
from engine.rulesets import CONTRACT, WHISKERTRAIL
from glintwick_cli import main
from services.config import ServerOptions
from services.server import start

ROOT = Path(__file__).resolve().parents[2]
SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])
SHORT_CONTRACT = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[:2])


async def test_tournament_through_grpc_reproduces_and_matches_in_process() -> None:
    running = await start(
        ServerOptions(grpc_address="127.0.0.1:0", http_address="", store="memory")
    )
    try:
        target = f"127.0.0.1:{running.grpc_port}"
        config = Config(SHORT, ["greedy", "strong"], deals=2, seats=2, seed=7, target=target)
        summary, results = await run(config)
        again, results2 = await run(config)
    finally:
        await running.stop(grace=0.5)
    rows = [r.row() for r in results]
    assert rows == [r.row() for r in results2]  # same seed, same games, same scores
    assert summary["stats"] == again["stats"] and summary["ratings"] == again["ratings"]
    assert summary["illegal"] == summary["errors"] == summary["timeouts"] == 0
    assert summary["ruleset_hash"] == SHORT.hash and summary["seed"] == 7
    assert all(r.game_id for r in results) and len({r.game_id for r in results}) == 4
    # every bot played every seat of every deal
    for deal in range(2):
        games = [r.spec for r in results if r.spec.deal == deal]
        assert len({g.seed for g in games}) == 1
        for bot in ("greedy", "strong"):
            assert sorted(g.seats.index(bot) for g in games) == [0, 1]
    # the server played exactly the games the engine plays in process
    specs = sched.games(["greedy", "strong"], 2, 2, 7)
    local = [r.row() for r in run_inprocess(specs, SHORT, 7)]
    assert [(r["scores"], r["moves"]) for r in rows] == [(r["scores"], r["moves"]) for r in local]
    # how its rounds ended, learnt from GetReplay, is what the engine saw in process
    assert [r["round_ends"] for r in rows] == [r["round_ends"] for r in local]
    assert all(len(r["round_ends"]) == len(SHORT.contracts) for r in rows)
    endings = summary["round_ends"]
    assert endings["rounds"] == 2 * len(rows)
    assert sum(
        sum(v for k, v in row.items() if k != "round") for row in endings["by_round"]
    ) == 2 * len(rows)


async def test_sprt_stops_when_decided() -> None:
    config = Config(
        SHORT,
        ["greedy", "random"],
        deals=40,
        seats=2,
        seed=3,
        sprt=("greedy", "random"),
        concurrency=42,  # batches of 7 deal sets of 6 games: the test stops inside one
    )
    summary, results = await run(config)
    assert summary["sprt"]["decision"] == "H1"
    assert 32 <= summary["sprt"]["deal_sets"] < 35
    # the report covers exactly the deal sets the test counted: each bot's own game and
    # the other bot in each of its seats, per deal
    assert len(results) == 2 * (1 + 2) * summary["sprt"]["deal_sets"]
    assert summary["schedule"] == "mutual-substitution"
    assert summary["deal_sets"] == summary["sprt"]["deal_sets"]
    # the test's difference, then its halves: greedy among randoms, random among greedys
    assert [(p["a"], p["b"], p["design"]) for p in summary["pairs"]] == [
        ("greedy", "random", "mutual"),
        ("greedy", "random", "substitution"),
        ("random", "greedy", "substitution"),
    ]
    assert {p["deal_sets"] for p in summary["pairs"]} == {summary["sprt"]["deal_sets"]}
    mutual, there, back = (p["mean_difference"] for p in summary["pairs"])
    assert mutual == pytest.approx((there - back) / 2)
    assert summary["pairs"][0]["mean_difference"] == pytest.approx(
        summary["sprt"]["mean_difference"], abs=1e-4
    )


async def test_a_bot_in_a_file_outside_the_package_plays_a_tournament_by_module_and_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/BOTS.md's example, copied outside the repository, named as module:Class:
    through gRPC and in process, the same games."""
    shutil.copy(ROOT / "docs" / "examples" / "lowball_bot.py", tmp_path / "outside_bot.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "outside_bot:LowballBot"
    running = await start(
        ServerOptions(grpc_address="127.0.0.1:0", http_address="", store="memory")
    )
    try:
        target = f"127.0.0.1:{running.grpc_port}"
        remote_summary, remote = await run(Config(SHORT, [spec, "greedy"], deals=1, target=target))
    finally:
        await running.stop(grace=0.5)
    summary, local = await run(Config(SHORT, [spec, "greedy"], deals=1))
    for s in (summary, remote_summary):
        assert s["illegal"] == s["errors"] == s["timeouts"] == 0
        assert {row["bot"] for row in s["stats"]} == {"lowball", "greedy"}  # its name
    assert [r.scores for r in local] == [r.scores for r in remote]
    assert all(r.moves > 0 for r in local)


def test_the_command_takes_a_bot_file_and_refuses_a_broken_one_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "elsewhere.py"
    shutil.copy(ROOT / "docs" / "examples" / "lowball_bot.py", bot)
    common = ["tournament", "--in-process", "--no-progress", "--deals", "1"]
    assert main([*common, "--bots", f"{bot}:LowballBot,random"]) == 0
    out = capsys.readouterr().out
    assert "lowball" in out and f"{bot}:LowballBot" not in out  # named by its class
    for broken in ("nobody", f"{bot}:Nothing", f"{tmp_path / 'gone.py'}:Bot"):
        assert main([*common, "--bots", f"{broken},random"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("glintwick tournament: ") and err.count("\n") == 1, err
        assert "Traceback" not in err


def test_round_endings_count_each_reason_by_round() -> None:
    """Four 4-seat contract games of greedy bots: the reasons the engine gives, counted."""
    specs = sched.games(["greedy", "random"], 4, 1, 3)
    results = run_inprocess(specs, SHORT_CONTRACT, 3)
    endings = round_endings(results)
    assert endings["rounds"] == 2 * len(results)
    for number, row in enumerate(endings["by_round"], start=1):
        assert row["round"] == number
        expected = [r.round_ends[number - 1] for r in results]
        assert {k: v for k, v in row.items() if k != "round" and v} == {
            reason: expected.count(reason) for reason in set(expected)
        }
    out = sum(r.round_ends.count("went_out") for r in results)
    assert endings["nobody_out_share"] == (endings["rounds"] - out) / endings["rounds"]


def test_a_tournament_writes_json_csv_and_charts(tmp_path: Path) -> None:
    """--out: the summary with every game, a row per seat, a row per pair, and the charts
    (the pairs' differences with their intervals and per seat order; the ratings)."""
    rules = tmp_path / "short.json"
    rules.write_text(json.dumps(SHORT_CONTRACT.to_dict()))
    out = tmp_path / "report"
    args = ["tournament", "--in-process", "--no-progress", "--ruleset", str(rules)]
    args += ["--seats", "4", "--bots", "strong,greedy,random", "--deals", "2", "--out", str(out)]
    assert main(args) == 0
    summary = json.loads((out / "tournament.json").read_text())
    games = summary["games_played"]
    assert len(games) == summary["games"] == 2 * 3 * 4  # 3 seat orders of 4 rotations a deal
    assert summary["seating"] == "balanced" and len(summary["order_spreads"]) == 3
    with (out / "games.csv").open() as f:
        seats = list(csv.DictReader(f))
    assert len(seats) == 4 * len(games)
    assert {int(r["order"]) for r in seats} == {0, 1, 2}
    with (out / "pairs.csv").open() as f:
        pairs = list(csv.DictReader(f))
    assert [(p["a"], p["b"]) for p in pairs] == [(p["a"], p["b"]) for p in summary["pairs"]]
    assert [float(p["mean_difference"]) for p in pairs] == [
        p["mean_difference"] for p in summary["pairs"]
    ]
    for chart in ("pairs.png", "ratings.png"):
        assert (out / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_games_in_several_processes_give_the_same_results() -> None:
    specs = sched.games(["strong", "greedy", "random"], 2, 2, 9)
    assert [r.row() for r in run_inprocess(specs, SHORT, 9, workers=2)] == [
        r.row() for r in run_inprocess(specs, SHORT, 9)
    ]
