"""AnalyseHand: the solver's best selection (and what is missing) for a hand."""

from __future__ import annotations

from engine.cards import JOKER_RANK, NO_SUIT, cards_from_codes, kind_code
from engine.cards import card as card_of
from engine.errors import GlintwickError, InvalidActionError
from engine.solver import Analysis, analyse, best_selection
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services.errors import invalid

from .context import Caller, Context
from .rule_sets import requested_rules

MAX_HAND = 30

# every (rank, suit) kind's code, looked up once per out
_KIND_CODES = {(r, s): kind_code(r, s) for r in range(1, 14) for s in range(4)} | {
    (JOKER_RANK, NO_SUIT): kind_code(JOKER_RANK, NO_SUIT)
}


async def analyse_hand(
    ctx: Context, request: pb.AnalyseHandRequest, caller: Caller
) -> pb.AnalyseHandResponse:
    rules = requested_rules(ctx, request)
    # (each field read once: a protobuf field read is a call into upb)
    codes = request.hand
    ids = request.hand_ids
    round_number = request.round
    best_only = request.best_only
    if codes and ids:
        raise invalid("give the hand as codes or as ids, not both")
    if len(codes) > MAX_HAND or len(ids) > MAX_HAND:
        raise invalid(f"a hand has at most {MAX_HAND} cards")
    try:
        rules.contract(round_number)
        if ids:
            if len(set(ids)) != len(ids):
                raise InvalidActionError("a card id appears twice")
            hand = [card_of(i, rules.decks) for i in ids]
            if any(c.id >= rules.deck_size for c in hand):
                raise InvalidActionError("a card id is not in this rule set's deck")
        else:
            hand = cards_from_codes(codes, rules.decks, rules.jokers)
        if best_only:
            best = best_selection(hand, rules, round_number)
            result = Analysis(best is not None, best, None, ())
        else:
            result = analyse(hand, rules, round_number)
    except GlintwickError as exc:
        raise invalid(str(exc)) from exc
    # Fields set one by one: upb looks every keyword argument up by name, which
    # cost about a fifth more (callgrind) than assigning the attributes.
    response = pb.AnalyseHandResponse()
    response.feasible = result.feasible
    best = result.best
    if best is not None:
        response.points_laid = best.points
        response.jokers = best.jokers
        add_meld = response.melds.add
        for index, meld in enumerate(best.melds):
            convert.fill_meld(add_meld(), meld, index)
    if result.missing is not None and not best_only:
        response.missing = result.missing
    if result.outs:
        response.outs.extend([_KIND_CODES[kind] for kind in result.outs])
    return response
