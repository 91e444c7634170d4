"""House bots as policies, and policies as bots.

* :class:`BotPolicy` plays a seat of the environment with any registered bot (an
  opponent to train against, or the expert a dataset clones): it asks the bot as a
  tournament would, with the seat's situation and the engine's legal actions, and
  answers with the chosen action's index.
* :class:`PolicyBot` is a :class:`~clients.bots.base.Bot` that plays with a policy over
  the environment's observation: it builds the same observation and mask the
  environment would (:mod:`clients.training.observation`) from its situation and legal
  actions, so a trained agent enters a tournament or sits at the web table by
  ``module:Class`` (a subclass that names its policy: docs/TRAINING.md).
"""

from __future__ import annotations

import random
from abc import abstractmethod
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from clients.bots.base import Bot, Situation
from clients.bots.registry import make_bot
from clients.bots.tracking import TableMemory
from clients.training.actions import (
    DEFAULT_LAYOUTS,
    ActionLayout,
    Truncation,
    choices,
    index_of,
)
from clients.training.env import GlintwickEnv, Obs
from clients.training.observation import Encoder, ObservationLayout
from engine.actions import Action, Discard, PassClaim
from engine.rulesets import RuleSet

__all__ = ["BotPolicy", "Policy", "PolicyBot", "RandomPolicy"]


class Policy(Protocol):
    """Chooses an action index from an observation (its ``action_mask`` marks the legal)."""

    def act(self, observation: Obs, rng: random.Random) -> int: ...


class RandomPolicy:
    """A legal index, uniformly (the baseline, and the benchmark's player)."""

    def act(self, observation: Obs, rng: random.Random) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[rng.randrange(len(legal))])


class BotPolicy:
    """A registered bot (or ``module:Class``) playing the selected seat of ``env``."""

    def __init__(self, env: GlintwickEnv, spec: str, seed: int = 0) -> None:
        self.env = env
        self.spec = spec
        self.seed = seed
        self._bots: dict[int, Bot] = {}
        self._rngs: dict[int, random.Random] = {}

    def reset(self) -> None:
        """Forget the bots (one per seat, set up afresh at the next game)."""
        self._bots.clear()
        self._rngs.clear()

    def choose(self, seat: int) -> Action:
        """The bot's typed action for ``seat``, which must be the seat to act."""
        game = self.env.game
        bot = self._bots.get(seat)
        if bot is None:
            bot = self._bots[seat] = make_bot(self.spec, self.seed + seat)
            bot.setup(game.rules, seat)
            self._rngs[seat] = random.Random(bot.seed)
        legal = game.legal_actions(seat)
        return bot.choose(Situation.from_state(game, seat), legal, self._rngs[seat])

    def act_index(self, seat: int) -> int:
        """The chosen action's index in the environment's action space."""
        return index_of(self.env.action_layout, self.choose(seat), self.env.game.hands[seat])


class PolicyBot(Bot):
    """A bot that plays by a :class:`Policy` over the environment's observation.

    Subclasses give it a ``name`` and :meth:`make_policy`; ``layouts`` must be the
    environment's (the size of its action space depends on it)."""

    name = "policy"
    layouts = DEFAULT_LAYOUTS

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.policy = self.make_policy()
        self.memory = TableMemory()
        self.truncation = Truncation()
        self._layouts: tuple[ActionLayout, Encoder] | None = None

    @abstractmethod
    def make_policy(self) -> Policy:
        """The policy this bot plays by (loaded once per bot)."""

    def setup(self, rules: RuleSet, seat: int) -> None:
        super().setup(rules, seat)
        self.memory = TableMemory()
        self._layouts = None

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        if len(legal) == 1 and isinstance(legal[0], PassClaim):
            return legal[0]  # the environment never asks for it either
        rules = situation.rules
        if self._layouts is None:
            actions = ActionLayout.for_rules(rules, self.layouts)
            self._layouts = (
                actions,
                Encoder(ObservationLayout(situation.seats, actions.slots, self.layouts)),
            )
        action_layout, encoder = self._layouts
        self.memory.observe(situation)
        contract = rules.contracts[situation.round_number - 1]
        blocked = situation.taken_from_discard if contract.discards else None
        found = choices(
            action_layout,
            legal,
            situation.hand,
            rules,
            situation.round_number,
            blocked,
            self.truncation,
        )
        mask = np.frombuffer(bytes(found.mask), dtype=np.int8)
        observation = encoder(situation, self.memory, found.layout_features)
        index = self.policy.act({"observation": observation, "action_mask": mask}, rng)
        chosen = found.actions.get(index, legal[0])
        if isinstance(chosen, Discard):
            self.memory.discarded(chosen.card)
        return chosen
