"""Tournament schedules: balanced seat orders and the substitution design, and the
statistics that read them (paired differences, the spread across seat orders)."""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.tournament import schedule as sched
from clients.tournament.runner import GameResult
from clients.tournament.stats import (
    mutual_differences,
    order_spreads,
    substitution_bot_stats,
    substitution_differences,
    substitution_pairs,
)


def neighbours(seats: tuple[str, ...]) -> list[tuple[str, str]]:
    """(bot, the bot seated right before it) around the table."""
    return [(seats[s], seats[s - 1]) for s in range(len(seats))]


@settings(deadline=None)  # a loaded machine's pauses are not the test's
@given(st.lists(st.sampled_from("abcde"), min_size=2, max_size=5))
def test_cyclic_orders_are_every_arrangement_up_to_rotation_once(bots: list[str]) -> None:
    lineup = tuple(bots)
    orders = sched.cyclic_orders(lineup)
    assert orders[0] == lineup
    classes = {min(sched.rotate(p, r) for r in range(len(p))) for p in permutations(lineup)}
    assert len(orders) == len(classes)
    assert {min(sched.rotate(o, r) for r in range(len(o))) for o in orders} == classes


def test_balanced_seating_gives_each_bot_each_neighbour_equally_often() -> None:
    specs = sched.games(["a", "b", "c", "d"], 4, 1, seed=3)
    assert len(specs) == 6 * 4  # (4-1)! cyclic orders, each in every rotation
    after = Counter(pair for s in specs for pair in neighbours(s.seats))
    assert set(after.values()) == {8}  # each of the 12 ordered pairs, 8 times
    assert len(after) == 12
    seat_of = Counter((bot, s.seats.index(bot)) for s in specs for bot in s.seats)
    assert set(seat_of.values()) == {6}  # and every bot every seat, once per order
    cyclic = sched.games(["a", "b", "c", "d"], 4, 1, seed=3, seating="cyclic")
    assert len(cyclic) == 4
    assert len(Counter(pair for s in cyclic for pair in neighbours(s.seats))) == 4  # fixed


def test_the_own_order_keeps_its_bot_seeds() -> None:
    """Order 0 is the cyclic schedule's: its games and bot seeds are what they were."""
    balanced = sched.games(["a", "b", "c"], 3, 2, seed=9)
    cyclic = sched.games(["a", "b", "c"], 3, 2, seed=9, seating="cyclic")
    own = [s for s in balanced if s.order == 0]
    assert [(s.seats, s.deal, s.bot_seed(9, 1)) for s in own] == [
        (s.seats, s.deal, s.bot_seed(9, 1)) for s in cyclic
    ]
    seeds = {s.bot_seed(9, seat) for s in balanced for seat in range(3)}
    assert len(seeds) == len(balanced) * 3  # no two bots share a seed


def test_substitution_puts_each_candidate_in_each_seat_among_references() -> None:
    specs = sched.games(["ref", "x", "y"], 4, 2, seed=1, schedule="substitution")
    assert len(specs) == 2 * 2 * (1 + 4)
    for candidate in ("x", "y"):
        for deal in range(2):
            games = [s for s in specs if s.deal == deal and candidate in s.lineup]
            (reference,) = [s for s in games if s.reference]
            assert reference.seats == ("ref",) * 4
            others = [s for s in games if not s.reference]
            assert [s.seats.index(candidate) for s in others] == [0, 1, 2, 3]
            assert all(
                s.seats.count("ref") == 3 and s.rotation == s.seats.index(candidate) for s in others
            )
            assert len({s.seed for s in games}) == 1
    with pytest.raises(ValueError):
        sched.games(["ref"], 4, 1, seed=1, schedule="substitution")
    with pytest.raises(ValueError):
        sched.games(["ref", "ref"], 4, 1, seed=1, schedule="substitution")


def fake_results(
    specs: list[sched.GameSpec],
    score: dict[str, int],
    seat_bonus: int = 0,
    after_bonus: dict[tuple[str, str], int] | None = None,
    noise: float = 0.0,
    seed: int = 0,
) -> list[GameResult]:
    """Games with made-up penalties: a bot's own level, + seat_bonus × seat, + a bonus
    for sitting right after a given bot, + noise per deal and seat (shared by every game
    of the deal: its luck)."""
    rng = random.Random(seed)
    luck: dict[tuple[int, int], float] = {}
    out = []
    for spec in specs:
        scores = []
        for seat, bot in enumerate(spec.seats):
            key = (spec.deal, seat)
            if key not in luck:
                luck[key] = rng.gauss(0, noise) if noise else 0.0
            before = spec.seats[seat - 1]
            bonus = (after_bonus or {}).get((bot, before), 0)
            scores.append(round(score[bot] + seat_bonus * seat + bonus + luck[key]))
        out.append(GameResult(spec, scores, [], "h", 1, "inprocess"))
    return out


def test_substitution_differences_are_paired_seat_by_seat() -> None:
    specs = sched.games(["ref", "x", "y"], 4, 5, seed=1, schedule="substitution")
    # seat luck is large and shared by every game of a deal: it cancels seat by seat
    results = fake_results(specs, {"ref": 50, "x": 40, "y": 65}, seat_bonus=7, noise=30, seed=2)
    diffs = substitution_differences(results)
    assert diffs["x"] == pytest.approx(dict.fromkeys(range(5), -10.0), abs=0.5)
    assert diffs["y"] == pytest.approx(dict.fromkeys(range(5), 15.0), abs=0.5)
    pairs = {(p.a, p.b): p for p in substitution_pairs(results, seed=1)}
    assert pairs[("x", "ref")].mean_difference == pytest.approx(-10, abs=0.5)
    assert pairs[("y", "ref")].mean_difference == pytest.approx(15, abs=0.5)
    assert pairs[("x", "y")].mean_difference == pytest.approx(-25, abs=0.5)
    assert pairs[("x", "y")].deal_sets == 5
    # a deal set not played whole is left out
    assert 4 not in substitution_differences(results[:-1])["y"]


def test_a_reference_mean_is_its_own_games_only() -> None:
    """A candidate that feeds the references beside it (they score 40 less there) must
    not move the reference's mean: it comes from the reference's own games."""
    specs = sched.games(["ref", "x"], 4, 6, seed=1, schedule="substitution")
    results = fake_results(specs, {"ref": 50, "x": 40}, noise=10, seed=3)
    for r in results:
        if not r.spec.reference:
            r.scores = [
                s - 40 if b == "ref" else s for s, b in zip(r.scores, r.spec.seats, strict=True)
            ]
    rows = {(s.bot, s.role): s for s in substitution_bot_stats(results, seed=1)}
    assert set(rows) == {("ref", "reference"), ("x", "candidate")}
    ref, x = rows[("ref", "reference")], rows[("x", "candidate")]
    assert ref.mean_penalty == pytest.approx(50, abs=5)  # mixed in, it would be about 20
    assert (ref.games, ref.seat_games, ref.deal_sets) == (6, 24, 6)
    assert (x.games, x.seat_games, x.deal_sets) == (24, 24, 6)
    assert x.mean_penalty == pytest.approx(40, abs=5)


@settings(deadline=None)  # a loaded machine's pauses are not the test's
@given(st.permutations(["a", "b"]), st.sampled_from([2, 3, 4]), st.integers(0, 2**32))
def test_the_mutual_substitution_is_the_same_games_whichever_bot_is_named_first(
    named: list[str], seats: int, seed: int
) -> None:
    specs = sched.games(named, seats, 3, seed, sched.MUTUAL_SUBSTITUTION)
    assert specs == sched.games(["a", "b"], seats, 3, seed, sched.MUTUAL_SUBSTITUTION)
    assert len(specs) == 3 * 2 * (1 + seats)
    for deal in range(3):
        for family, (reference, candidate) in enumerate([("a", "b"), ("b", "a")]):
            games = [s for s in specs if s.deal == deal and s.order == family]
            assert games[0].reference and games[0].seats == (reference,) * seats
            assert [s.seats.index(candidate) for s in games[1:]] == list(range(seats))
            assert all(s.seats.count(reference) == seats - 1 for s in games[1:])
    with pytest.raises(ValueError):
        sched.games(["a", "b", "c"], seats, 1, seed, sched.MUTUAL_SUBSTITUTION)


@settings(deadline=None)  # a loaded machine's pauses are not the test's
@given(st.integers(0, 2**32), st.sampled_from([2, 4]))
def test_mutual_differences_negate_exactly_when_the_names_swap(seed: int, seats: int) -> None:
    specs = sched.games(["a", "b"], seats, 4, 1, sched.MUTUAL_SUBSTITUTION)
    results = fake_results(specs, {"a": 37, "b": 41}, seat_bonus=3, noise=25.3, seed=seed)
    there, back = mutual_differences(results, "a", "b"), mutual_differences(results, "b", "a")
    assert list(there) == list(back) == [0, 1, 2, 3]
    assert all(there[d] == -back[d] for d in there)
    assert sum(there.values()) / 4 == pytest.approx(-4, abs=1e-9)  # no luck: a 4 better


def test_the_order_spread_finds_an_order_effect_and_only_a_real_one() -> None:
    specs = sched.games(["a", "b", "c", "d"], 4, 30, seed=5)
    level = {"a": 100, "b": 100, "c": 100, "d": 100}
    plain = fake_results(specs, level, noise=20, seed=1)
    assert [o.significant for o in order_spreads(plain, seed=1)] == [False] * 6
    # sitting right after d is worth 30 points to a: a - b now depends on the order
    effect = fake_results(specs, level, after_bonus={("a", "d"): -30}, noise=20, seed=1)
    spreads = {(o.a, o.b): o for o in order_spreads(effect, seed=1)}
    assert spreads[("a", "b")].significant and spreads[("a", "b")].spread > 20
    assert not spreads[("b", "c")].significant
