"""Variants of ``expert`` measured for issue 31 and not kept: none beats ``expert``.

Not registered; named ``clients.bots.tried:Class`` in a tournament (docs/BOTS.md, "What
did not help", has each measurement and the command that reproduces it).

* :class:`MixBot` (``mix``; ``mix1``, ``mix5``, ``mixlate``): closed-hand discards trade
  live outs against the penalty shed — a discard's score is ``live + alpha × penalty``
  (``alpha`` 0.3; 0.1, 0.5) instead of expert's live outs with the penalty as a mere
  tie-break; ``mixlate`` only once an opponent is open (the round's end is near).
* :class:`OpenLowBot` (``openlow``): once open, take the pile's top instead of the
  stock when it is at least 5 penalty points lower than the costliest card held (a
  known cheap card rather than a random one; the costliest card goes next).
"""

from __future__ import annotations

from collections.abc import Sequence

from clients.bots.base import Situation
from clients.bots.expert import ExpertBot
from clients.bots.greedy import fits_table
from clients.bots.learned import LearnedBot
from clients.bots.strong import DiscardRank
from engine.actions import Action, Draw, DrawSource
from engine.cards import Card

__all__ = [
    "MixBot",
    "MixBot1",
    "MixBot5",
    "MixLateBot",
    "MixLateBot1",
    "MixLateBot2",
    "NearAllBot",
    "NearAllBot2",
    "NearBot",
    "NearBot0",
    "OpenLowBot",
    "SampledBot",
    "SampledBot1",
    "WideBot",
    "WideBot0",
    "WideBot4",
]

_PILE = Draw(DrawSource.DISCARD)
_STOCK = Draw(DrawSource.STOCK)


class MixBot(ExpertBot):
    name = "mix"
    alpha: float = 0.3  # penalty points worth one live out
    only_late: bool = False  # trade only once an opponent is open

    def _closed_rank(self, sit: Situation) -> DiscardRank:
        free = sit.rules.draw_from_discard
        late = not self.only_late or any(o for s, o in enumerate(sit.opened_seats) if s != sit.seat)
        alpha = self.alpha if late else 0.0

        def rank(c: Card, missing: int, live: int) -> tuple[float, ...]:
            danger = 1 if sit.table and fits_table(c, sit) else 0
            penalty = sit.rules.penalty(c)
            score = -live - alpha * penalty
            if free:
                return (missing, danger, score, -penalty, c.id)
            return (missing, score, danger, -penalty, c.id)

        return rank  # type: ignore[return-value]


class MixBot1(MixBot):
    name = "mix1"
    alpha = 0.1


class MixBot5(MixBot):
    name = "mix5"
    alpha = 0.5


class MixLateBot(MixBot):
    name = "mixlate"
    alpha = 0.5
    only_late = True


class OpenLowBot(ExpertBot):
    name = "openlow"
    gap: int = 5  # the pile's top at least this much cheaper than the costliest card held

    def _draw(self, sit: Situation, legal: Sequence[Action]) -> Action:
        top = sit.discard_top
        if sit.opened and top is not None and _PILE in legal and _STOCK in legal and sit.hand:
            penalty = sit.rules.penalty
            if not top.is_joker and penalty(top) + self.gap <= max(map(penalty, sit.hand)):
                return _PILE
        return super()._draw(sit, legal)


class MixLateBot1(MixLateBot):
    name = "mixlate1"
    alpha = 1.0


class MixLateBot2(MixLateBot):
    name = "mixlate2"
    alpha = 2.0


# ---------------------------------------------------------------- learned discard rankings
# Weights (clients.bots.learned.FEATURES order) as fitted by ``python -m
# clients.training.qvalues fit`` on the decisions docs/BOTS.md names, rounded as printed.
_SAMPLED_W4 = (
    0.0,
    -2.661,
    1.911,
    0.801,
    -0.038,
    -0.435,
    -4.418,
    0.435,
    1.911,
    -0.139,
    0.101,
    -0.0,
    0.002,
    0.0,
    0.0,
)
_TRUE_WIDE_W4 = (
    6.851,
    -1.325,
    -0.981,
    -2.408,
    16.107,
    1.491,
    -2.911,
    -1.913,
    -0.981,
    1.338,
    0.514,
    -0.0,
    -8.579,
    -2.619,
    8.556,
)
_TRUE_NEAR_W4 = (
    0.0,
    -2.142,
    1.576,
    -1.391,
    3.786,
    0.045,
    -7.071,
    0.014,
    1.576,
    -0.515,
    -0.232,
    -0.0,
    -1.025,
    0.0,
    0.0,
)
_TRUE_NEAR_C4 = (
    0.0,
    -5.656,
    -0.869,
    0.313,
    0.0,
    -0.978,
    -1.854,
    -2.54,
    -0.869,
    0.572,
    0.888,
    0.0,
    -0.642,
    0.0,
    0.0,
)


class SampledBot(LearnedBot):
    """Values from sampled worlds (``search``'s): every kind leaving the fewest missing."""

    name = "sampled"
    kinds = None
    weights = {("whiskertrail", 4): _SAMPLED_W4}  # noqa: RUF012


class SampledBot1(SampledBot):
    name = "sampled1"
    margin = 1.0


class WideBot(LearnedBot):
    """Values from the true hands; also every kind leaving one card more missing."""

    name = "wide"
    kinds = None
    spread = 1
    margin = 1.0
    weights = {("whiskertrail", 4): _TRUE_WIDE_W4}  # noqa: RUF012


class WideBot4(WideBot):
    name = "wide4"
    margin = 4.0


class WideBot0(WideBot):
    """The wide fit, choosing among the kinds leaving the fewest missing only."""

    name = "wide0"
    spread = 0


class NearBot(LearnedBot):
    """Values from the true hands, fitted and chosen among expert's four best kinds
    leaving the fewest missing."""

    name = "near"
    margin = 1.0
    weights = {("whiskertrail", 4): _TRUE_NEAR_W4, ("contract", 4): _TRUE_NEAR_C4}  # noqa: RUF012


class NearBot0(NearBot):
    name = "near0"
    margin = 0.0


class NearAllBot(NearBot):
    """The near fit choosing among every kind leaving the fewest missing."""

    name = "nearall"
    kinds = None


class NearAllBot2(NearAllBot):
    name = "nearall2"
    margin = 2.0
