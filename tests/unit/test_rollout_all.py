"""bench.rollout_all: the paired rollout check of every alternative at a decision."""

from __future__ import annotations

import dataclasses
import json

from bench.rollout_all import check, fair_saving, savings, summary
from engine.rulesets import WHISKERTRAIL

ONE_ROUND = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1])


def test_every_distinct_alternative_is_played_in_the_same_worlds() -> None:
    rows = list(check(ONE_ROUND, 2, "expert", 1, 2, 7, 5))
    decisions = [r for r in rows if not r.get("done")]
    assert decisions and rows[-1]["done"] and rows[-1]["decisions"] >= len(decisions)
    for row in decisions:
        keys = [a["key"] for a in row["alts"]]
        assert row["move"] not in keys and len(set(keys)) == len(keys)
        assert all(len(a["gains"]) == 2 for a in row["alts"])
        assert row["cls"].split("-")[0] in ("draw", "discard", "lay", "layoff", "extra")
        if row["cls"].startswith("draw"):
            assert [a["type"] for a in row["alts"]] == ["Draw"]


def test_the_check_is_reproducible_and_its_summary_groups_rows(tmp_path: object) -> None:
    first = list(check(ONE_ROUND, 2, "expert", 1, 2, 3, 7))
    assert first == list(check(ONE_ROUND, 2, "expert", 1, 2, 3, 7))
    path = f"{tmp_path}/rows.jsonl"
    with open(path, "w") as sink:
        sink.writelines(json.dumps(r) + "\n" for r in first)
    lines = summary([path], ["cls"], 0.0)
    decisions = [r for r in first if not r.get("done")]
    assert lines[0].startswith(f"{len(decisions)} decisions, 1 games finished (2 seat-games)")
    assert len(lines) == 1 + len({r["cls"] for r in decisions})


def test_savings_pick_on_one_half_and_score_on_the_other() -> None:
    # the alternative wins on the even worlds, loses more on the odd ones: picked on
    # the evens it scores -4 on the odds; picked on the odds it is not picked (0)
    alts = [{"gains": [6.0, -4.0, 6.0, -4.0]}]
    cv, top, sig = savings(alts)
    assert cv == -2.0 and top == 1.0 and not sig
    strong = [{"gains": [10.0, 10.0, 10.0, 10.0]}, {"gains": [0.0, 0.0, 0.0, 0.0]}]
    assert savings(strong) == (10.0, 10.0, True)


def test_a_fair_row_picks_in_sampled_worlds_and_scores_in_the_true_ones() -> None:
    rows = list(check(ONE_ROUND, 2, "expert", 1, 2, 7, 3, ("discard-closed",), True))
    decisions = [r for r in rows if not r.get("done")]
    assert decisions and all(r["cls"] == "discard-closed" for r in decisions)
    for row in decisions:
        assert all(len(a["picks"]) == len(a["gains"]) == 2 for a in row["alts"])
        saved = fair_saving(row["alts"])
        assert saved == 0.0 or saved in [sum(a["gains"]) / 2 for a in row["alts"]]
    alts = [
        {"gains": [-5.0, -7.0], "picks": [4.0, 2.0]},
        {"gains": [9.0, 9.0], "picks": [1.0, 0.0]},
    ]
    assert fair_saving(alts) == -6.0  # picked by the sampled worlds, scored by the true
    assert fair_saving(alts, margin=5.0) == 0.0
