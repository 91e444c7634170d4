"""The load tests themselves: short headless locust runs through ``python -m loadtests.run``.

The main run starts what ``make loadtest`` starts (a real redis-server on a free port,
``glintwick serve`` with two worker processes on free ports) and every user class for
a few seconds; the others check that a failed request and a p99 over its limit fail
the run.  Locust runs in its own process (it monkey-patches the standard library).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine.cards import cards_from_codes
from engine.rulesets import PRESETS
from loadtests.corpus import conformance_hands, corpus, generated_hands
from loadtests.play import parse_kinds
from loadtests.probe import percentiles
from loadtests.processes.ports import free_port
from loadtests.run.arguments import seconds
from loadtests.run.profiling import profile_top
from loadtests.run.steps import Holds

ROOT = Path(__file__).resolve().parents[2]


def run_loadtest(out: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    completed = subprocess.run(
        [sys.executable, "-m", "loadtests.run", "--out", str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = completed.stdout + completed.stderr
    summary_path = out / "summary.json"
    assert summary_path.exists(), output
    summary: dict[str, Any] = json.loads(summary_path.read_text())
    return completed.returncode, summary, output


def stats_of(summary: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["type"], row["name"]): row for row in summary["run"]["stats"]}


def test_every_user_class_plays_without_a_failure(tmp_path: Path) -> None:
    code, summary, output = run_loadtest(
        tmp_path,
        "--store", "redis", "--workers", "2", "--time", "8s",
        "--tables", "2", "--play-tables", "2", "--http-tables", "1", "--solvers", "1",
        "--watchers", "2", "--think-time", "0.02", "--solver-wait", "0.05", "--max-p99-ms", "",
    )  # fmt: skip
    assert code == 0, output
    stats = stats_of(summary)
    expected = [
        ("grpc", "CreateGame"), ("grpc", "JoinGame"), ("grpc", "GetView"),
        ("grpc", "ListLegalActions"), ("grpc", "SubmitAction"),  # TableUser
        ("grpc", "Play (open)"), ("grpc", "Play (act)"),  # PlayTableUser
        ("POST", "CreateGame"), ("GET", "GetView"), ("POST", "SubmitAction"),  # HttpTableUser
        ("grpc", "AnalyseHand"),  # SolverUser
        ("grpc", "WatchGame (open)"), ("grpc", "WatchGame (event)"),  # WatcherUser
    ]  # fmt: skip
    for key in expected:
        assert stats.get(key, {}).get("requests", 0) > 0, (key, output)
    assert all(row["failures"] == 0 for row in stats.values()), output
    assert stats[("", "Aggregated")]["requests"] > 100
    cpu = summary["run"]["cpu"]["percent_of_one_core"]
    assert cpu["server (glintwick)"] > 0 and cpu["load generator (locust)"] > 0
    assert (tmp_path / "stats-report.html").stat().st_size > 0
    assert (tmp_path / "stats_stats.csv").exists()


def test_a_failed_request_fails_the_run(tmp_path: Path) -> None:
    nobody = f"127.0.0.1:{free_port()}"  # nothing listens there: every call is UNAVAILABLE
    code, summary, output = run_loadtest(
        tmp_path, "--target", nobody, "--time", "3s", "--tables", "0", "--http-tables", "0",
        "--solvers", "1", "--watchers", "0",
    )  # fmt: skip
    assert code == 1, output
    assert stats_of(summary)[("grpc", "AnalyseHand")]["failures"] > 0


def test_a_p99_over_its_limit_fails_the_run(tmp_path: Path) -> None:
    code, summary, output = run_loadtest(
        tmp_path, "--store", "memory", "--workers", "1", "--time", "3s",
        "--tables", "0", "--http-tables", "0", "--solvers", "1", "--watchers", "0",
        "--solver-wait", "0.05", "--max-p99-ms", "AnalyseHand=0",
    )  # fmt: skip
    assert code == 3, output
    assert "p99 over its limit: AnalyseHand" in output
    row = stats_of(summary)[("grpc", "AnalyseHand")]
    assert row["requests"] > 0 and row["failures"] == 0


def test_steps_take_both_table_transports_in_turn(tmp_path: Path) -> None:
    """``--steps`` with ``--step-transports unary,play``: each table count once per
    transport, in turn, each judged on its own move sample (SubmitAction, Play (act))."""
    code, summary, output = run_loadtest(
        tmp_path, "--store", "memory", "--workers", "1", "--time", "3s", "--steps", "1,2",
        "--step-transports", "unary,play", "--http-tables", "0", "--solvers", "0",
        "--watchers", "0", "--think-time", "0.02", "--max-p99-ms", "",
        "--step-p99-ms", "5000", "--probe-tables", "1",
    )  # fmt: skip
    assert code == 0, output
    steps = [(s["transport"], s["tables"]) for s in summary["steps"]]
    assert steps == [("unary", 1), ("play", 1), ("unary", 2), ("play", 2)], output
    assert summary["tables_held"] == {"unary": 2, "play": 2}, output
    both = {"unary": 2, "play": 2}
    assert summary["tables_held_by_metric"] == {
        "call": both,
        "cycle": both,
        "probe-call": both,
        "probe-cycle": both,
    }, output
    for step in summary["steps"]:
        names = {row["name"]: row for row in step["stats"]}
        unary = step["transport"] == "unary"
        move = "SubmitAction" if unary else "Play (act)"
        other = "Play (act)" if unary else "SubmitAction"
        assert names[move]["requests"] > 0 and other not in names, (step["transport"], output)
        assert step["move_p99_ms"] == names[move]["p99_ms"] is not None
        # the whole cycle of a move: one sample per move (the last of a game has none)
        cycle = "Unary (next prompt)" if unary else "Play (next prompt)"
        assert 0 < names[cycle]["requests"] <= names[move]["requests"], output
        # the probe played the stepped transport beside the load, outside locust
        probe = step["probe"]
        assert probe["transport"] == step["transport"] and not probe["failures"], output
        assert probe["samples"]["call"]["count"] >= probe["samples"]["cycle"]["count"] > 0
        assert step["move_p99_ms_by_metric"] == {
            "call": names[move]["p99_ms"],
            "cycle": names[cycle]["p99_ms"],
            "probe-call": probe["samples"]["call"]["p99"],
            "probe-cycle": probe["samples"]["cycle"]["p99"],
        }


def test_aio_tables_are_the_whole_stepped_load(tmp_path: Path) -> None:
    """``--table-client aio``: a step's tables are the probe's grpc.aio client, not
    locust's users (locust, with no other user, is not started), and ``call`` and
    ``cycle`` are the aio tables' samples."""
    code, summary, output = run_loadtest(
        tmp_path, "--store", "memory", "--workers", "1", "--time", "4s", "--steps", "2",
        "--table-client", "aio", "--http-tables", "0", "--solvers", "0", "--watchers", "0",
        "--think-time", "0.02", "--max-p99-ms", "", "--step-p99-ms", "5000",
    )  # fmt: skip
    assert code == 0, output
    assert [(s["transport"], s["tables"]) for s in summary["steps"]] == [
        ("unary", 2),
        ("play", 2),
    ], output
    both = {"unary": 2, "play": 2}
    assert summary["tables_held_by_metric"] == {"call": both, "cycle": both}, output
    for step in summary["steps"]:
        probe = step["probe"]
        assert (probe["transport"], probe["tables"]) == (step["transport"], 2), output
        assert not probe["failures"] and probe["warmup"] > 0, output
        assert probe["samples"]["call"]["count"] >= probe["samples"]["cycle"]["count"] > 0
        assert step["move_p99_ms_by_metric"] == {
            "call": probe["samples"]["call"]["p99"],
            "cycle": probe["samples"]["cycle"]["p99"],
        }
        assert step["stats"] == [], output  # (no locust run)
        assert step["cpu"]["percent_of_one_core"]["load generator (aio tables)"] > 0


def test_aio_tables_that_fail_hold_nothing(tmp_path: Path) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    code, summary, output = run_loadtest(
        tmp_path, "--target", nobody, "--time", "2s", "--steps", "1,2",
        "--step-transports", "play", "--table-client", "aio", "--http-tables", "0",
        "--solvers", "0", "--watchers", "0", "--max-p99-ms", "",
    )  # fmt: skip
    assert code == 1, output
    assert summary["tables_held"] == {"play": None}, output
    assert [s["tables"] for s in summary["steps"]] == [1], output  # (stopped at its failure)


def test_a_count_is_held_only_when_it_and_every_count_before_it_held() -> None:
    holds = Holds(["unary", "play"], limit=100)
    holds.record("unary", 10, 40.0, failed=False)
    holds.record("play", 10, 120.0, failed=False)  # over the limit: play holds nothing
    holds.record("unary", 20, 90.0, failed=True)  # a failed request breaks a count too
    holds.record("play", 20, 50.0, failed=False)  # (after a broken count: not held)
    holds.record("unary", 30, 60.0, failed=False)
    assert holds.held == {"unary": 10, "play": None}
    assert holds.broken == {"unary", "play"}
    missing = Holds(["unary"], limit=100)
    missing.record("unary", 10, None, failed=False)  # no move sample at all: not held
    assert missing.held == {"unary": None}


# --------------------------------------------------------------------------- the pieces


def test_the_corpus_is_the_conformance_hands_plus_valid_seeded_deals() -> None:
    conformance = conformance_hands()
    assert len(conformance) > 400
    generated = generated_hands(300, seed=7)
    assert generated == generated_hands(300, seed=7)
    assert generated != generated_hands(300, seed=8)
    assert {h.rule_set for h in generated} == set(PRESETS)
    for hand in generated:
        rules = PRESETS[hand.rule_set]
        deal = rules.contract(hand.round).deal
        assert len(hand.cards) in (deal, deal + 1)
        cards_from_codes(hand.cards, rules.decks, rules.jokers)  # raises when impossible
    assert len(corpus(300, seed=7)) == len(conformance) + 300


def test_table_kinds_and_run_times_parse() -> None:
    assert parse_kinds("contract:4, whiskertrail:2,whiskertrail") == [
        ("contract", 4),
        ("whiskertrail", 2),
        ("whiskertrail", 4),
    ]
    for bad in ("contract:2", "whiskertrail:5", "nosuch:2", ""):
        try:
            parse_kinds(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
    assert seconds("90") == 90 and seconds("2m") == 120 and seconds("1h30m") == 5400


def test_profile_top_counts_self_and_inclusive_time(tmp_path: Path) -> None:
    raw = tmp_path / "profile.txt"
    raw.write_text(
        'process 1:"python";main (app.py:3);solve (solver.py:10);search (solver.py:40) 6\n'
        'process 1:"python";main (app.py:3);solve (solver.py:12) 2\n'
        'process 1:"python";main (app.py:3);encode (codec.py:7) 2\n'
    )
    top = profile_top(raw)
    assert top.startswith("10 samples")
    own, inclusive = top.split("inclusive")
    assert " 60.0%  search (solver.py)" in own
    assert " 80.0%  solve (solver.py)" in inclusive and "100.0%  main (app.py)" in inclusive


def test_the_probe_reports_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # 100 .. 1, unsorted
    assert percentiles(values) == {"count": 100, "p50": 50.0, "p99": 99.0, "max": 100.0}
    assert percentiles([7.0]) == {"count": 1, "p50": 7.0, "p99": 7.0, "max": 7.0}
    assert percentiles([]) == {"count": 0}


def test_a_probe_that_reaches_no_server_fails(tmp_path: Path) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    out = tmp_path / "probe.json"
    done = subprocess.run(
        [sys.executable, "-m", "loadtests.probe", "--target", nobody, "--tables", "2",
         "--seconds", "2", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(out.read_text())
    assert len(report["failures"]) == 2 and report["samples"] == {}
