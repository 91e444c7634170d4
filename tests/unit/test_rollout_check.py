"""bench.rollout_check: the paired rollout check of one kind of decision."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bench.rollout_check import check, summary
from engine.rulesets import WHISKERTRAIL

ONE_ROUND = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1])


@pytest.mark.parametrize("kind", ["dump", "lay", "draw"])
def test_each_row_is_a_decision_of_its_kind_with_its_paired_gains(kind: str) -> None:
    rows = list(check(ONE_ROUND, 4, "closer", kind, 1, 2, 7))
    assert rows, kind
    for row in rows:
        assert len(row["gains"]) == 2 and row["gain"] == sum(row["gains"]) / 2
        if kind == "dump":  # the alternative sheds more, while an opponent is open
            assert row["opp_open"] and row["pa"] > row["pb"]
        if kind == "draw":
            assert row["took"] in ("stock", "discard")


def test_the_check_is_reproducible_and_its_summary_groups_rows(tmp_path: object) -> None:
    first = list(check(ONE_ROUND, 2, "closer", "lay", 1, 2, 3))
    assert first == list(check(ONE_ROUND, 2, "closer", "lay", 1, 2, 3))
    path = f"{tmp_path}/rows.jsonl"
    with open(path, "w") as sink:
        sink.writelines(json.dumps(r) + "\n" for r in first)
    lines = summary([path], ["opp_open"])
    assert lines[0].startswith(f"{len(first)} decisions")
    assert len(lines) == 1 + len({r["opp_open"] for r in first})
