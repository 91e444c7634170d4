"""A sequential test of "is bot A better than bot B by at least a margin?".

The unit is a *deal set* of the mutual substitution design (``glintwick tournament
--sprt A,B`` plays it at every seat count; :mod:`.schedule`): per deal, the game of
B in every seat and A in each seat among Bs, and the game of A in every seat and B in
each seat among As.  Its observation is half of (A's penalty among Bs minus B's own in
the same seat) minus (B's among As minus A's own), each a mean over seats, in points
per game (:func:`.stats.mutual_differences`).  The deal's luck and the seat cancel
out of each difference; lower penalties are better, so A is better when the mean
difference Δ is negative.  (A gauntlet, the test's old design, seats A once and B three
times in a 4-seat game and the other way round when the names are swapped: different
games, so "never H1 both ways" rested on luck.)

* H0: Δ ≥ 0 (A is no better than B),
* H1: Δ ≤ -margin (A is better by at least ``margin`` points per game; default 5).

Wald's SPRT for the mean of normal observations, between the two boundary points
Δ = 0 and Δ = -margin, with the variance estimated from the observations so far
(the plug-in sequential test).  An estimate from a few deal sets is often too
small, which inflates the false "A better": so nothing is decided before
``min_deal_sets`` (32; simulated with an sd of 15 points per game, the false H1
rate at Δ = 0 is 0.046 with it and 0.072 with 8, the power at Δ = -margin 0.96,
the median stop about 42 deal sets), and a floor keeps a spread of agreeing deal
sets from looking like certainty.  After n
deal sets with sum S of the differences and variance estimate s², the
log-likelihood ratio is ``(margin / s²) * (-S - n * margin / 2)``; the test accepts
H1 at ``ln((1-beta)/alpha)`` and H0 at ``ln(beta/(1-alpha))``.  Since the LLR
falls with the mean difference, testing the two boundary points bounds the error
rates over the whole hypotheses: about ``alpha`` for "A better" when Δ ≥ 0, about
``beta`` for a missed "A better" when Δ ≤ -margin (the rates of the normal
approximation, checked by simulation in the tests).

Swapping the names plays the same games (the design orders the pair itself, and the
bots' seeds follow the games) and negates every observation exactly, so the running
mean is negated and the variance the same: an H1 for (A, B) needs a mean difference
below -margin/2 and an H1 for (B, A) one above +margin/2, so the two can never both
be H1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: the default margin: A must be this many penalty points per game better
MARGIN = 5.0
#: the smallest variance the test assumes (points² per game): a handful of deal sets
#: that happen to agree must not look like certainty
MIN_VARIANCE = 1.0


@dataclass
class Sprt:
    margin: float = MARGIN
    alpha: float = 0.05
    beta: float = 0.05
    min_deal_sets: int = 32
    # the differences so far, as Welford's running count, mean and sum of squared
    # deviations (a test re-decides after every deal set)
    deal_sets: int = 0
    mean_difference: float = 0.0
    _squares: float = 0.0
    differences: list[float] = field(default_factory=list)  # every observation, in order

    def __post_init__(self) -> None:
        if not self.margin > 0:
            raise ValueError(f"the SPRT's margin must be above 0, not {self.margin}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("the SPRT's alpha and beta must be between 0 and 1")

    def observe(self, difference: float) -> None:
        """One deal set's difference of A and B, points per game (below 0: A better)."""
        if not math.isfinite(difference):
            raise ValueError(f"a deal set's difference must be finite, not {difference}")
        self.differences.append(difference)
        self.deal_sets += 1
        step = difference - self.mean_difference
        self.mean_difference += step / self.deal_sets
        self._squares += step * (difference - self.mean_difference)

    @property
    def variance(self) -> float:
        """The differences' sample variance, at least MIN_VARIANCE."""
        spread = self._squares / (self.deal_sets - 1) if self.deal_sets >= 2 else 0.0
        return max(spread, MIN_VARIANCE)

    @property
    def llr(self) -> float:
        n = self.deal_sets
        if n == 0:
            return 0.0
        total = self.mean_difference * n
        return (self.margin / self.variance) * (-total - n * self.margin / 2)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    @property
    def decision(self) -> str:
        """``"H1"`` (A better by the margin), ``"H0"`` (A no better) or ``"undecided"``."""
        if self.deal_sets < self.min_deal_sets:
            return "undecided"
        if self.llr >= self.upper:
            return "H1"
        if self.llr <= self.lower:
            return "H0"
        return "undecided"

    def summary(self) -> dict[str, float | int | str | list[float]]:
        return {
            "hypotheses": (
                f"H0: A - B >= 0 points per game; H1: A - B <= -{self.margin:g} (A better)"
            ),
            "margin": self.margin,
            "alpha": self.alpha,
            "beta": self.beta,
            "deal_sets": self.deal_sets,
            "mean_difference": round(self.mean_difference, 4),
            "sd": round(math.sqrt(self.variance), 4),
            "llr": round(self.llr, 4),
            "lower": round(self.lower, 4),
            "upper": round(self.upper, 4),
            "decision": self.decision,
            "differences": [round(x, 4) for x in self.differences],
        }
