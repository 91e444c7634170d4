"""The golden transcripts replay on today's engine exactly as they were recorded."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from tests.golden_games import GAMES_PER_RULESET, load, replay, rule_sets

TRANSCRIPTS = load()
RULE_SET_NAMES = [r.name for r in rule_sets()]


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_every_golden_game_of_a_rule_set_replays_identically(name: str) -> None:
    games = [(i, t) for i, t in enumerate(TRANSCRIPTS) if t["rules"]["name"] == name]
    assert len(games) == GAMES_PER_RULESET
    mismatches = [m for i, t in games for m in replay(i, t)]
    assert mismatches == []


def test_the_goldens_cover_both_players_every_seat_count_and_every_action() -> None:
    players = Counter((t["rules"]["name"], t["players"]) for t in TRANSCRIPTS)
    assert players == {
        (n, p): GAMES_PER_RULESET // 2 for n in RULE_SET_NAMES for p in ("random", "greedy")
    }
    seats = {(t["rules"]["name"], t["seats"]) for t in TRANSCRIPTS}
    assert {
        (r.name, n) for r in rule_sets() for n in range(r.min_players, r.max_players + 1)
    } == seats
    kinds = {step[1]["type"] for t in TRANSCRIPTS for step in t["steps"]}
    assert kinds == {
        "draw",
        "discard",
        "lay_contract",
        "lay_off",
        "extra_meld",
        "swap_joker",
        "end_turn",
        "claim",
        "pass_claim",
    }


def _first(name: str) -> tuple[int, dict[str, Any]]:
    index = next(i for i, t in enumerate(TRANSCRIPTS) if t["rules"]["name"] == name)
    return index, copy.deepcopy(TRANSCRIPTS[index])


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("events", "events of"),
        ("legal", "legal actions"),
        ("final", "final state"),
        ("rules", "rule-set hash"),
    ],
)
def test_a_changed_transcript_is_caught(where: str, expected: str) -> None:
    """The comparison can fail: each kind of recorded digest, altered, is reported."""
    index, transcript = _first("contract")
    if where == "events":
        transcript["steps"][5][3] = "0" * 16
    elif where == "legal":
        transcript["steps"][7][2] = "0" * 16
    elif where == "final":
        transcript["final"]["state"] = "0" * 16
    else:
        transcript["rules"]["turn_cap"] = 199
    mismatches = replay(index, transcript)
    assert any(m.what.startswith(expected) for m in mismatches), mismatches
