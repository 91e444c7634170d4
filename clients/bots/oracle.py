"""``oracle``: a perfect-information upper bound on ``strong`` — for measuring, never for play.

In process (the tournament's in-process runner, the benchmark) the runner hands the
oracle the true game state and every seat's real bot and random generator
(:meth:`OracleBot.attach`).  At each decision with a choice it then tries every
candidate action on the true state (every legal action, discards of the same rank and
suit counted once) and plays the round on to its end with the *real* policies: every
other seat's bot, copied with its memory and its generator's exact state, and its own
base bot (``strong``) for its own later moves.  So each rollout is what would really
happen if the oracle took that action and then played like ``strong``: the round's
real penalty, not an estimate.  It keeps the base bot's move unless another scores
``margin`` points (default 1) lower.

That makes it a *rollout policy* over ``strong`` with an exact simulator, which
improves on its base step by step: each decision's chosen action does at least as
well as the base's continuation did at the step before, so a round played by the
oracle never ends with more penalty for it than the same round played by ``strong``
in its seat from the same point (the other seats' bots and generators are exactly
those of the game).  Across rounds the generators drift apart, so the guarantee is
per round; the tournaments (docs/TOURNAMENTS.md) measure the gap per game.

Through the public API nothing is attached — a server never reveals hidden cards — and
it plays exactly like ``strong``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence

from clients.bots.base import Bot, Situation
from clients.bots.strong import StrongBot
from clients.turn import engine_turn
from engine.actions import Action, Discard
from engine.game import GameState
from engine.rulesets import RuleSet

#: the most candidate actions one decision tries (the base's first)
MAX_CANDIDATES = 12


class OracleBot(Bot):
    name = "oracle"
    margin = 1.0  # penalty points another action must save to replace the base's

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.base = StrongBot(seed)
        self.state: Callable[[], GameState] | None = None
        self.bots: Sequence[Bot] = ()
        self.rngs: Sequence[random.Random] = ()
        #: counts for the benchmark: decisions searched, and how many left the base's move
        self.searched = 0
        self.overruled = 0

    def setup(self, rules: RuleSet, seat: int) -> None:
        super().setup(rules, seat)
        self.base.setup(rules, seat)

    def attach(
        self,
        state: Callable[[], GameState],
        bots: Sequence[Bot] = (),
        rngs: Sequence[random.Random] = (),
    ) -> None:
        """Give the oracle the true state and every seat's bot and generator (in-process
        play only; without the bots it cannot simulate them, and plays as ``strong``)."""
        self.state = state
        self.bots = bots
        self.rngs = rngs

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        if self.state is None or len(self.bots) != situation.seats or len(legal) < 2:
            return self._play(situation, legal, rng, None)
        state = self.state()
        seat = situation.seat
        # the base's own move, on a copy: the real base decides after the search, with
        # the real generator, exactly as the copies in the rollouts do
        trial_base, trial_rng = copy.deepcopy(self.base), _copy(rng)
        base_action = trial_base.choose(situation, legal, trial_rng)
        candidates = [base_action, *_distinct(situation, legal, exclude=base_action)]
        values = [self._rollout(state, seat, a, trial_base, trial_rng) for a in candidates]
        self.searched += 1
        best = min(range(len(candidates)), key=lambda i: (values[i], i))
        chosen = base_action
        if values[best] <= values[0] - self.margin:
            chosen = candidates[best]
            self.overruled += 1
        return self._play(situation, legal, rng, chosen)

    def _play(
        self,
        situation: Situation,
        legal: Sequence[Action],
        rng: random.Random,
        chosen: Action | None,
    ) -> Action:
        """The base decides (its memory and the generator move on as they would), and
        remembers ``chosen`` when the oracle plays another move."""
        base_action = self.base.choose(situation, legal, rng)
        if chosen is None or chosen == base_action:
            return base_action
        self.base.remember(chosen)
        return chosen

    def _rollout(
        self,
        state: GameState,
        seat: int,
        action: Action,
        base: StrongBot,
        rng: random.Random,
    ) -> float:
        """This seat's penalty for the round if it takes ``action`` now and then plays
        like its base (``base`` and ``rng``: the base and its generator just past this
        decision), every other seat playing as it really would."""
        players: list[Bot] = []
        generators: list[random.Random] = []
        for s, bot in enumerate(self.bots):
            if s == seat:
                me = copy.deepcopy(base)
                me.remember(action)
                players.append(me)
                generators.append(_copy(rng))
            else:
                # (another oracle at the table is simulated by its base: no nested search)
                players.append(copy.deepcopy(bot.base if isinstance(bot, OracleBot) else bot))
                generators.append(_copy(self.rngs[s]))
        start_round, start_score = state.round_number, state.scores[seat]
        now, _ = state.apply_action(seat, action)
        while not now.is_terminal() and now.round_number == start_round:
            who = now.to_act[0]
            now, _, _ = engine_turn(now, who, players[who], generators[who])
        return float(now.scores[seat] - start_score)


def _copy(rng: random.Random) -> random.Random:
    twin = random.Random()
    twin.setstate(rng.getstate())
    return twin


def _distinct(situation: Situation, legal: Sequence[Action], exclude: Action) -> list[Action]:
    """The candidates besides the base's move: every legal action, a discard once per
    rank and suit (two copies of a card play alike), at most MAX_CANDIDATES - 1."""
    by_id = {c.id: c for c in situation.hand}
    seen: set[object] = set()
    if isinstance(exclude, Discard) and exclude.card in by_id:
        seen.add(by_id[exclude.card].kind)
    out: list[Action] = []
    for action in legal:
        if action == exclude:
            continue
        key: object = action
        if isinstance(action, Discard) and action.card in by_id:
            key = by_id[action.card].kind
        if key in seen:
            continue
        seen.add(key)
        out.append(action)
        if len(out) == MAX_CANDIDATES - 1:
            break
    return out
