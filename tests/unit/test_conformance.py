"""The solver against the shared test vectors.

Three files of hands: solver-cases.jsonl (400 hands: feasible, points laid),
solver-edge-cases.jsonl (traps, with notes) and missing-cases.jsonl (60 hands
with the number of missing cards, or only a lower bound when it is large).
Every returned selection is checked independently with engine.melds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cards import Card, cards_from_codes
from engine.melds import build_run, build_set
from engine.rulesets import MeldKind, RuleSet, ruleset
from engine.solver import Selection, analyse, best_selection, can_lay, missing_cards

DATA = Path(__file__).parents[1] / "data"
FILES = ("solver-cases.jsonl", "solver-edge-cases.jsonl", "missing-cases.jsonl")


def _load(name: str) -> list[dict[str, Any]]:
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


VECTORS = [(name, i, row) for name in FILES for i, row in enumerate(_load(name))]
MISSING = [(i, row) for i, row in enumerate(_load("missing-cases.jsonl"))]


def _hand(row: dict[str, Any]) -> tuple[RuleSet, list[Card]]:
    rules = ruleset(row["ruleset"])
    return rules, cards_from_codes(row["hand"], rules.decks, rules.jokers)


def check_selection(sel: Selection, hand: list[Card], rules: RuleSet, round_number: int) -> None:
    """Every meld valid for its requirement, melds disjoint and from the hand."""
    contract = rules.contract(round_number)
    assert len(sel.melds) == len(contract.melds), "one meld per requirement"
    hand_ids = {c.id for c in hand}
    seen: set[int] = set()
    for meld, req in zip(sel.melds, contract.melds, strict=True):
        assert meld.kind is req.kind
        assert meld.owner == -1
        size = req.size if rules.exact_contract_sizes else None
        if req.kind is MeldKind.SET:
            rebuilt = build_set(meld.cards, rules, size)
        else:
            rebuilt = build_run(meld.cards, rules, size)
        # same cards, same joker positions (lowest start), same value
        assert rebuilt == meld
        if rules.exact_contract_sizes:
            assert len(meld.cards) == req.size
        else:
            assert len(meld.cards) >= req.size
        ids = [c.id for c in meld.cards]
        assert set(ids) <= hand_ids, "cards come from the hand"
        assert not seen & set(ids), "melds do not share a physical card"
        seen.update(ids)
    laid = [c for m in sel.melds for c in m.cards]
    assert sel.points == sum(rules.penalty(c) for c in laid)
    assert sel.jokers == sum(1 for c in laid if c.is_joker)


@pytest.mark.parametrize(("name", "index", "row"), VECTORS, ids=[f"{n}:{i}" for n, i, _ in VECTORS])
def test_vector(name: str, index: int, row: dict[str, Any]) -> None:
    rules, hand = _hand(row)
    rnd = row["round"]
    sel = best_selection(hand, rules, rnd)
    assert (sel is not None) == row["feasible"], row.get("note", "")
    assert can_lay(hand, rules, rnd) == row["feasible"]
    if sel is None:
        assert row["points_laid"] is None
        return
    assert sel.points == row["points_laid"], row.get("note", "")
    check_selection(sel, hand, rules, rnd)


@pytest.mark.parametrize(("index", "row"), MISSING, ids=[f"missing:{i}" for i, _ in MISSING])
def test_missing(index: int, row: dict[str, Any]) -> None:
    rules, hand = _hand(row)
    rnd = row["round"]
    got = missing_cards(hand, rules, rnd)  # default limit 4
    expected = row["missing"]
    if expected is None:
        # only a lower bound is known: more than the vector's own search limit
        assert row["missing_at_least"] >= 3
        assert got is None or got >= row["missing_at_least"]
    else:
        assert got == expected
    report = analyse(hand, rules, rnd)
    assert report.missing == got
    assert report.feasible == (got == 0) == row["feasible"]
    if got == 0:
        assert report.best is not None and report.outs == ()
        check_selection(report.best, hand, rules, rnd)
    elif got is not None:
        # an out brings the hand one card closer
        for rank, suit in report.outs:
            extra = next(c for c in _rest(hand, rules) if (c.rank, c.suit) == (rank, suit))
            assert missing_cards([*hand, extra], rules, rnd) == got - 1


def _rest(hand: list[Card], rules: RuleSet) -> list[Card]:
    from engine.cards import full_deck

    held = {c.id for c in hand}
    return [c for c in full_deck(rules.decks, rules.jokers) if c.id not in held]


def test_all_files_present() -> None:
    assert len(_load("solver-cases.jsonl")) == 400
    assert len(_load("solver-edge-cases.jsonl")) >= 1
    assert len(MISSING) >= 1
