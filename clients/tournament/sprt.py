"""A sequential probability ratio test for "is bot A stronger than bot B?".

The unit is a *deal set* of A against B (every seat rotation of one deal): A wins it
when its total penalty over the set is lower than B's, loses it when higher; equal
totals are draws and carry no information.  With p = P(A wins a decisive deal set):

* H0: p = p0 = 0.5 (A is no stronger than B),
* H1: p = p1 (default 0.65: A wins about two decisive deal sets in three).

The log-likelihood ratio after w wins and l losses is
``w ln(p1/p0) + l ln((1-p1)/(1-p0))``; the test stops and accepts H1 once it reaches
``ln((1-beta)/alpha)``, accepts H0 once it falls to ``ln(beta/(1-alpha))`` (Wald), with
error rates alpha (false "A stronger") and beta (missed "A stronger") of 0.05 each by
default.  Before either bound it is ``undecided``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Sprt:
    p0: float = 0.5
    p1: float = 0.65
    alpha: float = 0.05
    beta: float = 0.05
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def llr(self) -> float:
        return self.wins * math.log(self.p1 / self.p0) + self.losses * math.log(
            (1 - self.p1) / (1 - self.p0)
        )

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def add(self, a_total: float, b_total: float) -> None:
        if a_total < b_total:
            self.wins += 1
        elif a_total > b_total:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def decision(self) -> str:
        """``"H1"`` (A stronger), ``"H0"`` (not stronger by that margin) or ``"undecided"``."""
        if self.llr >= self.upper:
            return "H1"
        if self.llr <= self.lower:
            return "H0"
        return "undecided"

    def summary(self) -> dict[str, float | int | str]:
        return {
            "p0": self.p0,
            "p1": self.p1,
            "alpha": self.alpha,
            "beta": self.beta,
            "wins": self.wins,
            "losses": self.losses,
            "draws": self.draws,
            "llr": round(self.llr, 4),
            "lower": round(self.lower, 4),
            "upper": round(self.upper, 4),
            "decision": self.decision,
        }
