"""The learned discard ranking and two-way decisions (``clients.bots.learned``) and the
rollout values they are fitted to (``clients.training.qvalues``): without weights the bot
is ``expert`` move for move; with weights it plays legal moves of its own, the same ones
for the same seed, well within the budget; the recorder plays expert's game and records
each candidate's values in the same worlds; the fit recovers a planted preference."""

from __future__ import annotations

import dataclasses
import io
import json
import random
import time

import pytest

from clients.bots.base import Bot
from clients.bots.expert import ExpertBot
from clients.bots.learned import CONTEXT, FEATURES, LearnedBot
from clients.bots.tried import NearBot, SampledBot, WideBot
from clients.training.qvalues import compare, fit, generate
from engine.actions import Action
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from tests.support.playouts import bot_moves


def _moves(rules: RuleSet, make: type[Bot], seed: bytes, seats: int = 0) -> list[Action]:
    return bot_moves(rules, seats or rules.min_players, make, seed)


def _weighted(rules: RuleSet, seats: int) -> type[LearnedBot]:
    """Weights that shed high cards and hold the contract: moves expert would not make."""
    discard = tuple(-1.0 if name == "penalty" else 0.0 for name in FEATURES)
    hold = tuple(5.0 if name == "bias" else 0.0 for name in CONTEXT)
    two_way = {(kind, rules.name, seats): hold for kind in ("draw", "lay", "claim")}

    class Weighted(LearnedBot):
        weights = {(rules.name, seats): discard}  # noqa: RUF012

    Weighted.two_way = two_way
    return Weighted


@pytest.mark.parametrize("rules", [WHISKERTRAIL, CONTRACT], ids=lambda r: r.name)
def test_without_weights_it_is_expert_and_with_them_it_plays_otherwise(rules: RuleSet) -> None:
    short = dataclasses.replace(rules, contracts=rules.contracts[:3])
    seeds = [f"learned:{i}".encode() for i in range(3)]
    assert all(_moves(short, LearnedBot, s) == _moves(short, ExpertBot, s) for s in seeds)
    weighted = _weighted(short, short.min_players)
    assert any(_moves(short, weighted, s) != _moves(short, ExpertBot, s) for s in seeds)
    assert all(_moves(short, weighted, s) == _moves(short, weighted, s) for s in seeds)


def test_a_weighted_game_is_well_within_the_budget() -> None:
    rules, seats = CONTRACT, 4
    weighted = _weighted(rules, seats)
    started = time.process_time()
    moves = _moves(rules, weighted, b"learned:budget", seats)
    cpu = time.process_time() - started
    assert cpu / seats < 2.0  # seconds of CPU per seat per game (issue 31's budget)
    assert cpu / len(moves) < 0.05  # far below 1 s a decision


@pytest.mark.parametrize("truth", [False, True], ids=["sampled", "truth"])
def test_the_recorder_plays_expert_and_records_paired_values(truth: bool) -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])
    out = io.StringIO()
    report = generate(short, 2, 1, 9200, 2, out, every=2, spread=1, truth=truth)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows and report["decisions"] == len(rows)
    for row in rows:
        assert row["kind"] in ("discard", "claim", "draw", "lay")
        assert len(row["values"]) >= 2 and all(len(v) == 2 for v in row["values"])
        width = len(FEATURES) if row["kind"] == "discard" else len(CONTEXT)
        assert all(len(f) == width for f in row["features"])


def test_the_fit_recovers_a_planted_preference() -> None:
    rng = random.Random(1)
    rows = []
    for _ in range(400):
        feats = [[rng.random() for _ in FEATURES] for _ in range(3)]
        # each penalty point (a tenth of the feature) kept costs one point of the round
        values = [[-10 * f[FEATURES.index("penalty")] + rng.gauss(0, 1)] for f in feats]
        rows.append({"kind": "discard", "features": feats, "values": values})
    found = fit(rows)["discard"]
    assert found["weights"]["penalty"] == pytest.approx(-10, abs=1.5)
    assert found["cross_validated"]["margin 0"]["saving"] > 0


@pytest.mark.parametrize("make", [SampledBot, WideBot, NearBot], ids=lambda b: b.name)
def test_the_measured_variants_play_their_own_legal_moves_the_same_for_a_seed(
    make: type[LearnedBot],
) -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    seeds = [f"variant:{i}".encode() for i in range(2)]
    moves = [_moves(short, make, s, 4) for s in seeds]
    assert moves == [_moves(short, make, s, 4) for s in seeds]
    assert moves != [_moves(short, ExpertBot, s, 4) for s in seeds]


def test_compare_sees_agreement_and_its_absence() -> None:
    rng = random.Random(2)
    rows = []
    for _ in range(50):
        values = [[rng.gauss(m, 1) for _ in range(4)] for m in (0, 5, -5)]
        rows.append({"values": values, "sampled": values})
    same = compare(rows)
    assert same["correlation"] == pytest.approx(1.0)
    assert same["reliability_true"] > 0.5 and same["corrected"] == pytest.approx(1.0, abs=0.3)
    assert same["same_side"] == 1.0 and same["sampled_pick_true_saving"] > 0
    flipped = compare([{**r, "sampled": [[-x for x in v] for v in r["values"]]} for r in rows])
    assert flipped["correlation"] == pytest.approx(-1.0)
    assert flipped["sampled_pick_true_saving"] < 0


def test_the_recorder_compares_sampled_worlds_with_the_truth() -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])
    out = io.StringIO()
    generate(short, 2, 1, 9201, 2, out, every=3, truth=True, compare=True)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows and all(len(r["sampled"]) == len(r["values"]) for r in rows)
    kinds = {r["kind"] for r in rows}
    assert sum(compare(rows, k).get("decisions", 0) for k in kinds) <= len(rows)
