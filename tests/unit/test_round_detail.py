"""bench.round_detail: where a bot's points go, round by round, and the per-round pairs."""

from __future__ import annotations

import dataclasses

from bench.round_detail import detail, pairs
from engine.rulesets import CONTRACT

TWO_ROUNDS = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[3:5])


def test_detail_counts_each_round_of_each_game() -> None:
    rows = detail(TWO_ROUNDS, 4, 2, "expert")
    assert sorted(rows) == [1, 2]
    for row in rows.values():
        assert sum(row["ends"].values()) == 2  # type: ignore[attr-defined]
        assert 0 <= row["opened share"] <= 1  # type: ignore[operator]


def test_a_bot_against_itself_differs_by_nothing_and_a_changed_round_shows() -> None:
    same = pairs(TWO_ROUNDS, 4, 2, "expert", "expert")
    assert set(same) == {"round 1", "round 2", "game"}
    assert all(v == "+0.00 ± 0.00" for v in same.values())
    # closer changes only the round of three groups (here round 1): round 2 is expert's
    changed = pairs(TWO_ROUNDS, 4, 2, "expert", "clients.bots.closer:CloserBot")
    assert changed["round 2"] == "+0.00 ± 0.00"
