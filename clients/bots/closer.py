"""``closer``: ``expert``, with contract's May I? back in its round of three groups.

``expert`` never claims in a contract round of groups only (contract's 1 and 4): when it
was measured (docs/BOTS.md, ``e2e6c06``) the 200-turn cap ended those rounds, and every
claim was one card more held at the end.  Since then a *dead* round ends as soon as every
seat is open and every group holds four cards (RULES.md, rule 6), and the two rounds
differ: round 1 (two groups) still ends dead long after everybody opened, so a claim is
a card more at the end, but in round 4 (three groups) a quarter of the seats never laid
their contract before someone went out, and held about 77 points each.  ``closer``:

* **May I? in a round of three groups or more** (contract's round 4), before opening,
  for a card that lowers ``missing`` (expert's rule of the other rounds).  Still never in
  a round of two groups (round 1), never once open.
* **Do not fill the table's last place** (a rule set with dead rounds): once every seat
  is open, a lay-off that leaves every meld full ends the round before this seat
  discards.  While a costlier card can be discarded instead, it discards that card and
  keeps the lay-off for a later turn (someone else may fill the place first: then the
  card stays, but the costlier one has gone).

* **``racer``'s rule** at whiskertrail tables of three or more seats (its base class):
  once an opponent is open, closed-hand discards weigh half the penalty shed against
  the live outs kept.
* **The next seat's danger** (a free pile): ``expert`` keeps a closed-hand card that
  fits a table meld (an open seat would lay it off) whoever sits next; only the next
  seat can take the discard, so ``closer`` counts that only while the next seat is
  open.  At two seats the table's melds are the next seat's while this one is closed:
  ``expert``'s games there.

Everything else is ``expert``'s.  Measured against ``expert`` in docs/BOT_STUDIES.md,
with the variants below (not kept, or kept as parts): each class flips one option.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from clients.bots.base import Situation
from clients.bots.expert import capped_round
from clients.bots.greedy import missing, progress_action
from clients.bots.racer import RacerBot
from clients.bots.strong import DiscardRank, Kind
from engine.actions import (
    Action,
    Claim,
    Discard,
    LayContract,
    LayOff,
    MeldSpec,
    PassClaim,
    SwapJoker,
)
from engine.cards import Card
from engine.melds import End, Meld, build_run, is_full, lay_off, layoff_ends, run_placements
from engine.rulesets import MeldKind
from engine.solver import Selection, best_selection

__all__ = [
    "AnyDangerBot",
    "ClaimFourBot",
    "ClaimFourLe1Bot",
    "ClaimFourLe2Bot",
    "ClaimFourNoFillBot",
    "ClaimFourOneBot",
    "ClaimGroupsBot",
    "CloserBot",
    "JokerHomeBot",
    "JokerSpotBot",
    "LayoutBot",
    "NoFillBot",
    "SwapGainBot",
    "SwapNeverBot",
    "fills_table",
    "next_open",
]

_NEVER = 99


def fills_table(sit: Situation, action: LayOff) -> bool:
    """Whether ``action`` leaves every meld on the table full (with every seat open, a
    dead round: it ends before the discard)."""
    rules = sit.rules
    c = next(x for x in sit.hand if x.id == action.card)
    table = list(sit.table)
    table[action.meld] = lay_off(table[action.meld], c, rules, action.end)
    return all(is_full(m, rules) for m in table)


def next_open(sit: Situation) -> bool:
    """Whether the seat that plays after this one has laid its contract: at a free pile
    the only seat that can take this seat's discard."""
    nxt = (sit.seat + 1) % sit.seats if sit.seats else sit.seat
    return nxt < len(sit.opened_seats) and sit.opened_seats[nxt]


class CloserBot(RacerBot):
    name = "closer"

    #: May I? before opening in a round of groups only whose contract has at least this
    #: many groups (expert: never)
    claim_groups_from: int = 3
    #: ... only when the claim leaves at most this many cards missing
    claim_group_after: int = _NEVER
    #: in the other rounds of groups only, claim when it lays the contract at once
    claim_group_complete: bool = False
    #: once every seat is open, keep a lay-off that would fill the table's last place
    #: while a costlier card can be discarded
    no_fill: bool = True
    #: before opening, swap a table joker into the hand: "always" (greedy's, expert's),
    #: "gain" (only when it lowers ``missing``) or "never"
    swap_closed: str = "always"
    #: a joker's lay-off: on a group (never swapped) or the run end whose natural has the
    #: fewest unseen copies, rather than the first place listed
    joker_home: bool = False
    #: lay-down (contract): place each run's jokers where the fewest unseen naturals
    #: could swap them out
    joker_spot: bool = False
    #: lay-down (contract): among the canonical layouts, most points laid plus the
    #: penalty of the cards left that would lay off on the table
    layout_leftovers: bool = False
    #: a free pile (whiskertrail): closed discards keep a card that fits the table (the
    #: danger) only while the seat that draws next is open (expert: whoever sits next)
    next_danger: bool = True

    # ------------------------------------------------------------------ discards
    def _closed_rank(self, sit: Situation) -> DiscardRank:
        base = super()._closed_rank(sit)
        if not self.next_danger or not sit.rules.draw_from_discard or next_open(sit):
            return base

        def rank(c: Card, missing: int, live: int) -> tuple[int, ...]:
            key = base(c, missing, live)
            return (key[0], 0, *key[2:])  # expert's and racer's danger, second: zero

        return rank

    # ------------------------------------------------------------------ May I?
    def _claim(self, sit: Situation, legal: Sequence[Action]) -> Action:
        if sit.opened or not capped_round(sit):
            return super()._claim(sit, legal)
        top = sit.discard_top
        passing = next((a for a in legal if isinstance(a, PassClaim)), legal[0])
        if top is None or not any(isinstance(a, Claim) for a in legal):
            return passing
        groups = len(sit.rules.contract(sit.round_number).melds)
        if groups < self.claim_groups_from and not self.claim_group_complete:
            return super()._claim(sit, legal)  # expert's: pass
        before = missing(sit.hand, sit)
        if before == 0:
            return passing
        after = missing((*sit.hand, top), sit)
        if groups >= self.claim_groups_from:
            good = after < before and after <= self.claim_group_after
        else:
            good = after == 0
        return Claim() if good else passing

    # ------------------------------------------------------------------ play
    def _decide(self, sit: Situation, legal: Sequence[Action]) -> Action:
        if sit.phase == "play":
            layouts = (self.joker_spot or self.layout_leftovers) and sit.rules.explicit_contract
            if layouts and any(isinstance(a, LayContract) for a in legal):
                lay = self._lay(sit)
                if lay is not None:
                    return lay
            if self.swap_closed != "always" and not sit.opened:
                swaps = [a for a in legal if isinstance(a, SwapJoker)]
                if swaps and isinstance(progress_action(sit, legal), SwapJoker):
                    kept = self._closed_swap(sit, swaps)
                    if kept is not None:
                        return kept
                    legal = [a for a in legal if not isinstance(a, SwapJoker)]
            if self.no_fill and sit.rules.dead_round_ends:
                held = self._hold_last_place(sit, legal)
                if held is not None:
                    return held
            if self.joker_home and sit.opened:
                home = self._joker_home(sit, legal)
                if home is not None:
                    return home
        return super()._decide(sit, legal)

    def _joker_home(self, sit: Situation, legal: Sequence[Action]) -> LayOff | None:
        """Where a joker expert lays off now goes: the place fewest could swap it from."""
        progress = progress_action(sit, legal)
        if not isinstance(progress, LayOff):
            return None
        joker = next(c for c in sit.hand if c.id == progress.card)
        if not joker.is_joker:
            return None
        seen = self.seen(sit)
        decks = sit.rules.decks

        def exposure(a: LayOff) -> int:
            meld = sit.table[a.meld]
            if meld.kind is MeldKind.SET:
                return 0
            low = a.end is End.LOW or (a.end is None and meld.high >= sit.rules.highest_run_rank)
            rank = meld.rank - 1 if low else meld.high + 1
            return max(0, decks - seen[(1 if rank == 14 else rank, meld.suit)])

        options = [a for a in legal if isinstance(a, LayOff) and a.card == joker.id]
        return min(options, key=exposure)

    def _closed_swap(self, sit: Situation, swaps: Sequence[SwapJoker]) -> SwapJoker | None:
        """The swap to make before opening (None: none)."""
        if self.swap_closed == "never":
            return None
        before = missing(sit.hand, sit)
        for a in swaps:
            joker = next(c for c in sit.table[a.meld].cards if c.is_joker)
            hand = (*(c for c in sit.hand if c.id != a.card), joker)
            if missing(hand, sit) < before:
                return a
        return None

    def _hold_last_place(self, sit: Situation, legal: Sequence[Action]) -> Action | None:
        """The move instead of a lay-off that would end a dead round before this seat
        discards (None: expert's move)."""
        if len(sit.hand) <= 1 or not all(sit.opened_seats):
            return None
        progress = progress_action(sit, legal)
        if not isinstance(progress, LayOff) or not fills_table(sit, progress):
            return None
        filling = {a for a in legal if isinstance(a, LayOff) and fills_table(sit, a)}
        other = progress_action(sit, [a for a in legal if a not in filling])
        if other is not None:
            return other  # another lay-off or a swap first
        discards = [a for a in legal if isinstance(a, Discard)]
        if not discards:
            return None
        penalty = sit.rules.penalty
        by_id = {c.id: c for c in sit.hand}
        top = max(discards, key=lambda a: (penalty(by_id[a.card]), -a.card))
        if penalty(by_id[top.card]) > penalty(by_id[progress.card]):
            return top
        return None

    # ------------------------------------------------------------------ the lay-down
    def _lay(self, sit: Situation) -> LayContract | None:
        auto = best_selection(sit.hand, sit.rules, sit.round_number)
        if auto is None:
            return None
        chosen = self._best_layout(sit, auto) if self.layout_leftovers else auto
        melds = list(chosen.melds)
        if self.joker_spot:
            seen = self.seen(sit)
            melds = [self._spot(sit, m, seen) for m in melds]
        elif chosen is auto:
            return None  # the engine's own choice: LayContract()
        specs = tuple(MeldSpec(m.kind, tuple(c.id for c in m.cards), _start(m)) for m in melds)
        return LayContract(specs)

    def _best_layout(self, sit: Situation, auto: Selection) -> Selection:
        # (imported here: the training package is no house bot's dependency)
        from clients.training.actions import contract_layouts

        rules = sit.rules
        penalty = rules.penalty

        def score(s: Selection) -> tuple[int, int]:
            used = {c.id for m in s.melds for c in m.cards}
            table: tuple[Meld, ...] = (*sit.table, *s.melds)
            fits = sum(
                penalty(c)
                for c in sit.hand
                if c.id not in used and any(layoff_ends(m, c, rules) for m in table)
            )
            return (s.points + fits, s.points)

        best, best_score = auto, score(auto)
        for s in contract_layouts(sit.hand, rules, sit.round_number, auto)[1:]:
            sc = score(s)
            if sc > best_score:
                best, best_score = s, sc
        return best

    def _spot(self, sit: Situation, m: Meld, seen: Counter[Kind]) -> Meld:
        """The run ``m`` with its jokers where the fewest unseen naturals could swap them
        out (ties: the engine's own placement)."""
        if m.kind is not MeldKind.RUN or m.jokers == 0:
            return m
        decks = sit.rules.decks
        best, best_open = m, _swappable(m, seen, decks)
        for start in run_placements(m.cards, sit.rules):
            if start != m.rank:
                other = build_run(m.cards, sit.rules, None, start)
                n = _swappable(other, seen, decks)
                if n < best_open:
                    best, best_open = other, n
        return best


def _swappable(m: Meld, seen: Counter[Kind], decks: int) -> int:
    """Copies not seen by this seat of the naturals that would swap ``m``'s jokers."""
    total = 0
    for i, c in enumerate(m.cards):
        if c.is_joker:
            rank = m.rank + i
            total += max(0, decks - seen[(1 if rank == 14 else rank, m.suit)])
    return total


def _start(m: Meld) -> int | None:
    return m.rank if m.kind is MeldKind.RUN else None


# ---------------------------------------------------------------------- variants
class ClaimFourBot(CloserBot):
    """May I? in the round of three groups; nothing else."""

    name = "claim4"
    no_fill = False


class ClaimGroupsBot(ClaimFourBot):
    """May I? in every round of groups only (contract's 1 and 4)."""

    name = "claim14"
    claim_groups_from = 2


class ClaimFourOneBot(ClaimFourBot):
    """Round 4's claims, and in round 1 a claim only when it lays the contract at once."""

    name = "claim4c1"
    claim_group_complete = True


class NoFillBot(CloserBot):
    """Keep the lay-off that fills the table's last place; expert's claims."""

    name = "nofill"
    claim_groups_from = _NEVER


class ClaimFourNoFillBot(CloserBot):
    """``closer`` under the name its contract rules were measured by (its base class has
    since given it ``racer``'s rule, which plays at whiskertrail tables only)."""

    name = "claim4nofill"


class ClaimFourLe2Bot(CloserBot):
    name = "claim4le2"
    claim_group_after = 2


class ClaimFourLe1Bot(CloserBot):
    name = "claim4le1"
    claim_group_after = 1


class SwapGainBot(CloserBot):
    """The kept rules; before opening, a joker swap only when it lowers ``missing``."""

    name = "swapgain"
    swap_closed = "gain"


class SwapNeverBot(CloserBot):
    """The kept rules; never a joker swap before opening."""

    name = "swapnever"
    swap_closed = "never"


class JokerHomeBot(CloserBot):
    """The kept rules; a joker laid off where the fewest unseen naturals could swap it."""

    name = "jokerhome"
    joker_home = True


class JokerSpotBot(CloserBot):
    """Expert's claims; at the lay-down, jokers where no natural is left to swap them."""

    name = "jokerspot"
    claim_groups_from = _NEVER
    no_fill = False
    joker_spot = True


class LayoutBot(CloserBot):
    """Expert's claims; the lay-down that sheds most now and by lay-offs next turn."""

    name = "layout"
    claim_groups_from = _NEVER
    no_fill = False
    layout_leftovers = True


class AnyDangerBot(CloserBot):
    """``closer`` before ``next_danger``: expert's danger whoever sits next."""

    name = "anydanger"
    next_danger = False
