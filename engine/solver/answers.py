"""The solver's public functions: best_selection, can_lay, missing_cards, analyse."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.cards import JOKER_RANK, Card
from engine.errors import InvalidActionError
from engine.rulesets import PRESETS, RuleSet

from .best_search import search_best
from .best_so_far import BestSoFar, FoundOne
from .card_ids import KIND_IDS, HandIds, hand_ids
from .cost_search import CostSearch
from .meld_building import selection_of
from .planes import hand_planes, parse_hand, rank_count, with_card
from .tables import ContractShape, RuleTables, contract_shape, rule_tables
from .values import Analysis, Selection


def best_and_planes(
    hand: Sequence[Card], tables: RuleTables, shape: ContractShape
) -> tuple[Selection | None, tuple[int, int, int, int], int]:
    """The best selection (or None), and the hand's planes and jokers for what follows."""
    held1, held2, held3, held4, joker_count, rank_naturals, rank_suits = parse_hand(hand)
    best_so_far = BestSoFar(tables, shape, hand, joker_count, held2 != 0)
    search_best([best_so_far], [], held1, held2, held3, held4, rank_naturals, rank_suits)
    best = None if best_so_far.best_chosen is None else selection_of(best_so_far)
    return best, (held1, held2, held3, held4), joker_count


def best_selection(hand: Sequence[Card], rules: RuleSet, round_number: int) -> Selection | None:
    """The selection the engine lays for this hand, or None if the contract is out of reach."""
    tables = rule_tables(rules)
    return best_and_planes(hand, tables, contract_shape(tables, round_number))[0]


#: the card type of a joker in best_selections_without (a natural's is its kind), and
#: the training environment's (clients/training/actions.py)
JOKER_TYPE: Final = 52


def best_selections_without(
    hand: Sequence[Card], rules: RuleSet, round_number: int, types: Sequence[int]
) -> list[Selection | None]:
    """For each card type of ``types`` (a natural's kind ``suit * 13 + rank - 1``, or
    :data:`JOKER_TYPE`), best_selection of the hand without every copy of that type: the
    same answers, by one branch and bound over the hand for every natural type (a best
    so far each: best_search.py, run_candidates.py) and a search of the hand less its
    jokers."""
    tables = rule_tables(rules)
    shape = contract_shape(tables, round_number)
    held1, held2, held3, held4, joker_count, rank_naturals, rank_suits = parse_hand(hand)
    natural_ids, jokers, by_id = hand_ids(hand)
    jokers.sort()
    found: dict[int, BestSoFar] = {}
    kinds: list[int] = []
    bests: list[BestSoFar] = []
    for t in types:
        if t in found:
            continue
        if t == JOKER_TYPE and joker_count:
            best_so_far = BestSoFar(tables, shape, (), 0, held2 != 0)
            best_so_far.ids = HandIds(natural_ids, [], tables.decks, held2 != 0, by_id)
            search_best([best_so_far], [], held1, held2, held3, held4, rank_naturals, rank_suits)
        else:
            b = 0 if t == JOKER_TYPE else 1 << t
            twins = held2 & ~b != 0
            best_so_far = BestSoFar(tables, shape, (), joker_count, twins)
            rest = natural_ids & ~KIND_IDS[t] if b else natural_ids
            best_so_far.ids = HandIds(rest, list(jokers), tables.decks, twins, by_id)
            kinds.append(t)
            bests.append(best_so_far)
        found[t] = best_so_far
    if bests:
        search_best(bests, kinds, held1, held2, held3, held4, rank_naturals, rank_suits)
    # Types often share a best (the tree hands one leaf to several): its melds take the
    # same ids from the hand less t as from the whole hand when t is not held or no set
    # of the leaf has t's rank (runs never take t), so those share one Selection.
    answers: dict[int, Selection | None] = {}
    shared: list[tuple[BestSoFar, Selection]] = []
    for t, best_so_far in found.items():
        chosen = best_so_far.best_chosen
        if chosen is None:
            answers[t] = None
            continue
        alike = not held1 >> t & 1
        if not alike:
            r = t % 13 + 1
            alike = True
            for d in chosen:
                if not d[0] and d[2] == r:
                    alike = False
        selection: Selection | None = None
        if alike:
            for other, made in shared:
                if (
                    other.best_chosen is chosen
                    and other.best_jokers == best_so_far.best_jokers
                    and other.twins == best_so_far.twins
                ):
                    selection = made
                    break
        if selection is None:
            selection = selection_of(best_so_far)
            if alike:
                shared.append((best_so_far, selection))
        answers[t] = selection
    return [answers[t] for t in types]


def outs_of(cost_search: CostSearch, missing: int) -> tuple[tuple[int, int], ...]:
    """Kinds from the rest of the deck after which one card fewer is missing."""
    tables = cost_search.tables
    out: list[tuple[int, int]] = []
    cands = cost_search.cands
    while cands:
        low = cands & -cands
        cands ^= low
        bit = low.bit_length() - 1
        kind = (0, -1) if bit == 0 else (bit >> 2, bit & 3)
        if cost_search.sure & low:
            out.append(kind)
            continue
        rank, suit = kind
        if rank == JOKER_RANK:
            if cost_search.rest_jokers <= 0:
                continue
            held = cost_search.held
            joker_count = cost_search.joker_count + 1
        else:
            k = suit * 13 + rank - 1
            if cost_search.rest_count(k) <= 0:
                continue
            got = with_card(cost_search.held, k)
            if got is None:
                continue
            held = got
            joker_count = cost_search.joker_count
        if missing == 1:
            if feasible_planes(tables, cost_search.shape, held, joker_count):
                out.append(kind)
            continue
        probe = CostSearch(tables, cost_search.shape, held, joker_count, missing - 1, False, True)
        probe.run()
        if probe.best <= missing - 1:
            out.append(kind)
    return tuple(out)


def feasible_planes(
    tables: RuleTables, shape: ContractShape, held: tuple[int, int, int, int], joker_count: int
) -> bool:
    """can_lay on planes (no physical cards needed: the search stops before ids)."""
    held1, held2, held3, held4 = held
    rank_naturals = [0] * 14
    rank_suits = [0] * 14
    for r in range(1, 14):
        rank_suits[r] = rank_count(r, held1, 0, 0, 0, True)
        rank_naturals[r] = rank_count(r, held1, held2, held3, held4, False)
    best_so_far = BestSoFar(tables, shape, (), joker_count, held2 != 0)
    best_so_far.first = True
    try:
        search_best([best_so_far], [], held1, held2, held3, held4, rank_naturals, rank_suits)
    except FoundOne:
        return True
    return False


def can_lay(hand: Sequence[Card], rules: RuleSet, round_number: int) -> bool:
    """Whether the hand can lay its round's contract (feasibility only)."""
    tables = rule_tables(rules)
    shape = contract_shape(tables, round_number)
    held1, held2, held3, held4, joker_count, rank_naturals, rank_suits = parse_hand(hand)
    best_so_far = BestSoFar(tables, shape, hand, joker_count, held2 != 0)
    best_so_far.first = True
    try:
        search_best([best_so_far], [], held1, held2, held3, held4, rank_naturals, rank_suits)
    except FoundOne:
        return True
    return False


def missing_cards(
    hand: Sequence[Card], rules: RuleSet, round_number: int, limit: int = 4
) -> int | None:
    """Fewest cards from the rest of the deck that make the contract layable.

    0 when the hand can lay it now; None when more than ``limit`` are needed.
    """
    if limit < 0:
        raise InvalidActionError("limit must be >= 0")
    if can_lay(hand, rules, round_number):
        return 0
    if limit == 0:
        return None
    tables = rule_tables(rules)
    shape = contract_shape(tables, round_number)
    held1, held2, held3, held4, joker_count = hand_planes(hand)
    cost_search = CostSearch(
        tables, shape, (held1, held2, held3, held4), joker_count, limit, False, False
    )
    cost_search.best = limit + 1
    cost_search.run()
    return cost_search.best if cost_search.best <= limit else None


def analyse(hand: Sequence[Card], rules: RuleSet, round_number: int, limit: int = 4) -> Analysis:
    """Everything the solver can say about a hand and its round's contract.

    ``outs`` is empty when the hand can already lay (nothing lowers 0) and when
    more than ``limit`` cards are missing (the count itself is unknown).
    """
    if limit < 0:
        raise InvalidActionError("limit must be >= 0")
    # Best melds first: on a hand that lays its contract that search is the
    # answer, and on one that cannot it fails fast (a few us, against tens for
    # the cost search; measured in BENCHMARKS.md).
    tables = rule_tables(rules)
    shape = contract_shape(tables, round_number)
    best, held, joker_count = best_and_planes(hand, tables, shape)
    if best is not None:
        return Analysis(True, best, 0, ())
    # one search finds the cost and gathers the kinds every best leaf leaves open
    # (a better leaf clears what worse ones gathered)
    cost_search = CostSearch(tables, shape, held, joker_count, limit, True, False)
    cost_search.run()
    if cost_search.best > limit:
        return Analysis(False, None, None, ())
    return Analysis(False, None, cost_search.best, outs_of(cost_search, cost_search.best))


# the preset rule sets' tables, built once at import (a few ms each) rather than
# on some unlucky first call
for _preset in PRESETS.values():
    rule_tables(_preset)
