"""Move generation: every legal action of a seat, canonical forms where choices are equivalent."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Final

from engine.actions import (
    Action,
    Discard,
    Draw,
    DrawSource,
    EndTurn,
    ExtraMeld,
    LayContract,
    LayOff,
    MeldSpec,
    SwapJoker,
)
from engine.cards import JOKER_RANK, MAX_DECKS, MAX_JOKERS, Card
from engine.game import claims
from engine.game.hands import hand_without
from engine.game.phase import CLAIM_PHASE, DRAW_PHASE, GAME_OVER
from engine.melds import layoff_ends
from engine.rulesets import MeldKind, RuleSet

if TYPE_CHECKING:
    from engine.game.state import GameState

# Enum members as module constants: Python 3.11 reads ``Enum.MEMBER`` through
# EnumType's ``__getattr__`` hook, ten times the cost of a global (the hot path).
_DISCARD: Final = DrawSource.DISCARD
_STOCK: Final = DrawSource.STOCK
_RUN: Final = MeldKind.RUN
_SET: Final = MeldKind.SET

_DRAW_STOCK = Draw(_STOCK)
_DRAW_DISCARD = Draw(_DISCARD)
_LAY_AUTO = LayContract()
_END_TURN = EndTurn()
# one Discard per card id, shared: actions are immutable values
_DISCARDS = tuple(Discard(i) for i in range(MAX_DECKS * 52 + MAX_JOKERS))


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Every legal action of ``seat`` now (:meth:`GameState.legal_actions`, which has
    checked the seat)."""
    phase = state.phase
    if phase is CLAIM_PHASE:
        return claims.legal_answers(state, seat)
    if phase is GAME_OVER or seat != state.current:
        return []
    if phase is DRAW_PHASE:
        out: list[Action] = []
        if state.stock_draw_allowed():
            out.append(_DRAW_STOCK)
        if state.rules.draw_from_discard and state.discards:
            out.append(_DRAW_DISCARD)
        return out
    return _play_actions(state, seat)


def _play_actions(state: GameState, seat: int) -> list[Action]:
    rules = state.rules
    hand = state.hands[seat]
    blocked = state.blocked_card
    out: list[Action] = []
    table = state.table
    if not state.opened[seat]:
        if _automatic_contract_legal(state, seat):
            out.append(_LAY_AUTO)
    else:
        if table and (rules.layoff_on_opening_turn or not state.laid_this_turn):
            # only a lay-off from a hand of two can leave the blocked card alone
            guard = blocked is not None and len(hand) == 2
            for c in hand:
                if guard and state.strands_blocked_card(hand_without(hand, c)):
                    continue
                cid = c.id
                for i, m in enumerate(table):
                    for end in layoff_ends(m, c, rules):
                        out.append(LayOff(cid, i, end))
        if rules.extra_melds:
            size = len(hand)
            for kind, cards in canonical_extra_melds(hand, rules):
                if (
                    blocked is not None
                    and size - len(cards) == 1
                    and state.strands_blocked_card([c for c in hand if c not in cards])
                ):
                    continue
                out.append(ExtraMeld(MeldSpec(kind, tuple(c.id for c in cards))))
    if rules.joker_swap and table:
        for i, m in enumerate(table):
            if m.kind is not _RUN:
                continue
            wanted: list[int] = []
            for k, held in enumerate(m.cards):
                if held.rank == JOKER_RANK:
                    position = m.rank + k
                    wanted.append(1 if position == 14 else position)
            if not wanted:
                continue
            for c in hand:
                if c.suit == m.suit and c.rank in wanted:
                    out.append(SwapJoker(c.id, i))
    if state.contract.discards:
        discard = _DISCARDS
        out += [discard[c.id] for c in hand if c.id != blocked]
    else:
        out.append(_END_TURN)
    return out


def _automatic_contract_legal(state: GameState, seat: int) -> bool:
    if not state.can_lay_contract(seat):
        return False
    if state.blocked_card is None:
        return True  # nothing can be stranded: no need for the solver's selection
    selection = state.automatic_selection(seat)
    if selection is None:
        return False
    used = {c.id for m in selection.melds for c in m.cards}
    return not state.strands_blocked_card([c for c in state.hands[seat] if c.id not in used])


def _split_stretches(positions: list[int]) -> list[list[int]]:
    stretches: list[list[int]] = []
    for p in positions:
        if stretches and stretches[-1][-1] == p - 1:
            stretches[-1].append(p)
        else:
            stretches.append([p])
    return stretches


def canonical_extra_melds(
    hand: Sequence[Card], rules: RuleSet
) -> list[tuple[MeldKind, tuple[Card, ...]]]:
    """The extra melds ``legal_actions`` lists for a hand (docs/DECISIONS.md, "Lists of
    legal actions"): per rank a set, per suit each stretch, with and without a joker."""
    naturals = [c for c in hand if c.rank != JOKER_RANK]
    joker: Card | None = None
    if rules.max_jokers_per_meld is None or rules.max_jokers_per_meld >= 1:
        joker = next((c for c in hand if c.rank == JOKER_RANK), None)
    min_nat = rules.min_naturals_per_meld
    out: list[tuple[MeldKind, tuple[Card, ...]]] = []
    by_rank: dict[int, list[Card]] = {}
    by_suit: dict[int, dict[int, Card]] = {}
    ace_high = rules.highest_run_rank == 14
    for c in naturals:
        by_rank.setdefault(c.rank, []).append(c)
        ranks = by_suit.setdefault(c.suit, {})
        if c.rank not in ranks:
            ranks[c.rank] = c
            if c.rank == 1 and ace_high:
                ranks[14] = c
    set_max = rules.set_max
    for rank in sorted(by_rank):
        group = by_rank[rank]
        if rules.set_distinct_suits:
            suits: set[int] = set()
            picked: list[Card] = []
            for c in group:
                if c.suit not in suits:
                    suits.add(c.suit)
                    picked.append(c)
            group = picked
        if set_max is not None:
            group = group[:set_max]
        n = len(group)
        if n < min_nat:
            continue
        if n >= rules.set_min:
            out.append((_SET, tuple(group)))
        if joker is not None and n + 1 >= rules.set_min and (set_max is None or n + 1 <= set_max):
            out.append((_SET, (*group, joker)))
    run_min = rules.run_min
    top = rules.highest_run_rank
    for suit in sorted(by_suit):
        ranks = by_suit[suit]
        stretches = _split_stretches(sorted(ranks))
        for s in stretches:
            size = len(s)
            if size < min_nat:
                continue
            if size >= run_min:
                if size <= 13:
                    out.append((_RUN, tuple(ranks[p] for p in s)))
                else:  # A..A: its first and its last 13
                    out.append((_RUN, tuple(ranks[p] for p in s[:13])))
                    out.append((_RUN, tuple(ranks[p] for p in s[-13:])))
            if joker is not None and run_min <= size + 1 <= 13 and (s[0] > 1 or s[-1] < top):
                out.append((_RUN, (*(ranks[p] for p in s), joker)))
        if joker is not None:
            for a, b in pairwise(stretches):
                total = len(a) + len(b) + 1
                if b[0] - a[-1] == 2 and run_min <= total <= 13:
                    joined = (*(ranks[p] for p in a), joker, *(ranks[p] for p in b))
                    out.append((_RUN, joined))
    return out
