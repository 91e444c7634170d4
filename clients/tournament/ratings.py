"""OpenSkill (Plackett-Luce) ratings from game results.

Each game is one match; a bot's place is by its penalty in that game (lower is
better, equal penalties tie).  A bot that sits in several seats of one game (a
gauntlet table) enters once, with its mean penalty.  Games are rated in schedule
order, so the ratings are reproducible.  ``ordinal`` is mu - 3 sigma.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from clients.tournament.runner import GameResult


@dataclass
class Rating:
    bot: str
    mu: float
    sigma: float
    ordinal: float


def rate(results: Sequence[GameResult]) -> list[Rating]:
    model = PlackettLuce()
    ratings = {}
    for r in sorted(results, key=lambda g: g.spec.index):
        per_bot: dict[str, list[int]] = defaultdict(list)
        for seat, bot in enumerate(r.spec.seats):
            per_bot[bot].append(r.scores[seat])
        if len(per_bot) < 2:
            continue
        bots = sorted(per_bot)
        for bot in bots:
            if bot not in ratings:
                ratings[bot] = model.rating(name=bot)
        teams = [[ratings[b]] for b in bots]
        ranks = [sum(per_bot[b]) / len(per_bot[b]) for b in bots]
        new = model.rate(teams, ranks=ranks)
        for bot, team in zip(bots, new, strict=True):
            ratings[bot] = team[0]
    out = [Rating(b, x.mu, x.sigma, x.ordinal()) for b, x in ratings.items()]
    return sorted(out, key=lambda x: -x.ordinal)
