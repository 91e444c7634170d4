"""The SPRT of ``glintwick tournament --sprt A,B``: a verdict that can go either way,
never both ways, and holds its error rates (simulated)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.tournament import schedule as sched
from clients.tournament.runner import GameResult
from clients.tournament.sprt import Sprt
from clients.tournament.stats import mutual_differences

differences = st.lists(
    st.floats(min_value=-200, max_value=200, allow_nan=False), min_size=1, max_size=80
)


def decide(xs: Iterable[float], margin: float = 5.0) -> str:
    """The decision at the first deal set at which the test stops (or after all)."""
    test = Sprt(margin=margin)
    for x in xs:
        test.observe(x)
        if test.decision != "undecided":
            break
    return test.decision


@settings(deadline=None)  # a loaded machine's pauses are not the test's
@given(differences, st.floats(min_value=0.5, max_value=30))
def test_swapping_the_names_never_gives_h1_both_ways(xs: list[float], margin: float) -> None:
    forward, swapped = Sprt(margin=margin), Sprt(margin=margin)
    for x in xs:
        forward.observe(x)
        swapped.observe(-x)
        assert not (forward.decision == "H1" and swapped.decision == "H1"), (xs, margin)


@settings(deadline=None, max_examples=60)  # 480 made-up games an example
@given(
    st.integers(min_value=2, max_value=6),
    st.floats(min_value=-20, max_value=20),
    st.floats(min_value=0, max_value=60),
    st.integers(min_value=0, max_value=2**32),
)
def test_two_bots_are_never_h1_both_ways_at_any_seat_count(
    seats: int, edge: float, noise: float, seed: int
) -> None:
    """The SPRT's games (the mutual substitution) with made-up penalties: A ``edge``
    points a seat worse than B plus noise per game and seat, and a seat effect; each
    order's test on its own differences, as ``--sprt`` runs it."""
    rng = random.Random(seed)
    specs = sched.games(["a", "b"], seats, 40, 1, sched.MUTUAL_SUBSTITUTION)
    level = {"a": 60 + edge, "b": 60.0}
    results = [
        GameResult(
            spec,
            [round(level[bot] + 4 * s + rng.gauss(0, noise)) for s, bot in enumerate(spec.seats)],
            [],
            "h",
            1,
            "inprocess",
        )
        for spec in specs
    ]
    verdicts = [decide(mutual_differences(results, *pair).values()) for pair in ("ab", "ba")]
    assert verdicts.count("H1") <= 1, verdicts


@settings(deadline=None)  # a loaded machine's pauses are not the test's
@given(st.integers(min_value=1, max_value=200))
def test_equal_play_is_never_h1(deal_sets: int) -> None:
    assert decide([0.0] * deal_sets) != "H1"


def test_it_decides_for_the_better_bot_either_way_round() -> None:
    rng = random.Random(5)
    better = [rng.gauss(-12, 15) for _ in range(300)]
    assert decide(better) == "H1"
    assert decide([-x for x in better]) == "H0"


@pytest.mark.parametrize(
    ("true_difference", "h1_at_most", "h1_at_least"),
    [
        (0.0, 0.06, 0.0),  # equal bots: a false "A better" about alpha (0.05) of the time
        (+5.0, 0.01, 0.0),  # A worse
        (-5.0, 1.0, 0.93),  # A better by the margin: found about 1 - beta of the time
        (-10.0, 1.0, 0.99),
    ],
)
def test_error_rates_by_simulation(
    true_difference: float, h1_at_most: float, h1_at_least: float
) -> None:
    """Deal sets whose differences spread like real ones (sd 15 points per game)."""
    rng = random.Random(int(true_difference * 10) + 11)
    runs = 1000

    def deal_sets() -> Iterable[float]:
        return (rng.gauss(true_difference, 15.0) for _ in itertools.repeat(None, 5000))

    h1 = sum(decide(deal_sets()) == "H1" for _ in range(runs))
    assert h1_at_least <= h1 / runs <= h1_at_most, h1 / runs


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        Sprt(margin=0)
    with pytest.raises(ValueError):
        Sprt(alpha=1.5)
    with pytest.raises(ValueError):
        Sprt().observe(float("nan"))
