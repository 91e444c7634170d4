"""``montecarlo``: determinized Monte Carlo over greedy's best candidates.

For the two decisions that matter most — which card to discard and where to draw
from — ``montecarlo`` takes greedy's ``candidates`` best options and, for each of
``determinizations`` worlds, plays the round on (up to ``horizon`` actions) with a
fast heuristic policy for every seat, then keeps the option with the lowest mean
*round penalty* for itself (the round's score when the round ends inside the
horizon; otherwise the penalty still in hand plus ``MISSING_WEIGHT`` per card the
contract still lacks).  A world is a *determinization*: the cards this seat cannot
see (everything but its hand, the table and the discard pile's top) dealt at random
into the other hands, the discard pile under its top and the stock, consistent with
the sizes the view shows.  Every option is tried on the same worlds with the same
rollout randomness (common random numbers), so differences are the option's own.
Every other decision is greedy's.

On random worlds the rollouts' noise costs more than the search gains: in the
benchmark (docs/TOURNAMENTS.md) ``montecarlo`` plays no better than ``greedy``, and
``strong`` (exact next-draw odds, no sampling) beats both.  On the true state — the
``oracle`` — the same search is by far the strongest player, which is what it is
kept for: measuring how much the hidden cards cost the fair bots.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from clients.bots.base import Bot, Situation
from clients.bots.greedy import discard_order, greedy_action, missing, progress_action
from engine.actions import Action, Claim, Discard, Draw, DrawSource, PassClaim
from engine.cards import Card, full_deck
from engine.game import GameState, Phase
from engine.rulesets import MeldKind

MISSING_WEIGHT = 100


def connections(c: Card, hand: Sequence[Card], sets: bool, runs: bool) -> int:
    """How many cards of ``hand`` could share a meld with ``c`` (a joker: all of them)."""
    if c.is_joker:
        return 99
    n = 0
    for x in hand:
        if x is c:
            continue
        if (
            x.is_joker
            or (sets and x.rank == c.rank)
            or (runs and x.suit == c.suit and 0 < abs(x.rank - c.rank) <= 2)
        ):
            n += 1
    return n


def fast_action(state: GameState, seat: int, legal: Sequence[Action], rng: random.Random) -> Action:
    """The rollout policy: melds first, connected cards kept, no solver calls."""
    hand = state.hands[seat]
    if state.opened[seat]:
        sets = runs = True
    else:
        kinds = {m.kind for m in state.contract.melds}
        sets, runs = MeldKind.SET in kinds, MeldKind.RUN in kinds
    if state.phase is Phase.CLAIM:
        want = bool(state.discards) and connections(state.discards[-1], hand, sets, runs) >= 2
        if want and Claim() in legal:
            return Claim()
        return PassClaim() if PassClaim() in legal else legal[0]
    if state.phase is Phase.DRAW:
        pile = Draw(DrawSource.DISCARD)
        top = state.discards[-1] if state.discards else None
        if pile in legal and top is not None and connections(top, hand, sets, runs) >= 2:
            return pile
        stock = Draw(DrawSource.STOCK)
        return stock if stock in legal else legal[0]
    sit = Situation(
        state.rules,
        state.round_number,
        seat,
        "play",
        hand,
        state.opened[seat],
        state.table,
        None,
        state.taken_from_discard,
    )
    progress = progress_action(sit, legal)
    if progress is not None:
        return progress
    discards = [a for a in legal if isinstance(a, Discard)]
    if not discards:
        return legal[0]
    by_id = {c.id: c for c in hand}
    scored = [
        (connections(by_id[a.card], hand, sets, runs), -state.rules.penalty(by_id[a.card]), a)
        for a in discards
    ]
    best = min((s[0], s[1]) for s in scored)
    pool = [a for c, p, a in scored if (c, p) == best]
    return pool[rng.randrange(len(pool))]


def determinize(sit: Situation, rng: random.Random) -> GameState | None:
    """A full state consistent with the situation (None when it does not add up)."""
    rules = sit.rules
    seats = sit.seats
    known = {c.id for c in sit.hand}
    known.update(c.id for m in sit.table for c in m.cards)
    if sit.discard_top is not None:
        known.add(sit.discard_top.id)
    unseen = [c for c in full_deck(rules.decks, rules.jokers) if c.id not in known]
    rng.shuffle(unseen)
    sizes = sit.hand_sizes
    under = max(sit.discard_size - 1, 0)
    stock_size = sit.stock_size
    if sum(sizes) - sizes[sit.seat] + under + stock_size != len(unseen):
        return None
    hands: list[tuple[Card, ...]] = []
    at = 0
    for s in range(seats):
        if s == sit.seat:
            hands.append(sit.hand)
        else:
            hands.append(tuple(sorted(unseen[at : at + sizes[s]])))
            at += sizes[s]
    discards = tuple(unseen[at : at + under]) + ((sit.discard_top,) if sit.discard_top else ())
    at += under
    stock = tuple(unseen[at : at + stock_size])
    return GameState(
        rules=rules,
        seats=seats,
        seed=b"determinization",
        round_number=sit.round_number,
        phase=Phase(sit.phase),
        current=sit.current,
        hands=tuple(hands),
        stock=stock,
        discards=discards,
        table=sit.table,
        opened=sit.opened_seats,
        scores=sit.scores,
        taken_from_discard=sit.taken_from_discard,
        laid_this_turn=sit.laid_this_turn,
        exhaustions=sit.exhaustions,
        turns_completed=sit.turns_completed,
    )


class MonteCarloBot(Bot):
    name = "montecarlo"
    determinizations = 8
    candidates = 3
    horizon = 40  # at most this many actions per rollout (all seats together)

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        sit = situation
        options = self.options(sit, legal)
        if len(options) < 2:
            return greedy_action(sit, legal)
        worlds = self.worlds(sit, rng)
        if not worlds:
            return greedy_action(sit, legal)
        totals = [0.0] * len(options)
        for world in worlds:
            seed = rng.getrandbits(32)
            for i, option in enumerate(options):
                totals[i] += self.rollout(world, sit.seat, option, random.Random(seed))
        best = min(range(len(options)), key=lambda i: (totals[i], i))
        return options[best]

    def options(self, sit: Situation, legal: Sequence[Action]) -> list[Action]:
        """The decisions worth simulating, greedy's favourite first."""
        if sit.phase == "draw":
            draws = [a for a in legal if isinstance(a, Draw)]
            if len(draws) < 2:
                return []
            first = greedy_action(sit, legal)
            return [first, *(d for d in draws if d != first)]
        if sit.phase != "play" or progress_action(sit, legal) is not None:
            return []
        discards = [a for a in legal if isinstance(a, Discard)]
        seen: set[tuple[int, int]] = set()
        by_id = {c.id: c for c in sit.hand}
        distinct: list[Action] = []
        for action in discard_order(sit, discards):
            kind = by_id[action.card].kind
            if kind not in seen:
                seen.add(kind)
                distinct.append(action)
        return distinct[: self.candidates]

    def worlds(self, sit: Situation, rng: random.Random) -> list[GameState]:
        out = []
        for _ in range(self.determinizations):
            world = determinize(sit, rng)
            if world is None:
                return []
            out.append(world)
        return out

    def rollout(self, world: GameState, seat: int, option: Action, rng: random.Random) -> float:
        """Play on (a draw: to the end of this turn; a discard: until this seat has drawn
        again; or until the round ends) and judge the result; lower is better."""
        state, _ = world.apply_action(seat, option)
        start = world.round_number
        steps = 0
        drawing = isinstance(option, Draw)
        while not state.is_terminal() and state.round_number == start and steps < self.horizon:
            mine = state.current == seat and state.phase is not Phase.CLAIM
            if drawing and not mine:
                break  # a draw is judged once this seat's turn is over
            if not drawing and mine and state.phase is Phase.PLAY:
                break  # a discard, once this seat has drawn again
            who = state.to_act[0]
            state, _ = state.apply_action(
                who, fast_action(state, who, state.legal_actions(who), rng)
            )
            steps += 1
        if state.is_terminal() or state.round_number != start:
            return float(state.scores[seat] - world.scores[seat])
        hand = state.hands[seat]
        value = float(sum(state.rules.penalty(c) for c in hand))
        if not state.opened[seat]:
            sit = Situation(state.rules, start, seat, "play", hand, False, state.table, None, None)
            value += MISSING_WEIGHT * missing(hand, sit)
        return value
