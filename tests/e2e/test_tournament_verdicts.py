"""What a host reads from a tournament, on real games in process: the SPRT's verdict
both ways round at 2 and 4 seats, and the outputs of a substitution run (the columns of
its CSV files and the labels of its pairs chart).

The games are whiskertrail's first contract (about 15 ms a game), so that an SPRT can
reach its 32 deal sets in a few seconds."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from clients.tournament.report import PAIRS_COLUMNS, pairs_figure, table
from clients.tournament.sprt import Sprt
from clients.tournament.tournament import Config, run_sync
from engine.rulesets import WHISKERTRAIL
from glintwick_cli import main

ONE_CONTRACT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1])
TWINS = "tests.support.twins"


def sprt(a: str, b: str, seats: int, deals: int, seed: int) -> tuple[dict[str, Any], list[Any]]:
    config = Config(ONE_CONTRACT, [a, b], deals=deals, seats=seats, seed=seed, sprt=(a, b))
    summary, results = run_sync(config)
    return summary, [r.row() for r in results]


def games(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (r["deal"], r["order"], r["rotation"], tuple(r["seats"]), tuple(r["scores"])) for r in rows
    ]


@pytest.mark.parametrize("seats", [2, 4])
def test_swapping_the_names_plays_the_same_games_and_negates_every_observation(
    seats: int,
) -> None:
    """Bots that draw random numbers (one decision in twenty at random), so that a game
    whose bot seeds followed the names' order would differ."""
    a, b = f"{TWINS}:JitteryGreedy", "random"
    forward, forward_rows = sprt(a, b, seats, deals=3, seed=11)
    swapped, swapped_rows = sprt(b, a, seats, deals=3, seed=11)
    assert games(forward_rows) == games(swapped_rows)
    assert len(forward_rows) == 3 * 2 * (1 + seats)
    there, back = forward["sprt"]["differences"], swapped["sprt"]["differences"]
    assert len(there) == 3 and there == [-x for x in back] and any(there)
    assert forward["sprt"]["mean_difference"] == -swapped["sprt"]["mean_difference"] < 0
    assert forward["sprt"]["sd"] == swapped["sprt"]["sd"]
    assert forward["schedule"] == swapped["schedule"] == "mutual-substitution"
    there_pair, back_pair = forward["pairs"][0], swapped["pairs"][0]
    assert (there_pair["a"], there_pair["b"]) == ("jittery", "random")
    assert there_pair["mean_difference"] == -back_pair["mean_difference"]
    assert there_pair["better_share"] == back_pair["worse_share"]


def swapped_decision(summary: dict[str, Any]) -> str:
    """The verdict with the names the other way round: the same games, every difference
    negated (the test above), fed to the same test."""
    test = Sprt(margin=summary["sprt"]["margin"])
    for x in summary["sprt"]["differences"]:
        test.observe(-x)
        if test.decision != "undecided":
            break
    return test.decision


@pytest.mark.parametrize(
    ("a", "b", "seats", "verdicts"),
    [
        # the same class under two names: every game the same, every difference 0
        ("strong", f"{TWINS}:StrongTwin", 2, {"H0"}),
        # the same play with other dice: differences that spread, around 0
        (f"{TWINS}:JitteryGreedy", f"{TWINS}:JitteryTwin", 4, {"H0", "undecided"}),
    ],
)
def test_two_copies_of_one_bot_are_never_h1_either_way(
    a: str, b: str, seats: int, verdicts: set[str]
) -> None:
    summary, _ = sprt(a, b, seats, deals=40, seed=23)
    assert summary["sprt"]["decision"] in verdicts, summary["sprt"]
    assert swapped_decision(summary) in verdicts
    assert abs(summary["sprt"]["mean_difference"]) < 5


@pytest.mark.parametrize("seats", [2, 4])
def test_a_clearly_stronger_bot_is_h1_and_the_other_way_round_h0(seats: int) -> None:
    summary, rows = sprt("greedy", "random", seats, deals=60, seed=29)
    assert summary["sprt"]["decision"] == "H1", summary["sprt"]
    assert swapped_decision(summary) == "H0"
    # decided at the first deal set allowed: the report holds exactly those
    assert summary["sprt"]["deal_sets"] == summary["deal_sets"] == 32
    assert len(rows) == 32 * 2 * (1 + seats)
    (ax,) = pairs_figure(summary).axes
    assert ax.get_title().endswith("mutual-substitution; SPRT: H1 after 32 deals")
    ticks = [t.get_text().splitlines()[0] for t in ax.get_yticklabels()]
    assert ticks == [
        "greedy - random (each among the other's, both ways)",
        "greedy - random (greedy in each seat among randoms)",
        "random - greedy (random in each seat among greedys)",
    ]


@pytest.fixture(scope="module")
def substitution_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    tmp_path = tmp_path_factory.mktemp("substitution")
    rules = tmp_path / "one.json"
    rules.write_text(json.dumps(ONE_CONTRACT.to_dict()))
    out = tmp_path / "report"
    args = ["tournament", "--in-process", "--no-progress", "--ruleset", str(rules)]
    args += ["--seats", "4", "--schedule", "substitution", "--bots", "greedy,strong,random"]
    args += ["--deals", "3", "--seed", "5", "--out", str(out)]
    assert main(args) == 0
    return json.loads((out / "tournament.json").read_text()), out


def test_a_substitution_run_reports_roles_deals_and_shares(
    substitution_run: tuple[dict[str, Any], Path],
) -> None:
    summary, out = substitution_run
    assert summary["schedule"] == "substitution" and summary["deal_sets"] == 2 * 3
    assert summary["games"] == 2 * 3 * (1 + 4)  # per candidate and deal: reference + 4
    rows = {(s["bot"], s["role"]): s for s in summary["stats"]}
    assert set(rows) == {("greedy", "reference"), ("strong", "candidate"), ("random", "candidate")}
    # the reference's row is its own games (two a deal, one per candidate), every seat
    reference = rows[("greedy", "reference")]
    assert (reference["games"], reference["seat_games"], reference["deal_sets"]) == (6, 24, 3)
    own = [g for g in summary["games_played"] if g["reference"]]
    assert reference["mean_penalty"] == pytest.approx(
        sum(sum(g["scores"]) for g in own) / (4 * len(own))
    )
    candidate = rows[("strong", "candidate")]
    assert (candidate["games"], candidate["seat_games"], candidate["deal_sets"]) == (12, 12, 3)
    for p in summary["pairs"]:
        assert p["better_share"] + p["tied_share"] + p["worse_share"] == pytest.approx(1)
    assert [(p["a"], p["b"], p["design"]) for p in summary["pairs"]] == [
        ("strong", "greedy", "substitution"),
        ("random", "greedy", "substitution"),
        ("strong", "random", "via-reference"),
    ]
    with (out / "pairs.csv").open() as f:
        pairs = list(csv.DictReader(f))
    assert tuple(pairs[0]) == PAIRS_COLUMNS
    assert tuple(PAIRS_COLUMNS[-3:]) == ("better_share", "tied_share", "worse_share")
    for row, p in zip(pairs, summary["pairs"], strict=True):
        assert [float(row[c]) for c in PAIRS_COLUMNS[-3:]] == [p[c] for c in PAIRS_COLUMNS[-3:]]
    with (out / "games.csv").open() as f:
        seats = list(csv.DictReader(f))
    roles = {(int(r["index"]), int(r["seat"])): (r["reference"], r["role"]) for r in seats}
    for g in summary["games_played"]:
        for seat in range(4):
            if g["reference"]:
                assert roles[(g["index"], seat)] == ("1", "reference")
            elif seat == g["rotation"]:
                assert roles[(g["index"], seat)] == ("0", "candidate")
            else:
                assert roles[(g["index"], seat)] == ("0", "beside")
    text = table(summary)
    assert "strong - greedy (strong in each seat among greedys)" in text
    assert "over 3 deals" in text and "tied" in text and "worse" in text


def test_the_pairs_chart_says_which_way_is_better_and_over_how_many_deals(
    substitution_run: tuple[dict[str, Any], Path],
) -> None:
    summary, _ = substitution_run
    fig = pairs_figure(summary)
    (ax,) = fig.axes
    assert "below 0, A better" in ax.get_xlabel()
    assert "seat order" not in ax.get_xlabel()  # a substitution has no seat orders
    assert "substitution" in ax.get_title()
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    first = summary["pairs"][0]
    assert ticks[0].splitlines() == [
        "strong - greedy (strong in each seat among greedys)",
        f"3 deals: better {first['better_share']:.0%}, tied {first['tied_share']:.0%},"
        f" worse {first['worse_share']:.0%}",
    ]
    assert ticks[2].splitlines()[0] == "strong - random (each among greedys)"
    assert "each cyclic order" not in "".join(ticks)


def test_a_mixed_table_chart_keeps_its_seat_orders() -> None:
    summary = {
        "ruleset": "r",
        "ruleset_hash": "h" * 12,
        "seed": 1,
        "schedule": "round-robin",
        "bots": ["a", "b"],
        "pairs": [
            {
                "a": "a",
                "b": "b",
                "deal_sets": 7,
                "mean_difference": -2.0,
                "ci_low": -3.0,
                "ci_high": -1.0,
                "better_share": 0.5,
                "tied_share": 0.25,
                "worse_share": 0.25,
                "design": "tables",
            }
        ],
        "order_spreads": [{"a": "a", "b": "b", "mean_differences": [-1.0, -3.0]}],
    }
    (ax,) = pairs_figure(summary).axes
    assert "x: each seat order" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "a - b\n7 deal sets: better 50%, tied 25%, worse 25%"
    ]
