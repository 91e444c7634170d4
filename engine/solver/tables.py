"""What the solver derives from a rule set, built once and kept per rule set.

``RuleTables`` holds the rule set's numbers as the searches read them (penalties,
joker caps, set limits) and the tables both searches fill as hands ask (run
skeletons, splits of a rank over several sets); ``ContractShape`` is one round's
contract as requirement lists.  Everything here is a function of the rule set
and a few small numbers, never of a whole hand.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from engine.cards import JOKER_RANK
from engine.errors import InvalidActionError
from engine.rulesets import MeldKind, RuleSet

if TYPE_CHECKING:  # annotations only: those modules build on this one
    from .cost_leaves import Place
    from .skeletons import Skeleton


# "no limit" for joker caps and set sizes; larger than any hand or deck can use
NO_LIMIT: Final = 99


class ContractShape:
    __slots__ = ("group", "grouped", "is_run", "n", "run_idx", "run_len", "set_idx", "set_size")

    def __init__(self, reqs: Sequence[tuple[bool, int]]) -> None:
        self.n = len(reqs)
        self.is_run = tuple(is_run for is_run, _ in reqs)
        groups: dict[tuple[bool, int], list[int]] = {}
        for i, req in enumerate(reqs):
            groups.setdefault(req, []).append(i)
        # group[slot]: the melds that may fill a slot (its identical requirements)
        self.group = tuple(tuple(groups[req]) for req in reqs)
        self.grouped = any(len(g) > 1 for g in groups.values())
        # runs are searched first: a run pins exact kinds, a set only a rank
        self.run_idx = tuple(i for i, (is_run, _) in enumerate(reqs) if is_run)
        self.run_len = tuple(size for is_run, size in reqs if is_run)
        self.set_idx = tuple(i for i, (is_run, _) in enumerate(reqs) if not is_run)
        self.set_size = tuple(size for is_run, size in reqs if not is_run)


class RuleTables:
    """Everything the solver derives from a rule set, built once per RuleSet object."""

    __slots__ = (
        "deck_jokers",
        "decks",
        "distinct",
        "exact",
        "group_options",
        "joker_penalty",
        "max_jokers",
        "min_naturals",
        "penalty",
        "rank_layouts",
        "rounds",
        "rules",
        "run_points",
        "run_skeletons",
        "set_max",
        "skeletons",
        "top",
    )

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.exact = rules.exact_contract_sizes
        self.set_max = NO_LIMIT if rules.set_max is None else rules.set_max
        self.distinct = rules.set_distinct_suits
        self.top = rules.highest_run_rank
        self.max_jokers = (
            NO_LIMIT if rules.max_jokers_per_meld is None else rules.max_jokers_per_meld
        )
        self.min_naturals = rules.min_naturals_per_meld
        self.joker_penalty = rules.penalty_of_rank(JOKER_RANK)
        self.decks = rules.decks
        self.deck_jokers = rules.jokers
        # pen[rank] for ranks 1..13, pen[14] is an ace standing high
        penalty = [rules.penalty_of_rank(r) for r in range(14)] + [rules.penalty_of_rank(1)]
        penalty[0] = self.joker_penalty
        self.penalty = penalty
        # points of a run skeleton, indexed by its position mask (bits 1..14)
        run_points = [0] * (1 << 15)
        for m in range(2, 1 << 15, 2):
            low = m & -m
            run_points[m] = run_points[m ^ low] + penalty[low.bit_length() - 1]
        self.run_points = run_points
        # tables of the cost search filled as hands ask for them: they depend on
        # the rule set and a handful of small counts, never on the rest of a hand
        self.group_options: dict[int, list[tuple[int, int]]] = {}
        self.skeletons: dict[int, list[Skeleton]] = {}
        self.run_skeletons: dict[int, list[tuple[int, int, int]]] = {}  # kept_run_skeletons
        self.rank_layouts: dict[
            tuple[int, tuple[int, ...], tuple[int, ...]], list[list[Place]]
        ] = {}
        self.rounds = tuple(
            ContractShape(tuple((m.kind is MeldKind.RUN, m.size) for m in c.melds))
            for c in rules.contracts
        )


# run skeletons kept per rule set, for each of the two searches (CostSearch.suit_skels,
# kept_run_skeletons): lists of about seven small objects on average, so a full
# table is under 10 MB; emptied when full
SKELETONS_KEPT: Final = 8_000


_TABLES: OrderedDict[str, RuleTables] = OrderedDict()


TABLES_KEPT: Final = 64


def rule_tables(rules: RuleSet) -> RuleTables:
    # Keyed by the rule set's stable hash (computed once, when the rule set is
    # made), not by the object: a service decodes a new RuleSet object with every
    # stored game, and equal rule sets must share their tables.  Least recently
    # used first out, so a few custom rule sets never evict the presets' tables.
    # (bots think in threads: another thread may evict between two steps here, so
    # a KeyError from the bookkeeping is harmless, never a reason to fail)
    # (try/except, not contextlib.suppress: this runs on every solver call)
    key = rules.hash
    tables = _TABLES.get(key)
    if tables is None:
        tables = _TABLES[key] = RuleTables(rules)
        if len(_TABLES) > TABLES_KEPT:
            try:  # noqa: SIM105 (see above)
                _TABLES.popitem(last=False)
            except KeyError:
                pass
    elif len(_TABLES) > 1:
        try:  # noqa: SIM105 (see above)
            _TABLES.move_to_end(key)
        except KeyError:
            pass
    return tables


def contract_shape(tables: RuleTables, round_number: int) -> ContractShape:
    if not 1 <= round_number <= len(tables.rounds):
        raise InvalidActionError(
            f"rule set {tables.rules.name!r} has rounds 1..{len(tables.rounds)}, not {round_number}"
        )
    return tables.rounds[round_number - 1]
