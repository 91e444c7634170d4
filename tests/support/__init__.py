"""Random-playout conformance support (OpenSpiel style), shared by every rule set.

One module a concept: ``rulesets`` (the custom rule sets), ``agents`` (the random
agents, as bots), ``invariants`` (state, meld and transition checks), ``secrecy``
(what views and events may show), ``playouts`` (whole games with every check).

``play_random_game`` plays one complete game with random agents and checks the
engine's invariants after every action:

* card conservation: every physical card of the rule set's deck is in exactly one
  place (hands, stock, discards, table), and ``GameState.all_cards`` agrees;
* every meld on the table is valid under the rule set (re-validated through
  ``engine.melds``), and melds only ever grow in place within a round;
* hand sizes: every hand of a running round is non-empty, only the acting seat's
  hand changes outside a claim window, a new round deals ``contract.deal`` cards
  to every seat and starts with seat ``(round - 1) mod seats``;
* scores never go down, change only when a round ends, and then by exactly the
  penalty points of the cards left in each hand;
* ``to_act`` is non-empty and every seat in it has legal actions while the game
  runs; seats not in it have none; every listed legal action passes
  ``GameState.check`` and applies without error (deep checks);
* secrecy: no seat view, spectator view or redacted event shows a card id the
  viewer may not know (another hand, the stock), three consecutive stock cards in
  order, the game seed or the seed of the round in progress; views state the
  hand sizes, scores, piles, table and ``to_act`` of the state;
* ``to_dict``/``from_dict`` round-trips and survives JSON (deep checks);
* the game ends properly: terminal, last round played, scores non-negative,
  winners are the lowest scores, returns are minus the scores.

Every step checks everything above except what is marked deep, and the views of
the acting seat and of any seat whose hand changed (the parts that changed since
that seat's previous view in the round).  Deep steps (every ``deep_every`` steps,
every round boundary, the first and last state) also check the spectator's and
every seat's view in full, the round trip, ``check`` + ``apply_action`` of every
legal action of every seat, and that no legal draw, discard, claim answer, end of
turn, automatic contract, lay-off or joker swap is missing from ``legal_actions``.

Choices come only from the ``random.Random`` passed in (never the global one), so a
failure is reproduced by the same rules, seats, seed, rng seed and agent; the
failure message names the seed and step.
"""

from tests.support.agents import EagerBot, Policy, UniformBot, eager_policy, uniform_policy
from tests.support.common import PlayoutFailure
from tests.support.invariants import InvariantChecker, check_invariants, check_meld
from tests.support.playouts import Playout, iter_states, play_random_game, random_playout
from tests.support.rulesets import CUSTOM_MAYI, CUSTOM_MIX
from tests.support.secrecy import check_no_leak

__all__ = [
    "CUSTOM_MAYI",
    "CUSTOM_MIX",
    "EagerBot",
    "InvariantChecker",
    "Playout",
    "PlayoutFailure",
    "Policy",
    "UniformBot",
    "check_invariants",
    "check_meld",
    "check_no_leak",
    "eager_policy",
    "iter_states",
    "play_random_game",
    "random_playout",
    "uniform_policy",
]
