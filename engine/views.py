"""What one seat (or a spectator) may see of a game.

A seat sees its own hand, the table, the discard pile's top card and size, the
stock's size, every player's hand size, opened flag and score, whose turn it is,
the claim window (the card and the answers so far, which are public) and the card
the current seat took from the discard pile this turn (everyone saw it taken).
Never another hand, the stock's order or the seed while the game runs; once the
game is over the seed is shown so the round commitments can be checked.

Cards are rendered as ``{"id": int, "code": "7H"}`` and melds as in
:func:`engine.melds.meld_json`.
"""

from __future__ import annotations

from typing import Any

from engine.cards import card, card_json, cards_json
from engine.game import GameState, Phase, claims
from engine.game.dealing import contract_json
from engine.melds import meld_json
from engine.shuffle import commitment, round_seed


def _public(state: GameState) -> dict[str, Any]:
    rules = state.rules
    over = state.phase is Phase.GAME_OVER
    taken = state.taken_from_discard
    view: dict[str, Any] = {
        "rules": rules.name,
        "rules_hash": rules.hash,
        "seats": state.seats,
        "round": state.round_number,
        "rounds": rules.rounds,
        "contract": contract_json(rules, state.round_number),
        "phase": state.phase.value,
        "current": state.current,
        "to_act": list(state.to_act),
        "players": [
            {
                "seat": s,
                "hand_size": len(state.hands[s]),
                "opened": state.opened[s],
                "score": state.scores[s],
            }
            for s in range(state.seats)
        ],
        "table": [meld_json(m, i) for i, m in enumerate(state.table)],
        "discard_top": card_json(state.discards[-1]) if state.discards else None,
        "discard_size": len(state.discards),
        "stock_size": len(state.stock),
        "taken_from_discard": (
            card_json(card(taken, rules.decks)) if taken is not None and not over else None
        ),
        "laid_this_turn": state.laid_this_turn,
        "claim": claims.view(state),
        "exhaustions": state.exhaustions,
        "turns_completed": state.turns_completed,
        "action_count": state.action_count,
        "game_over": over,
        # the current round's seed commitment: a watcher who joins after the deal
        # (or the first deal, made before anyone watches) still gets it
        "commitment": commitment(round_seed(state.seed, state.round_number)),
        "winners": list(state.winners()) if over else None,
    }
    if over:
        view["seed"] = state.seed.hex()
    return view


def seat_view(state: GameState, seat: int) -> dict[str, Any]:
    """What ``seat`` may see: the public view plus its own hand."""
    state.check_seat(seat)
    view = _public(state)
    view["seat"] = seat
    view["hand"] = cards_json(state.hands[seat])
    view["may_act"] = seat in state.to_act
    view["has_drawn"] = state.phase is Phase.PLAY and state.current == seat
    return view


def spectator_view(state: GameState) -> dict[str, Any]:
    """What a spectator may see: no hand at all."""
    return _public(state)
