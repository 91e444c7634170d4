"""Per-bot results: mean penalty per game with a 95% bootstrap interval, win share.

Games of one deal set share their cards, so the bootstrap resamples *deal sets*
(percentile bootstrap, ``random.Random(seed)``): each resample draws as many deal
sets as there are, with replacement, and takes the bot's mean penalty per game over
them.  A game's *win share* gives each of its winners ``1 / winners`` of a win; a
bot's win share is that summed over its seats, divided by its seats played.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from clients.tournament.runner import GameResult


@dataclass
class BotStats:
    bot: str
    games: int  # seats played
    mean_penalty: float
    ci_low: float
    ci_high: float
    win_share: float


def per_deal_set(results: Sequence[GameResult]) -> dict[tuple[int, int], dict[str, list[int]]]:
    """Each deal set's penalties per bot (one entry per seat the bot played)."""
    out: dict[tuple[int, int], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        for seat, bot in enumerate(r.spec.seats):
            out[r.spec.deal_set][bot].append(r.scores[seat])
    return out


def bootstrap_ci(
    groups: Sequence[Sequence[int]], seed: int, resamples: int = 2000
) -> tuple[float, float]:
    """95% percentile interval of the mean over groups resampled with replacement."""
    if not groups:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(groups)
    sums = [float(sum(g)) for g in groups]
    counts = [len(g) for g in groups]
    means = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        total = sum(counts[i] for i in picks)
        means.append(sum(sums[i] for i in picks) / total if total else 0.0)
    means.sort()
    return (means[int(0.025 * (resamples - 1))], means[int(0.975 * (resamples - 1))])


def bot_stats(results: Sequence[GameResult], seed: int) -> list[BotStats]:
    sets = per_deal_set(results)
    wins: dict[str, float] = defaultdict(float)
    played: dict[str, int] = defaultdict(int)
    for r in results:
        for seat, bot in enumerate(r.spec.seats):
            played[bot] += 1
            if seat in r.winners:
                wins[bot] += 1 / len(r.winners)
    out = []
    for bot in sorted(played):
        groups = [d[bot] for d in sets.values() if bot in d]
        flat = [x for g in groups for x in g]
        low, high = bootstrap_ci(groups, seed)
        out.append(
            BotStats(bot, len(flat), sum(flat) / len(flat), low, high, wins[bot] / played[bot])
        )
    return sorted(out, key=lambda s: s.mean_penalty)
