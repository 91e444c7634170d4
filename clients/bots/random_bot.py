"""``random``: every legal action equally likely (the baseline)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from clients.bots.base import Bot, register
from engine.actions import Action


@register
class RandomBot(Bot):
    name = "random"

    def choose(
        self, view: Mapping[str, Any], legal: Sequence[Action], rng: random.Random
    ) -> Action:
        return legal[rng.randrange(len(legal))]
