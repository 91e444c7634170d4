"""A bot in a file of its own: greedy, except that it always throws its costliest card."""

from __future__ import annotations

import random
from collections.abc import Sequence

from clients.bots import Bot, Situation
from clients.bots.greedy import greedy_action
from engine.actions import Action, Discard


class LowballBot(Bot):
    name = "lowball"

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        discards = [a for a in legal if isinstance(a, Discard)]
        if discards and len(discards) == len(legal):  # nothing left to lay: discard
            by_id = {c.id: c for c in situation.hand}
            return max(discards, key=lambda a: situation.rules.penalty(by_id[a.card]))
        return greedy_action(situation, legal)
