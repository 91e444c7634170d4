"""``search``: determinized Monte Carlo search over ``expert``, seeing only what its seat sees.

The fair counterpart of the ``oracle``, built never to play worse than ``expert``: it
plays expert's move at once everywhere but a few decisions where a move's worth shows
in the round's outcome —

* a May I? claim expert would make before opening (claim or pass: is the card worth the
  penalty card?),
* the discard pile against the stock where both are legal (whiskertrail), when expert
  takes the pile or the top card is of a rank, or within two of a suit, the hand holds,
* laying the contract now against holding it a turn (expert's closed discard),
* once open, a discard (whiskertrail only: expert's and its next best kind) —

and not in contract's rounds of sets only (1 and 4), which the 200-turn cap ends: a
rollout there costs 5-10x another round's.  At a searched decision it samples *worlds*,
full game states consistent with what the seat has seen (:class:`TableMemory`,
:func:`sample_world`), and plays expert's move and the challenger in each to the end of
the round with ``expert`` in every seat, scoring the seat's real round penalty.  Both
candidates are played in the same worlds (common random numbers: the rollouts are
deterministic given the world), so their difference per world is paired.  It keeps
expert's move unless the challenger saves ``margin`` (3) points a round on average over
at least ``min_overrule`` (4) worlds *and* its paired mean difference is ``z`` (2.5)
standard errors below zero; once ``min_worlds`` (3) worlds are played with the
challenger not ahead, it stops early.

What a world may use, and nothing else: the seat's hand, the melds on the table, the
discard pile as the seat watched it grow (the cards it saw discarded and still there),
the cards it saw an opponent take from the pile (held by that opponent until they show
up on the table or in the pile again), every hand's size and the stock's size.  The
unseen cards (the rest of the deck) are dealt uniformly at random into the opponents'
unknown cards, the pile cards the seat never saw, and the stock.  The bot owns its
generator (seeded from its seed; the ``rng`` argument of :meth:`choose` is not used),
so its play is deterministic given its seed and the seat's views: the same views give
the same choices whatever the hidden cards are (``tests/unit/test_search.py``).

The budget is ``worlds`` (default 6) per searched decision, so at most ``worlds`` ×
``max_candidates`` (2) rollouts.  ``horizon_turns`` (default ``None``: to the end of the
round) cuts rollouts short, valued at the penalty in hand then (biased: it counts a
claim's two cards but not the contract they bring closer).  ``time_ms`` (default off)
also stops sampling new worlds once that much wall-clock time has gone by in one
decision (at least one world is always played): with it the choices depend on the
machine's speed and are no longer reproducible.  ``SearchBot4``, ``SearchBot16`` and
``SearchBot32`` are the other budgets of the budget study.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from clients.bots.base import Bot, Situation
from clients.bots.expert import ExpertBot, capped_round
from clients.bots.greedy import missing
from clients.bots.tracking import TableMemory
from clients.turn import engine_turn
from engine.actions import Action, Claim, Discard, Draw, DrawSource, LayContract, PassClaim
from engine.cards import Card, full_deck
from engine.game import GameState, Phase
from engine.rulesets import RuleSet

__all__ = ["SearchBot", "TableMemory", "challenger", "decision_kind", "sample_world"]

_PILE = Draw(DrawSource.DISCARD)
_STOCK = Draw(DrawSource.STOCK)
_UNUSED = random.Random(0)  # handed to expert, which draws no random numbers


def sample_world(sit: Situation, memory: TableMemory, rng: random.Random) -> GameState | None:
    """A full game state consistent with what the seat knows, the unseen cards dealt at
    random; None when the situation and memory do not add up (the memory is then
    dropped: only the pile's top and the sizes are used)."""
    world = _world(sit, memory.pile, memory.unknown, memory.held, rng)
    if world is None:
        top = [sit.discard_top.id] if sit.discard_top is not None else []
        world = _world(sit, top, max(0, sit.discard_size - len(top)), {}, rng)
    return world


def _world(
    sit: Situation,
    pile: Sequence[int],
    unknown: int,
    held: dict[int, set[int]],
    rng: random.Random,
) -> GameState | None:
    rules = sit.rules
    if len(pile) + unknown != sit.discard_size or (pile and sit.discard_top is None):
        return None
    if sit.discard_top is not None and (not pile or pile[-1] != sit.discard_top.id):
        return None
    deck = {c.id: c for c in full_deck(rules.decks, rules.jokers)}
    known = {c.id for c in sit.hand} | set(pile)
    known.update(c.id for m in sit.table for c in m.cards)
    hands: list[list[Card]] = [[] for _ in range(sit.seats)]
    for seat, cards in sorted(held.items()):
        if seat == sit.seat or len(cards) > sit.hand_sizes[seat] or cards & known:
            return None
        hands[seat] = [deck[i] for i in sorted(cards)]
        known |= cards
    unseen = [c for i, c in deck.items() if i not in known]
    rng.shuffle(unseen)
    need = sum(sit.hand_sizes[s] - len(hands[s]) for s in range(sit.seats) if s != sit.seat)
    if need + unknown + sit.stock_size != len(unseen):
        return None
    at = 0
    for seat in range(sit.seats):
        if seat == sit.seat:
            hands[seat] = list(sit.hand)
            continue
        more = sit.hand_sizes[seat] - len(hands[seat])
        hands[seat] = [*hands[seat], *unseen[at : at + more]]
        at += more
    under = unseen[at : at + unknown]
    at += unknown
    phase = Phase(sit.phase)
    return GameState(
        rules=rules,
        seats=sit.seats,
        seed=rng.getrandbits(64).to_bytes(8, "big"),  # the world's reshuffles
        round_number=sit.round_number,
        phase=phase,
        current=sit.current,
        hands=tuple(tuple(sorted(h, key=_id)) for h in hands),
        stock=tuple(unseen[at:]),
        discards=(*under, *(deck[i] for i in pile)),
        table=sit.table,
        opened=sit.opened_seats,
        scores=sit.scores,
        taken_from_discard=sit.taken_from_discard,
        laid_this_turn=sit.laid_this_turn,
        claim_answers=(None,) * sit.seats if phase is Phase.CLAIM else (),
        exhaustions=sit.exhaustions,
        turns_completed=sit.turns_completed,
    )


def _id(c: Card) -> int:
    return c.id


def _without(hand: Sequence[Card], card_id: int) -> tuple[Card, ...]:
    return tuple(c for c in hand if c.id != card_id)


class SearchBot(Bot):
    name = "search"
    worlds = 6  # the budget: sampled worlds per searched decision (each plays every candidate)
    min_worlds = 3  # worlds played before it may stop early (no challenger ahead)
    min_overrule = 4  # worlds a challenger needs before it may overrule expert
    horizon_turns: int | None = None  # a rollout's completed turns (None: to the round's end)
    time_ms: float | None = None  # also stop sampling worlds after this long (not reproducible)
    max_candidates = 2  # expert's move and its next best
    margin = 3.0  # points per round another move must save on average
    z = 2.5  # ... and standard errors of the paired mean difference
    #: which decisions it searches (each a measured option; docs/BOTS.md)
    search_claims = True  # a May I? expert would make before opening: claim or pass
    search_draws = True  # the pile against the stock, where the top card is of use
    search_lay = True  # laying the contract now or holding it a turn
    #: discards: "all", "open" (once open: the endgame) or "none", per rule set name
    #: contract's rounds of sets only (1 and 4: lay-offs fill up, the 200-turn cap ends
    #: 90 % of them, so a rollout costs 5-10x a round that someone goes out of)
    search_capped = False
    search_discards: dict[str, str] = {"whiskertrail": "open", "contract": "none"}  # noqa: RUF012

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.base = ExpertBot(seed)
        self.random = random.Random(f"search:{seed}")
        self.memory = TableMemory()
        #: counts for the reports: decisions, decisions searched, overruled, rollouts
        #: played, and the seconds spent searching
        self.decisions = 0
        self.searched = 0
        self.overruled = 0
        self.rollouts = 0
        self.seconds = 0.0
        #: per kind of decision searched ("claim", "draw", "lay", "discard"): [searched, overruled]
        self.kinds: dict[str, list[int]] = {}

    @property
    def budget_rollouts(self) -> int:
        """The most rollouts one decision may play: worlds × candidates."""
        return self.worlds * self.max_candidates

    def setup(self, rules: RuleSet, seat: int) -> None:
        super().setup(rules, seat)
        self.base.setup(rules, seat)

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        sit = situation
        self.decisions += 1
        self.memory.observe(sit)
        trial = self.base.clone()
        base_action = trial.choose(sit, legal, _UNUSED)  # expert draws no random numbers
        candidates = self.candidates(sit, legal, base_action, trial)
        chosen = base_action
        if len(candidates) > 1:
            started = time.perf_counter()
            chosen = self._search(sit, candidates, trial)
            self.seconds += time.perf_counter() - started
        self.base = trial
        if chosen != base_action:
            self.base.remember(chosen)
        if isinstance(chosen, Discard):
            self.memory.discarded(chosen.card)
        return chosen

    def candidates(
        self, sit: Situation, legal: Sequence[Action], base_action: Action, base: ExpertBot
    ) -> list[Action]:
        """Expert's move first, then the challengers worth a search (none: no search)."""
        if not self.search_capped and capped_round(sit):
            return []
        other = challenger(sit, legal, base_action, base)
        if other is not None:
            wanted = {
                "claim": self.search_claims,
                "draw": self.search_draws,
                "lay": self.search_lay,
            }[decision_kind(base_action)]
            return [base_action, other] if wanted else []
        if sit.phase != "play":
            return []
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return []
        if not isinstance(base_action, Discard):
            return []
        which = self.search_discards.get(sit.rules.name, "none")
        if which == "none" or (which == "open" and not sit.opened):
            return []
        ranked = base.ranked_discards(sit, discards)
        by_id = {c.id: c for c in sit.hand}
        kind = by_id[base_action.card].kind
        rest = [a for a in ranked if by_id[a.card].kind != kind]
        if not sit.opened:  # only leaves as close to the contract as expert's
            fewest = missing(_without(sit.hand, base_action.card), sit)
            rest = [a for a in rest if missing(_without(sit.hand, a.card), sit) <= fewest]
        return [base_action, *rest[: self.max_candidates - 1]]

    def _search(self, sit: Situation, candidates: Sequence[Action], base: ExpertBot) -> Action:
        """Expert's move unless a challenger saves ``margin`` points a round on average over
        at least ``min_worlds`` worlds and ``z`` standard errors of the paired difference.
        Stops early once ``min_worlds`` are played and no challenger is ahead."""
        started = time.perf_counter()
        values: list[list[float]] = [[] for _ in candidates]
        deadline = None if self.time_ms is None else started + self.time_ms / 1000
        for w in range(self.worlds):
            if w and deadline is not None and time.perf_counter() >= deadline:
                break
            if w >= self.min_worlds and not any(
                _mean(_gains(values[0], values[i])) > 0 for i in range(1, len(candidates))
            ):
                break  # no challenger ahead: expert's move stands
            world = sample_world(sit, self.memory, self.random)
            if world is None:
                break
            for i, action in enumerate(candidates):
                values[i].append(self._rollout(world, sit.seat, action, base))
        self.searched += 1
        tally = self.kinds.setdefault(decision_kind(candidates[0]), [0, 0])
        tally[0] += 1
        best, best_gain = 0, 0.0
        for i in range(1, len(candidates)):
            gains = _gains(values[0], values[i])
            if len(gains) < max(2, self.min_overrule):
                continue
            mean = _mean(gains)
            if mean < self.margin or mean <= best_gain:
                continue
            var = sum((g - mean) ** 2 for g in gains) / (len(gains) - 1)
            if mean < self.z * math.sqrt(var / len(gains)):
                continue
            best, best_gain = i, mean
        if best:
            self.overruled += 1
            tally[1] += 1
        return candidates[best]

    def _rollout(
        self,
        world: GameState,
        seat: int,
        action: Action,
        base: ExpertBot,
        others: Sequence[ExpertBot] | None = None,
    ) -> float:
        """The seat's penalty for the round in ``world`` if it plays ``action`` now, every
        seat then playing ``expert`` (with what this seat remembers of the discards, or
        copies of ``others``, each seat's own expert, where given)."""
        self.rollouts += 1
        players = [
            base.clone() if others is None or s == seat else others[s].clone()
            for s in range(world.seats)
        ]
        players[seat].remember(action)
        for s, bot in enumerate(players):
            bot.seat = s
        start_round = world.round_number
        stop = None if self.horizon_turns is None else world.turns_completed + self.horizon_turns
        state, _ = world.apply_action(seat, action)
        while not state.is_terminal() and state.round_number == start_round:
            if stop is not None and state.turns_completed >= stop:
                # what the seat would score if the round ended now
                return float(sum(state.rules.penalty(c) for c in state.hands[seat]))
            who = state.to_act[0]
            state, _, _ = engine_turn(state, who, players[who], _UNUSED)
        return float(state.scores[seat] - world.scores[seat])


def _gains(base: Sequence[float], other: Sequence[float]) -> list[float]:
    """Per world, how many points the challenger saves over expert's move."""
    return [b - v for b, v in zip(base, other, strict=True)]


def challenger(
    sit: Situation, legal: Sequence[Action], base_action: Action, base: ExpertBot
) -> Action | None:
    """The other side of a two-way decision worth a second look, or None: passing a May I?
    expert makes before opening (once open expert never claims: a claim's penalty card
    stays to the end); the stock against the pile expert takes, or the pile when its top
    is of use (:func:`_of_use`); holding the contract a turn (expert's closed discard)
    against laying it."""
    if sit.phase == "claim":
        return PassClaim() if base_action == Claim() and not sit.opened else None
    if sit.phase == "draw":
        if _PILE not in legal or _STOCK not in legal:
            return None
        if base_action == _PILE:
            return _STOCK
        top = sit.discard_top
        return _PILE if top is not None and _of_use(top, sit) else None
    if sit.phase == "play" and isinstance(base_action, LayContract):
        discards = [a for a in legal if isinstance(a, Discard)]
        return base.ranked_discards(sit, discards)[0] if discards else None
    return None


def decision_kind(action: Action) -> str:
    """The kind of decision an action answers: claim, draw, lay or discard."""
    if isinstance(action, Claim | PassClaim):
        return "claim"
    if isinstance(action, Draw):
        return "draw"
    return "lay" if isinstance(action, LayContract) else "discard"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _of_use(c: Card, sit: Situation) -> bool:
    """Whether the pile's top might help a hand expert would not take it for: closed, a
    card of a rank it holds or of a suit it holds within two ranks (a meld partner)."""
    if sit.opened or c.is_joker:
        return False
    for x in sit.hand:
        if x.is_joker:
            continue
        if x.rank == c.rank or (x.suit == c.suit and abs(x.rank - c.rank) <= 2):
            return True
    return False


class SearchBot4(SearchBot):
    """The budget study: at most 4 worlds per searched decision."""

    name = "search4"
    worlds = 4
    min_worlds = 2


class SearchBot16(SearchBot):
    """The budget study: at most 16 worlds per searched decision."""

    name = "search16"
    worlds = 16


class SearchBot32(SearchBot):
    """The budget study: at most 32 worlds per searched decision."""

    name = "search32"
    worlds = 32
