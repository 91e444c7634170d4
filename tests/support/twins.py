"""Bots for the verdict tests: two classes that play alike under two names (the
tournament tells bots apart by name), one with dice in its play so that equal bots
still give deal sets that differ."""

from __future__ import annotations

import random
from collections.abc import Sequence

from clients.bots.base import Situation
from clients.bots.greedy import GreedyBot
from clients.bots.strong import StrongBot
from engine.actions import Action

#: the share of a jittery bot's decisions played at random
JITTER = 0.05


class StrongTwin(StrongBot):
    """``strong`` under another name."""

    name = "strong-twin"


class JitteryGreedy(GreedyBot):
    """``greedy``, except one decision in twenty is any legal action."""

    name = "jittery"

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        if rng.random() < JITTER:
            return legal[rng.randrange(len(legal))]
        return super().choose(situation, legal, rng)


class JitteryTwin(JitteryGreedy):
    """:class:`JitteryGreedy` under another name: the same play, other dice."""

    name = "jittery-twin"
