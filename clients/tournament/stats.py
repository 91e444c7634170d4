"""Per-bot results: mean penalty per game with a 95% bootstrap interval, win share.

Games of one deal set share their cards, so the bootstrap resamples *deal sets*
(percentile bootstrap, ``random.Random(seed)``): each resample draws as many deal
sets as there are, with replacement, and takes the bot's mean penalty per game over
them.  A game's *win share* gives each of its winners ``1 / winners`` of a win; a
bot's win share is that summed over its seats, divided by its seats played.

Pairs: for two bots at the same deal sets, each deal set's difference of their mean
penalties (the deal's luck cancels), averaged, with the same bootstrap over deal sets,
and the shares of deal sets where A did better, the same, and worse, apart.

Substitution designs (:mod:`.schedule`) count a bot's seats by its *role*: the
reference's own games (the reference in every seat) give its reference level, a
candidate's seat among references gives the candidate's; a reference's seats beside
a candidate are neither, so they are left out of every mean (they would mix the
reference's play with the candidate's effect on it).
"""

from __future__ import annotations

import functools
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from clients.tournament.runner import GameResult

#: a bot's role in a substitution design: in its own games (every seat), or in one seat
#: among references; in mixed tables (round-robin, gauntlet) a bot has no role ("")
REFERENCE, CANDIDATE = "reference", "candidate"


@dataclass
class BotStats:
    bot: str
    games: int  # games it sat in (counted)
    seat_games: int  # seats it played in them (a game with the bot in three seats: three)
    deal_sets: int  # deal sets (substitution: deals) those games are of
    mean_penalty: float  # per seat-game
    ci_low: float
    ci_high: float
    win_share: float
    role: str = ""  # substitution: REFERENCE or CANDIDATE (a bot can have both rows)


def per_deal_set(results: Sequence[GameResult]) -> dict[tuple[int, int], dict[str, list[int]]]:
    """Each deal set's penalties per bot (one entry per seat the bot played)."""
    out: dict[tuple[int, int], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        for seat, bot in enumerate(r.spec.seats):
            out[r.spec.deal_set][bot].append(r.scores[seat])
    return out


def bootstrap_ci(
    groups: Sequence[Sequence[float]], seed: int, resamples: int = 2000, level: float = 0.95
) -> tuple[float, float]:
    """The percentile interval (95% by default) of the mean over groups resampled with
    replacement."""
    if not groups:
        return (0.0, 0.0)
    n = len(groups)
    sums = [float(sum(g)) for g in groups]
    counts = [len(g) for g in groups]
    means = []
    for picks in _resamples(seed, n, resamples):
        total = sum(map(counts.__getitem__, picks))
        means.append(sum(map(sums.__getitem__, picks)) / total if total else 0.0)
    means.sort()
    tail = (1 - level) / 2
    return (means[int(tail * (resamples - 1))], means[int((1 - tail) * (resamples - 1))])


@functools.lru_cache(maxsize=8)
def _resamples(seed: int, n: int, resamples: int) -> tuple[tuple[int, ...], ...]:
    """The indices of every resample: ``[rng.randrange(n) for _ in range(n)]`` per
    resample from ``random.Random(seed)``, the same numbers, drawn with randrange's own
    rejection sampling over ``getrandbits`` without its argument checks (which cost
    more than the draws).  Cached: a tournament's intervals (every bot's, every pair's)
    resample the same number of deal sets with the same seed."""
    rng = random.Random(seed)
    bits = n.bit_length()
    draw = rng.getrandbits
    out = []
    for _ in range(resamples):
        picks = []
        for _ in range(n):
            i = draw(bits)
            while i >= n:
                i = draw(bits)
            picks.append(i)
        out.append(tuple(picks))
    return tuple(out)


def bot_stats(results: Sequence[GameResult], seed: int) -> list[BotStats]:
    """Every bot's mean penalty per seat-game over the seats it played, best first."""
    return _stats({"": [(r, list(range(len(r.spec.seats)))) for r in results]}, seed, by_deal=False)


def substitution_bot_stats(results: Sequence[GameResult], seed: int) -> list[BotStats]:
    """A substitution design's bots by role, best first: a reference's row from its own
    games, a candidate's from its seat among references (nothing else, see above)."""
    counted: dict[str, list[tuple[GameResult, list[int]]]] = {REFERENCE: [], CANDIDATE: []}
    for r in results:
        if r.spec.reference:
            counted[REFERENCE].append((r, list(range(len(r.spec.seats)))))
        else:
            counted[CANDIDATE].append((r, [r.spec.rotation]))
    return _stats(counted, seed, by_deal=True)


def _stats(
    counted: Mapping[str, Sequence[tuple[GameResult, list[int]]]], seed: int, by_deal: bool
) -> list[BotStats]:
    """Each (role, bot)'s row from the seats counted of each game; deal sets by their
    deal alone when ``by_deal`` (a substitution's reference games of one deal, one per
    candidate, are one deal's luck)."""
    out = []
    for role, games in counted.items():
        groups: dict[str, dict[Any, list[int]]] = defaultdict(lambda: defaultdict(list))
        wins: dict[str, float] = defaultdict(float)
        sat: dict[str, set[int]] = defaultdict(set)
        for r, seats in games:
            key = r.spec.deal if by_deal else r.spec.deal_set
            for seat in seats:
                bot = r.spec.seats[seat]
                groups[bot][key].append(r.scores[seat])
                sat[bot].add(r.spec.index)
                if seat in r.winners:
                    wins[bot] += 1 / len(r.winners)
        for bot in sorted(groups):
            sets = list(groups[bot].values())
            flat = [x for g in sets for x in g]
            low, high = bootstrap_ci(sets, seed)
            mean = sum(flat) / len(flat)
            share = wins[bot] / len(flat)
            out.append(
                BotStats(bot, len(sat[bot]), len(flat), len(sets), mean, low, high, share, role)
            )
    return sorted(out, key=lambda s: s.mean_penalty)


#: how a pair's difference was measured: at the same tables; A in B's seats among Bs
#: (B the reference); two candidates' substitution differences against one reference,
#: subtracted; both ways (A among Bs minus B among As, halved: ``mutual-substitution``)
TABLES, SUBSTITUTED, VIA_REFERENCE, MUTUAL = "tables", "substitution", "via-reference", "mutual"
DESIGNS = (TABLES, SUBSTITUTED, VIA_REFERENCE, MUTUAL)


@dataclass(frozen=True, slots=True)
class PairStats:
    """A against B on the deal sets both played: the paired comparison duplicate
    deals are for (each deal set's luck cancels out of its difference)."""

    a: str
    b: str
    deal_sets: int  # substitution designs: deals
    mean_difference: float  # A's mean penalty per game minus B's; below 0: A is better
    ci_low: float
    ci_high: float
    # the shares of deal sets where A's difference was below 0 (A better), 0, above 0
    better_share: float
    tied_share: float
    worse_share: float
    design: str = TABLES  # what the difference compares (DESIGNS)


def pair_stats(
    sets: Mapping[Any, Mapping[str, Sequence[int]]], a: str, b: str, seed: int
) -> PairStats | None:
    """Paired difference of A and B over deal sets (``per_deal_set``'s form), with a 95%
    bootstrap interval; None when they never met."""
    diffs = [
        sum(d[a]) / len(d[a]) - sum(d[b]) / len(d[b]) for d in sets.values() if a in d and b in d
    ]
    if not diffs:
        return None
    return _pair(a, b, diffs, seed)


def all_pairs(results: Sequence[GameResult], ranked: Sequence[str], seed: int) -> list[PairStats]:
    """Every pair of bots that met, in the order of ``ranked`` (best first)."""
    sets = per_deal_set(results)
    out = []
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            pair = pair_stats(sets, a, b, seed)
            if pair is not None:
                out.append(pair)
    return out


#: how a round can end (engine.events.RoundEnded.reason), someone out first
ROUND_END_REASONS = ("went_out", "exhaustions", "turn_cap", "dry", "dead")


def round_endings(results: Sequence[GameResult]) -> dict[str, Any]:
    """How rounds ended, round by round over every game: the count of each reason, and
    the share of rounds nobody went out of (a game of bots that stall ends by its cap)."""
    by_round: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(ROUND_END_REASONS, 0))
    for r in results:
        for number, reason in enumerate(r.round_ends, start=1):
            by_round[number][reason] = by_round[number].get(reason, 0) + 1
    rounds = sum(sum(c.values()) for c in by_round.values())
    out = sum(c["went_out"] for c in by_round.values())
    return {
        "rounds": rounds,
        "nobody_out_share": (rounds - out) / rounds if rounds else 0.0,
        "by_round": [{"round": n, **by_round[n]} for n in sorted(by_round)],
    }


def _pair(a: str, b: str, diffs: Sequence[float], seed: int, design: str = TABLES) -> PairStats:
    low, high = bootstrap_ci([[x] for x in diffs], seed)
    n = len(diffs)
    better, tied = sum(x < 0 for x in diffs), sum(x == 0 for x in diffs)
    worse = n - better - tied
    return PairStats(a, b, n, sum(diffs) / n, low, high, better / n, tied / n, worse / n, design)


def substituted_differences(
    results: Sequence[GameResult],
) -> dict[tuple[str, str], dict[int, float]]:
    """A substitution design's paired differences: per (candidate, reference) and deal,
    the mean over seats s of (the candidate's penalty in seat s, with the reference in
    every other seat) minus (the reference's own penalty in seat s of the reference game
    of the same lineup and order)."""
    Key = tuple[int, int, int]  # lineup, order, deal
    reference: dict[Key, GameResult] = {}
    substituted: dict[Key, dict[int, int]] = defaultdict(dict)
    candidate_of: dict[Key, str] = {}
    for r in results:
        key = (r.spec.lineup_index, r.spec.order, r.spec.deal)
        if r.spec.reference:
            reference[key] = r
        else:
            seat = r.spec.rotation
            substituted[key][seat] = r.scores[seat]
            candidate_of[key] = r.spec.seats[seat]
    out: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for key, scores in sorted(substituted.items()):
        base = reference.get(key)
        if base is None or len(scores) != len(base.scores):
            continue  # a deal set not played whole (an SPRT stopped, a shard missing)
        diffs = [scores[s] - base.scores[s] for s in range(len(base.scores))]
        out[(candidate_of[key], base.spec.seats[0])][key[2]] = sum(diffs) / len(diffs)
    return out


def substitution_differences(results: Sequence[GameResult]) -> dict[str, dict[int, float]]:
    """:func:`substituted_differences` of a design with one reference, by candidate."""
    return {c: d for (c, _), d in substituted_differences(results).items()}


def substitution_pairs(results: Sequence[GameResult], seed: int) -> list[PairStats]:
    """Every candidate against the reference, then every two candidates (the difference
    of their differences, on the deals both played), best first."""
    by_candidate = substitution_differences(results)
    reference = next((r.spec.lineup[0] for r in results), "")
    pairs = [
        substitution_pair(c, reference, list(d.values()), seed)
        for c, d in by_candidate.items()
        if d
    ]
    pairs.sort(key=lambda p: p.mean_difference)
    ranked = [p.a for p in pairs]
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            deals = sorted(by_candidate[a].keys() & by_candidate[b].keys())
            if deals:
                diffs = [by_candidate[a][d] - by_candidate[b][d] for d in deals]
                pairs.append(_pair(a, b, diffs, seed, VIA_REFERENCE))
    return pairs


def substitution_pair(
    candidate: str, reference: str, diffs: Sequence[float], seed: int
) -> PairStats:
    """A candidate's substitution differences against a reference, as a pair."""
    return _pair(candidate, reference, diffs, seed, SUBSTITUTED)


def mutual_differences(results: Sequence[GameResult], a: str, b: str) -> dict[int, float]:
    """The mutual substitution's difference of A and B per deal (played both ways):
    half of (A among Bs minus B's own) minus (B among As minus A's own).  Naming them
    the other way round negates every difference exactly: the games are the same
    (:func:`.schedule.games` orders the pair itself) and ``(u - v) / 2 == -((v - u) / 2)``
    in floating point."""
    both = substituted_differences(results)
    ab, ba = both.get((a, b), {}), both.get((b, a), {})
    return {d: (ab[d] - ba[d]) / 2 for d in sorted(ab.keys() & ba.keys())}


def mutual_pair(results: Sequence[GameResult], a: str, b: str, seed: int) -> PairStats | None:
    diffs = mutual_differences(results, a, b)
    return _pair(a, b, list(diffs.values()), seed, MUTUAL) if diffs else None


@dataclass(frozen=True, slots=True)
class OrderSpread:
    """How a pair's paired difference depends on the seat order (balanced seating)."""

    a: str
    b: str
    orders: list[tuple[str, ...]]  # each cyclic order of the lineup (seat 0 first)
    mean_differences: list[float]  # A - B per game, in each order
    spread: float  # the largest minus the smallest
    # whether some order differs from the mean of all orders beyond its interval (95%,
    # Bonferroni over the orders), bootstrapped over deal sets
    significant: bool


def order_spreads(results: Sequence[GameResult], seed: int) -> list[OrderSpread]:
    """For every pair of bots at a lineup played in several cyclic orders: its paired
    difference order by order (the published one averages every order)."""
    by_set: dict[tuple[int, int], dict[int, dict[str, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    arranged: dict[tuple[int, int], tuple[str, ...]] = {}
    lineups: dict[int, tuple[str, ...]] = {}
    for r in results:
        if r.spec.reference:
            continue
        for seat, bot in enumerate(r.spec.seats):
            by_set[r.spec.deal_set][r.spec.order][bot].append(r.scores[seat])
        if r.spec.rotation == 0:
            arranged[(r.spec.lineup_index, r.spec.order)] = r.spec.seats
        lineups[r.spec.lineup_index] = r.spec.lineup
    out = []
    for li, lineup in sorted(lineups.items()):
        orders = sorted(o for (i, o) in arranged if i == li)
        if len(orders) < 2:
            continue
        sets = [v for (i, _), v in sorted(by_set.items()) if i == li]
        for a, b in combinations(sorted(set(lineup)), 2):
            rows = []
            for per_order in sets:
                if all(a in per_order[o] and b in per_order[o] for o in orders):
                    rows.append([_mean(per_order[o][a]) - _mean(per_order[o][b]) for o in orders])
            if not rows:
                continue
            means = [sum(row[k] for row in rows) / len(rows) for k in range(len(orders))]
            significant = False
            for k in range(len(orders)):
                deviations = [[row[k] - sum(row) / len(row)] for row in rows]
                low, high = bootstrap_ci(deviations, seed, level=1 - 0.05 / len(orders))
                significant = significant or low > 0 or high < 0
            out.append(
                OrderSpread(
                    a,
                    b,
                    [arranged[(li, o)] for o in orders],
                    means,
                    max(means) - min(means),
                    significant,
                )
            )
    return out


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values)
