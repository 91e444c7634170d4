"""Why `contract` rounds still reach the 200-turn valve under the dead-round rule.

Plays the matches of ``bench.round_lengths`` (same seeds, one bot kind at every seat,
``--seat0`` another at seat 0) under the `contract` preset and, at each round ended by
the valve, looks at the table as it stood before the last action: how many seats had
laid their contract, and how many cards off the table (in hands, the stock, the
discards) could still be laid off on some meld (``engine.melds.layoff_ends``).  The
dead-round rule (docs/RULES.md, rule 6) ends a round when every seat is open and every
meld is *full* by size (``engine.melds.is_full``), so a round at the valve is one of:

* ``no_card_fits``: every seat open, and no card left anywhere fits any meld — dead in
  fact, but a group of three stays "not full" while the cards that would complete it
  lie in other melds;
* ``a_seat_never_laid``: some seat never laid its contract (the rule needs all);
* ``other``: every seat open and some card off the table still fits.

    python -m bench.valve_rounds [--games 40] [--bot greedy] [--seat0 greedy]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.round_lengths import start_match
from clients.turn import engine_turn
from engine.cards import Card
from engine.game import GameState
from engine.melds import layoff_ends
from engine.rulesets import CONTRACT


def _fits(state: GameState, card: Card) -> bool:
    return any(layoff_ends(m, card, state.rules) for m in state.table if m is not None)


def at_the_valve(state: GameState, round_number: int, match: int) -> dict[str, Any]:
    """The table just before a round ended by the valve, and why it was not dead."""
    in_hands = sum(1 for hand in state.hands for c in hand if _fits(state, c))
    in_piles = sum(1 for c in (*state.stock, *state.discards) if _fits(state, c))
    opened = sum(state.opened)
    if opened < len(state.opened):
        kind = "a_seat_never_laid"
    elif in_hands + in_piles == 0:
        kind = "no_card_fits"
    else:
        kind = "other"
    return {
        "match": match,
        "round": round_number,
        "kind": kind,
        "seats_open": opened,
        "fitting_cards_in_hands": in_hands,
        "fitting_cards_in_stock_or_discards": in_piles,
        "hand_sizes": [len(h) for h in state.hands],
    }


def play(index: int, bot: str, seat0: str | None) -> list[dict[str, Any]]:
    """One match of ``bench.round_lengths`` (its seed and bots): its rounds at the valve."""
    state, bots, rng = start_match(CONTRACT, bot, index, seat0)
    found = []
    while not state.is_terminal():
        seat = state.to_act[0]
        before = state
        state, _, events = engine_turn(state, seat, bots[seat], rng)
        for e in events:
            if e.type == "round_ended" and e.public["reason"] == "turn_cap":
                found.append(at_the_valve(before, int(e.public["round"]), index))
    return found


def run(games: int, bot: str, seat0: str | None) -> dict[str, Any]:
    rounds = [r for i in range(games) for r in play(i, bot, seat0)]
    return {
        "bot": bot,
        "seat0": seat0 or bot,
        "matches": games,
        "matches_with_a_round_at_valve": len({r["match"] for r in rounds}),
        "rounds_at_valve": len(rounds),
        "by_round": dict(Counter(f"round {r['round']}" for r in rounds)),
        "why": dict(Counter(r["kind"] for r in rounds)),
        "rounds": rounds,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--bot", default="greedy")
    parser.add_argument("--seat0", default=None, help="another bot at seat 0")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.games, args.bot, args.seat0), indent=2))


if __name__ == "__main__":
    main()
