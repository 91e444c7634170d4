"""One turn of one seat: what the seat sees, the bot's choice, the action to play.

Every player of a seat goes through here, so a bot is always asked the same way:

* :func:`engine_turn`, in process (tournaments, ``glintwick simulate``, the tests'
  playouts): the bot gets :meth:`Situation.from_state` of the engine state (no view is
  built and read back) and the chosen action is applied;
* :func:`wire_choice`, through the API (every client, through the table core
  ``clients.table``): the bot gets the situation the seat's view message states
  (:meth:`Situation.from_pb`, read straight from the message), and the choice comes
  back as a message to submit.  Versions, request ids and refusals are the core's;
  the transport is its runners' (``clients.runners``); the decision itself is this
  one function.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from clients.bots.base import Bot, Situation
from engine.actions import Action
from engine.events import Event
from engine.game import GameState
from engine.rulesets import RuleSet, ruleset
from glintwick import convert
from glintwick.v1 import game_pb2 as pb

__all__ = ["engine_turn", "wire_choice"]


def engine_turn(
    state: GameState, seat: int, bot: Bot, rng: random.Random
) -> tuple[GameState, Action, list[Event]]:
    """``seat`` plays one action chosen by ``bot``: (the next state, the action, its events)."""
    legal = state.legal_actions(seat)
    if not legal:
        raise RuntimeError(f"seat {seat} is to act but has no legal action")
    action = bot.choose(Situation.from_state(state, seat), legal, rng)
    after, events = state.apply_action(seat, action)
    return after, action, events


def wire_choice(
    bot: Bot, view: pb.View, legal: Sequence[pb.Action], rng: random.Random
) -> pb.Action:
    """``bot``'s choice among ``legal`` (never empty) for the seat whose ``view`` this is."""
    situation = Situation.from_pb(view, _rules(bot, view))
    choices = [convert.action_from_pb(a) for a in legal]
    return convert.action_to_pb(bot.choose(situation, choices, rng))


def _rules(bot: Bot, view: pb.View) -> RuleSet:
    """The rule set given to ``bot.setup`` (custom ones included), else the named preset."""
    if bot.rules is None or bot.rules.hash != (view.rules_hash or bot.rules.hash):
        bot.rules = ruleset(view.rules)
    return bot.rules
