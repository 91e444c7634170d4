"""The contract solver: named rule traps, tie-breaks, and brute-force properties.

The property tests compare engine.solver with references written here that
know nothing of its search: they enumerate every way to give each card to a
requirement's meld (or leave it in hand) and let engine.melds judge the melds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from itertools import combinations, combinations_with_replacement
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cards import Card, card, cards_from_codes, full_deck
from engine.errors import IllegalActionError, InvalidActionError
from engine.melds import build_run, build_set
from engine.rulesets import (
    CONTRACT,
    WHISKERTRAIL,
    Contract,
    MeldKind,
    MeldRequirement,
    RuleSet,
)
from engine.solver import Analysis, Selection, analyse, best_selection, can_lay, missing_cards

SET, RUN = MeldKind.SET, MeldKind.RUN


def hand_of(text: str, rules: RuleSet) -> list[Card]:
    return cards_from_codes(text.split(), rules.decks, rules.jokers)


def codes(meld_cards: Sequence[Card]) -> list[str]:
    return [c.code for c in meld_cards]


def laid_ids(hand: Sequence[Card], rules: RuleSet, rnd: int) -> list[int]:
    sel = best_selection(hand, rules, rnd)
    assert sel is not None
    return sorted(c.id for m in sel.melds for c in m.cards)


def custom(
    base: RuleSet, name: str, *contracts: Sequence[tuple[MeldKind, int]], **kw: Any
) -> RuleSet:
    """A rule set like ``base`` with its own contracts (and other fields)."""
    cs = tuple(
        Contract(f"{name} {i}", tuple(MeldRequirement(k, n) for k, n in c), deal=10)
        for i, c in enumerate(contracts, start=1)
    )
    return dataclasses.replace(base, name=name, contracts=cs, **kw)


# --------------------------------------------------------------------------- the traps
def test_greedy_trap_8h_belongs_to_the_run() -> None:
    rules = WHISKERTRAIL
    hand = hand_of("3H 4H 5H 6H 7H 8H 8S 8D 8C KC 2D", rules)
    sel = best_selection(hand, rules, 7)  # set of 3 + run of 6
    assert sel is not None
    the_set, the_run = sel.melds
    assert sorted(codes(the_set.cards)) == ["8C", "8D", "8S"]
    assert codes(the_run.cards) == ["3H", "4H", "5H", "6H", "7H", "8H"]
    assert sel.points == 57


def test_whiskertrail_aces_are_low_only() -> None:
    rules = WHISKERTRAIL
    assert best_selection(hand_of("TS JS QS KS AS 2D 5C 9H 4D 7C", rules), rules, 2) is None
    assert not can_lay(hand_of("TS JS QS KS AS 2D 5C 9H 4D 7C", rules), rules, 2)
    low = best_selection(hand_of("AS 2S 3S 4S 5S 9D 9H KC QC 7C", rules), rules, 2)
    assert low is not None
    assert low.melds[0].rank == 1 and codes(low.melds[0].cards) == ["AS", "2S", "3S", "4S", "5S"]


def test_contract_ace_high() -> None:
    rules = CONTRACT
    sel = best_selection(hand_of("JH QH KH AH 2C 3C 4C 5C 9D 7S", rules), rules, 3)
    assert sel is not None
    runs = {m.suit: m for m in sel.melds}
    assert codes(runs[2].cards) == ["JH", "QH", "KH", "AH"]
    assert runs[2].rank == 11 and runs[2].high == 14
    assert sel.points == 59


def test_no_wrap_around_the_king() -> None:
    rules = CONTRACT
    hand = hand_of("QH KH AH 2H 3H 4C 5C 6C 7C 9D", rules)
    assert best_selection(hand, rules, 3) is None
    assert not can_lay(hand, rules, 3)


def test_whiskertrail_one_joker_per_meld() -> None:
    rules = WHISKERTRAIL
    hand = hand_of("7S 7H JK JK 9C 2D 4H 6S KD QC", rules)
    assert best_selection(hand, rules, 1) is None  # 7S 7H JK + 9C JK JK is illegal
    two = best_selection(hand_of("7S 7H JK 9C 9D JK 4H 6S KD QC", rules), rules, 1)
    assert two is not None
    assert [m.jokers for m in two.melds] == [1, 1]
    assert two.points == 82


def test_contract_any_number_of_jokers_but_two_naturals() -> None:
    rules = CONTRACT
    sel = best_selection(hand_of("5H 9H JK JK JK 2C 3D 8S KD QC", rules), rules, 2)
    # round 2 is a group and a sequence: no group here, so nothing
    assert sel is None
    run_only = custom(CONTRACT, "one-sequence", [(RUN, 4)])
    got = best_selection(hand_of("5H 9H JK JK JK 2C", run_only), run_only, 1)
    assert got is not None
    run = got.melds[0]
    # 5 _ _ _ 9 with three jokers: two naturals, lowest start is 5
    assert run.rank == 5 and codes(run.cards) == ["5H", "JK", "JK", "JK", "9H"]


def test_contract_sets_are_minimums_and_runs_grow() -> None:
    rules = CONTRACT
    sel = best_selection(hand_of("3C 4C 5C 6C 7C 8C 9C 9D 9H 9S KD 2H", rules), rules, 2)
    assert sel is not None
    group, seq = sel.melds
    # 9C fits the group of four or the top of the run: the same cards either
    # way, and the split rule gives the first meld (the group) the smaller ids
    assert sorted(codes(group.cards)) == ["9C", "9D", "9H", "9S"]
    assert codes(seq.cards) == ["3C", "4C", "5C", "6C", "7C", "8C"]
    assert sel.points == 36 + 33
    runs_only = best_selection(hand_of("3C 4C 5C 6C 7C 8C 9C 9D 2H 5S", rules), rules, 3)
    assert runs_only is None  # two sequences need eight cards in runs


def test_whiskertrail_exact_sizes_keep_the_best_window() -> None:
    rules = WHISKERTRAIL
    sel = best_selection(hand_of("4D 5D 6D 7D 8D 9D TD 2C 3H KS", rules), rules, 2)
    assert sel is not None
    assert codes(sel.melds[0].cards) == ["6D", "7D", "8D", "9D", "TD"]


def test_joker_takes_the_lowest_start() -> None:
    rules = WHISKERTRAIL
    sel = best_selection(hand_of("5H 6H 7H 8H JK 2C 9D KS QC 3D", rules), rules, 2)
    assert sel is not None
    run = sel.melds[0]
    assert run.rank == 4 and run.cards[0].is_joker  # JK as 4H, not 9H
    assert run == build_run(run.cards, rules, 5)


def test_two_sets_of_four_from_eight_twins() -> None:
    rules = WHISKERTRAIL
    hand = hand_of("8C 8C 8D 8D 8H 8H 8S 8S 2C KD", rules)
    sel = best_selection(hand, rules, 6)
    assert sel is not None and sel.points == 64
    first, second = sel.melds
    # the split rule: the first meld holds the smallest ids
    assert [c.id for c in first.cards] < [c.id for c in second.cards]
    assert {c.id for c in first.cards} | {c.id for c in second.cards} == {
        c.id for c in hand if c.rank == 8
    }


# --------------------------------------------------------------------------- tie-breaks
def test_tie_break_fewest_jokers() -> None:
    # contract jokers and aces both count 15: a full group of aces lays as
    # many points with or without the joker, and the joker stays in hand
    rules = CONTRACT
    hand = hand_of("AC AD AH AS AC AD AH AS JK 4C", rules)
    sel = best_selection(hand, rules, 1)
    assert sel is not None
    assert sel.points == 120 and sel.jokers == 0
    # a custom rule set where a joker is worth a face card
    tenner = custom(WHISKERTRAIL, "tenner", [(SET, 3)], joker_penalty=10)
    got = best_selection(hand_of("KC KD KH JK 2S", tenner), tenner, 1)
    assert got is not None and got.points == 30 and got.jokers == 0
    assert sorted(codes(got.melds[0].cards)) == ["KC", "KD", "KH"]


def test_tie_break_smallest_ids() -> None:
    rules = WHISKERTRAIL
    # three of four sevens make the set: 7C 7D 7H have the smallest ids
    hand = hand_of("7S 7H 7D 7C 9C 9D 9H 2S 4D KH", rules)
    sel = best_selection(hand, rules, 1)
    assert sel is not None
    sevens = next(m for m in sel.melds if m.rank == 7)
    assert sorted(codes(sevens.cards)) == ["7C", "7D", "7H"]
    # twins: the deck-0 copy is the smaller id
    twin = [card(7 - 1 + 13 * 2, 2), card(52 + 7 - 1 + 13 * 2, 2)]  # 7H of both decks
    hand2 = [*twin, *hand_of("7C 7D 3S 4S 5S", rules)]
    ids = laid_ids(hand2, custom(WHISKERTRAIL, "one-set", [(SET, 3)]), 1)
    assert twin[0].id in ids and twin[1].id not in ids


def test_tie_break_between_run_and_set_for_a_shared_card() -> None:
    # JD can sit in the run 8D-9D-TD-JD (the group then takes the joker) or in
    # the group JC-JD-JS (the run then takes the joker): same cards, same
    # points; the split rule gives the first meld (the group) the smaller ids
    rules = CONTRACT
    hand = hand_of("JC JD JS 8D 9D TD JK 2H 4S 6C", rules)
    sel = best_selection(hand, rules, 2)
    assert sel is not None
    group, run = sel.melds
    assert sorted(codes(group.cards)) == ["JC", "JD", "JS"]
    assert run.jokers == 1 and run.rank == 7  # joker placed low, as 7D


def test_selection_ignores_hand_order() -> None:
    rules = CONTRACT
    hand = hand_of("JK TH 9H JH 9C 8H JK 7H 3H TH 9D 6H 3D", rules)
    a = best_selection(hand, rules, 5)
    b = best_selection(list(reversed(hand)), rules, 5)
    assert a == b and a is not None


def test_bad_round_is_invalid() -> None:
    hand = hand_of("2C 3C 4C", WHISKERTRAIL)
    for fn in (best_selection, can_lay, missing_cards, analyse):
        with pytest.raises(InvalidActionError):
            fn(hand, WHISKERTRAIL, 0)
        with pytest.raises(InvalidActionError):
            fn(hand, WHISKERTRAIL, 9)


def test_answers_are_values() -> None:
    """Analysis and Selection compare and hash by their fields (both forms of the
    solver: the compiled one builds them as native classes)."""
    rules = WHISKERTRAIL
    hand = hand_of("7S 7H 7D 9C 9D 9H 2S 4H 6S KD", rules)
    first, again = analyse(hand, rules, 1), analyse(list(reversed(hand)), rules, 1)
    assert first == again and hash(first) == hash(again)
    assert first.best is not None and first.best == again.best
    assert hash(first.best) == hash(again.best)
    assert first != Analysis(True, first.best, 1, ())
    assert first.best != Selection(first.best.melds, first.best.points + 1, first.best.jokers)
    assert first != first.best and first.best != first
    assert len({first, again, Analysis(False, None, None, ())}) == 2
    assert repr(first).startswith("Analysis(feasible=True, best=Selection(melds=(")
    assert repr(first).endswith(f"points={first.best.points}, jokers=0), missing=0, outs=())")


def test_missing_and_outs_small() -> None:
    rules = WHISKERTRAIL
    assert missing_cards(hand_of("7S 7H 9C 9D 2S 4H 6S KD QC 3D", rules), rules, 1) == 2
    hand = hand_of("7S 7H 9C 9D JK 2S 4H 6S KD QC", rules)
    report = analyse(hand, rules, 1)
    assert report == Analysis(False, None, 1, report.outs)
    # a third seven, a third nine, or a joker completes a set
    assert set(report.outs) == {(7, s) for s in range(4)} | {(9, s) for s in range(4)} | {(0, -1)}
    assert missing_cards(hand, rules, 1, limit=0) is None
    assert analyse(hand, rules, 1, limit=0) == Analysis(False, None, None, ())


def test_missing_respects_the_rest_of_the_deck() -> None:
    # one deck, no jokers: the set 7C 7D 7H would leave the run 5H 6H _ 8H
    # waiting for a 7H that no longer exists; 7S for the set is the one card
    one = custom(
        WHISKERTRAIL,
        "one-deck",
        [(SET, 3), (RUN, 4)],
        [(RUN, 4), (RUN, 4)],
        decks=1,
        jokers=0,
        max_players=2,
    )
    hand = hand_of("7C 7D 7H 5H 6H 8H 9H", one)
    assert missing_cards(hand, one, 1) == 1
    assert analyse(hand, one, 1).outs == ((7, 3),)
    assert missing_cards(hand_of("4H 5H 7H 8H 9C TC JC", one), one, 2) == 2


# --------------------------------------------------------------------------- references
def _valid(cards: Sequence[Card], kind: MeldKind, size: int, rules: RuleSet) -> bool:
    if len(cards) < size:
        return False
    exact = size if rules.exact_contract_sizes else None
    try:
        if kind is SET:
            build_set(cards, rules, exact)
        else:
            build_run(cards, rules, exact)
    except (IllegalActionError, InvalidActionError):
        return False
    return True


def ref_best(hand: Sequence[Card], rules: RuleSet, rnd: int) -> tuple[int, int, list[int]] | None:
    """(points, jokers, sorted ids) of the best selection, by enumeration."""
    reqs = rules.contract(rnd).melds
    n = len(hand)
    melds: list[list[frozenset[int]]] = []
    for req in reqs:
        found = []
        for size in range(3, n + 1):
            for combo in combinations(range(n), size):
                if _valid([hand[i] for i in combo], req.kind, req.size, rules):
                    found.append(frozenset(combo))
        melds.append(found)
    best: tuple[int, int, list[int]] | None = None

    def walk(i: int, used: frozenset[int]) -> None:
        nonlocal best
        if i == len(reqs):
            cards = [hand[j] for j in used]
            key = (
                -sum(rules.penalty(c) for c in cards),
                sum(1 for c in cards if c.is_joker),
                sorted(c.id for c in cards),
            )
            if best is None or key < best:
                best = key
            return
        for m in melds[i]:
            if not m & used:
                walk(i + 1, used | m)

    walk(0, frozenset())
    if best is None:
        return None
    return (-best[0], best[1], best[2])


def ref_missing(hand: Sequence[Card], rules: RuleSet, rnd: int, most: int = 2) -> int | None:
    """Fewest cards (at most ``most``) from the rest of the deck that make the
    contract layable: every meld is a subset of the hand plus added cards."""
    held = {c.id for c in hand}
    rest: dict[tuple[int, int], list[Card]] = {}
    for c in full_deck(rules.decks, rules.jokers):
        if c.id not in held:
            rest.setdefault(c.kind, []).append(c)
    reqs = rules.contract(rnd).melds
    n = len(hand)
    cands: list[list[tuple[frozenset[int], tuple[tuple[int, int], ...]]]] = [[] for _ in reqs]
    for size in range(n + 1):
        for combo in combinations(range(n), size):
            part = [hand[i] for i in combo]
            nat = [c for c in part if not c.is_joker]
            # added naturals must share the part's rank or suit to stand a chance
            kinds = [
                k
                for k in rest
                if k[0] == 0
                or not nat
                or all(c.rank == k[0] for c in nat)
                or all(c.suit == k[1] for c in nat)
            ]
            for extra in range(most + 1):
                if size + extra < 3:
                    continue
                for add in combinations_with_replacement(kinds, extra):
                    if any(add.count(k) > len(rest[k]) for k in add):
                        continue
                    cards = part + [rest[k][add[:i].count(k)] for i, k in enumerate(add)]
                    for ri, req in enumerate(reqs):
                        if _valid(cards, req.kind, req.size, rules):
                            cands[ri].append((frozenset(combo), add))
    best = most + 1

    def walk(i: int, used: frozenset[int], added: tuple[tuple[int, int], ...]) -> None:
        nonlocal best
        if len(added) >= best:
            return
        if i == len(reqs):
            if all(added.count(k) <= len(rest[k]) for k in added):
                best = len(added)
            return
        for part, add in cands[i]:
            if not part & used:
                walk(i + 1, used | part, added + add)

    walk(0, frozenset(), ())
    return best if best <= most else None


# --------------------------------------------------------------------------- properties
SMALL: list[list[tuple[MeldKind, int]]] = [[(SET, 3)], [(RUN, 4)], [(SET, 3), (RUN, 4)]]
RULESETS = [
    WHISKERTRAIL,
    CONTRACT,
    custom(WHISKERTRAIL, "wt-small", *SMALL, [(RUN, 4), (RUN, 4)]),
    custom(CONTRACT, "ct-small", *SMALL, [(SET, 3), (SET, 3)]),
    custom(
        WHISKERTRAIL, "one-deck", *SMALL, [(RUN, 4), (RUN, 4)], decks=1, jokers=2, max_players=3
    ),
    custom(
        CONTRACT,
        "loose",
        *SMALL,
        exact_contract_sizes=False,
        set_max=None,
        set_distinct_suits=False,
        max_jokers_per_meld=2,
        joker_penalty=5,
    ),
]


@st.composite
def deals(draw: st.DrawFn, low: int = 6, high: int = 9) -> tuple[RuleSet, int, list[Card]]:
    rules = draw(st.sampled_from(RULESETS))
    rnd = draw(st.integers(1, min(3, rules.rounds)))
    suits = draw(st.lists(st.integers(0, 3), min_size=2, max_size=2, unique=True))
    lowest = draw(st.sampled_from([1, 2, 4, 6, 8, 9]))
    ranks = [(lowest + i - 1) % 13 + 1 for i in range(6)]  # 9..A wraps to include aces
    pool = [
        card(d * 52 + s * 13 + r - 1, rules.decks)
        for d in range(rules.decks)
        for s in suits
        for r in ranks
    ] + [card(rules.decks * 52 + j, rules.decks) for j in range(rules.jokers)]
    hand = draw(st.lists(st.sampled_from(pool), min_size=low, max_size=high, unique=True))
    return rules, rnd, hand


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deals())
def test_best_matches_brute_force(deal: tuple[RuleSet, int, list[Card]]) -> None:
    rules, rnd, hand = deal
    expected = ref_best(hand, rules, rnd)
    sel = best_selection(hand, rules, rnd)
    assert can_lay(hand, rules, rnd) == (expected is not None)
    if expected is None:
        assert sel is None
        return
    assert sel is not None
    got = (sel.points, sel.jokers, sorted(c.id for m in sel.melds for c in m.cards))
    assert got == expected
    for meld, req in zip(sel.melds, rules.contract(rnd).melds, strict=True):
        assert meld.kind is req.kind
        assert _valid(meld.cards, req.kind, req.size, rules)
        rebuilt = (build_set if req.kind is SET else build_run)(meld.cards, rules)
        assert rebuilt == meld  # joker positions by the lowest-start rule


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deals(low=5, high=7))
def test_missing_matches_brute_force(deal: tuple[RuleSet, int, list[Card]]) -> None:
    rules, rnd, hand = deal
    expected = ref_missing(hand, rules, rnd, most=2)
    got = missing_cards(hand, rules, rnd, limit=4)
    if expected is None:
        assert got is None or got >= 3
    else:
        assert got == expected
    report = analyse(hand, rules, rnd, limit=4)
    assert report.missing == got
    assert report.feasible == (got == 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deals(low=5, high=8))
def test_outs_lower_missing(deal: tuple[RuleSet, int, list[Card]]) -> None:
    rules, rnd, hand = deal
    report = analyse(hand, rules, rnd, limit=3)
    if report.missing in (None, 0):
        assert report.outs == ()
        return
    held = {c.id for c in hand}
    one_of_each: dict[tuple[int, int], Card] = {}
    for c in full_deck(rules.decks, rules.jokers):
        if c.id not in held:
            one_of_each.setdefault(c.kind, c)
    expected = sorted(
        kind
        for kind, c in one_of_each.items()
        if (m := missing_cards([*hand, c], rules, rnd, limit=3)) is not None and m < report.missing
    )
    assert list(report.outs) == expected


@given(st.sets(st.integers(0, 120), max_size=8), st.sets(st.integers(0, 120), max_size=8))
def test_id_masks_compare_like_sorted_lists(a: set[int], b: set[int]) -> None:
    # the solver compares selections' id lists as bit masks (rule 3)
    from engine.solver.card_ids import lex_less

    ma = sum(1 << i for i in a)
    mb = sum(1 << i for i in b)
    assert lex_less(ma, mb) == (sorted(a) < sorted(b))


def test_equal_rule_sets_share_the_solver_tables_however_many_objects() -> None:
    """A service decodes a new RuleSet object with every stored game: equal rule sets
    must not rebuild the tables (the load test's cliff above 64 games per process)."""
    from engine.solver import tables

    copies = [RuleSet.from_dict(CONTRACT.to_dict()) for _ in range(tables.TABLES_KEPT + 10)]
    assert len({id(c) for c in copies}) == len(copies)
    first = tables.rule_tables(copies[0])
    assert all(tables.rule_tables(c) is first for c in copies)
    # custom rule sets beyond the limit evict the least recently used, not the presets
    for n in range(tables.TABLES_KEPT + 5):
        custom = dataclasses.replace(CONTRACT, name=f"custom-{n}")
        tables.rule_tables(custom)
        tables.rule_tables(CONTRACT)
    assert tables.rule_tables(CONTRACT) is tables.rule_tables(RuleSet.from_dict(CONTRACT.to_dict()))
    assert len(tables._TABLES) <= tables.TABLES_KEPT
