"""The tests' random agents, as bots (``clients.bots.base.Bot``) like every other player.

``UniformBot`` is OpenSpiel's random agent; ``EagerBot`` a random agent with a taste
for progress.  Both choose with the ``rng`` they are handed only, so a playout is
reproduced by its rng seed.  :func:`uniform_policy` / :func:`eager_policy` ask them
about an engine state (for the drivers that hold one, e.g. tests/e2e/support.py).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from clients.bots.base import Bot, Situation
from clients.bots.montecarlo import connections
from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    ExtraMeld,
    LayContract,
    LayOff,
    PassClaim,
    SwapJoker,
)
from engine.game import GameState
from engine.rulesets import MeldKind

__all__ = ["EagerBot", "Policy", "UniformBot", "eager_policy", "uniform_policy"]

_PROGRESS = (LayContract, LayOff, ExtraMeld, SwapJoker)
_CLAIM_LINKS = 2
_CLAIM_P = 0.8


class UniformBot(Bot):
    """OpenSpiel's random agent: every legal action equally likely."""

    name = "uniform"

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        return legal[rng.randrange(len(legal))]


class EagerBot(Bot):
    """A random agent with a taste for progress, so that rounds end by going out more
    often than by stalemate and games stay short.  It takes a melding action (contract,
    lay-off, extra meld, swap) nine times in ten when one is legal; otherwise, one time
    in twenty, any legal action; otherwise it takes the discard pile's top (or claims it,
    four times in five) when the card connects with two of its cards for the melds its
    contract wants, and discards, at random, one of its least connected cards.  Every
    choice is a legal action drawn with ``rng`` only."""

    name = "eager"

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        sit = situation
        progress = [a for a in legal if isinstance(a, _PROGRESS)]
        if progress and rng.random() < 0.9:
            return progress[rng.randrange(len(progress))]
        if rng.random() < 0.05:
            return legal[rng.randrange(len(legal))]
        hand = sit.hand
        if sit.opened:
            sets = runs = True  # anything that lays off or melds is welcome
        else:
            kinds = {m.kind for m in sit.rules.contract(sit.round_number).melds}
            sets, runs = MeldKind.SET in kinds, MeldKind.RUN in kinds
        top = sit.discard_top
        if sit.phase == "claim":
            assert top is not None
            wanted = connections(top, hand, sets, runs) >= _CLAIM_LINKS
            pick: type[Action] = Claim if wanted and rng.random() < _CLAIM_P else PassClaim
            choices = [a for a in legal if isinstance(a, pick)]
            return choices[0] if choices else legal[rng.randrange(len(legal))]
        if sit.phase == "draw":
            from_pile = [a for a in legal if isinstance(a, Draw) and a.source == "discard"]
            if from_pile and top is not None and connections(top, hand, sets, runs) >= 2:
                return from_pile[0]
            from_stock = [a for a in legal if isinstance(a, Draw) and a.source == "stock"]
            return from_stock[0] if from_stock else legal[0]
        discards = [a for a in legal if isinstance(a, Discard)]
        if discards:
            by_id = {c.id: c for c in hand}
            scored = [(connections(by_id[a.card], hand, sets, runs), a) for a in discards]
            least = min(score for score, _ in scored)
            worst = [a for score, a in scored if score == least]
            return worst[rng.randrange(len(worst))]
        return legal[rng.randrange(len(legal))]


Policy = Callable[[GameState, int, list[Action], random.Random], Action]
"""A bot asked about an engine state (what :func:`eager_policy` is)."""

_UNIFORM = UniformBot()
_EAGER = EagerBot()


def uniform_policy(state: GameState, seat: int, legal: list[Action], rng: random.Random) -> Action:
    return _UNIFORM.choose(Situation.from_state(state, seat), legal, rng)


def eager_policy(state: GameState, seat: int, legal: list[Action], rng: random.Random) -> Action:
    return _EAGER.choose(Situation.from_state(state, seat), legal, rng)
