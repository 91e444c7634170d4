"""Per-candidate features for behaviour cloning: what each legal action does to the hand.

A model over the raw observation must learn from the count planes what the solver
computes in a few microseconds (how far the hand is from the contract, which cards a
discard would cost it).  :class:`CandidateFeatures` reads the same observation vector
(nothing else: a policy over it plays in the environment and, through
:class:`~clients.training.policies.PolicyBot`, at a tournament's table) and describes
each legal index by a short float vector: its kind, and for a discard the solver's
``missing`` and live outs of the hand it leaves, its penalty, whether it fits a meld
on the table; for the pile (or a May I?) whether its top lowers ``missing`` or lays
off; for a layout the observation's candidate features.  The hand is rebuilt from the
count plane (twins are interchangeable), the table's melds from the slot features.

A policy over these features is a linear score per candidate and a softmax over the
legal ones (:class:`clients.training.cloning.FeaturePolicy`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from clients.bots.greedy import LIMIT  # the solver's limit (LIMIT + 1: further)
from clients.bots.strong import hand_live_outs
from clients.training.actions import (
    CARD_TYPES,
    JOKER_TYPE,
    LAYOUT_FEATURES,
    ActionLayout,
    card_type,
)
from clients.training.observation import SLOT_FEATURES, ObservationLayout
from engine.cards import JOKER_RANK, Card, card
from engine.game.moves import canonical_extra_melds
from engine.rulesets import RuleSet
from engine.solver import missing_cards

__all__ = ["FEATURE_NAMES", "CandidateFeatures"]

KINDS = (
    "stock",
    "pile",
    "claim",
    "pass",
    "end",
    "discard",
    "lay_off",
    "swap",
    "extra",
    "layout_0",
    "layout_k",
)
FEATURE_NAMES: tuple[str, ...] = (
    *(f"kind_{k}" for k in KINDS),
    *(f"closed_discard_missing_{m}" for m in range(LIMIT + 2)),
    "closed_discard_live",
    "closed_discard_fits",
    "closed_discard_penalty",
    "closed_discard_joker",
    "closed_discard_twin",
    "open_discard_fits",
    "open_discard_penalty",
    "open_discard_joker",
    "pile_lowers_missing",
    "pile_closed",
    "pile_fits",
    "pile_extra_meld",
    "claim_lowers_missing",
    "claim_open",
    "lay_off_penalty",
    *(f"layout_{i}" for i in range(LAYOUT_FEATURES)),
)
_F = {name: i for i, name in enumerate(FEATURE_NAMES)}


class CandidateFeatures:
    """The features of each legal index of an observation, for one rule set and table."""

    def __init__(self, rules: RuleSet, seats: int, layouts: int) -> None:
        self.rules = rules
        self.actions = ActionLayout.for_rules(rules, layouts)
        self.shape = ObservationLayout(seats, self.actions.slots, layouts)
        self.parts = self.shape.parts()
        self.size = len(FEATURE_NAMES)

    # ------------------------------------------------------------------ the observation
    def _hand(self, obs: NDArray[np.int8]) -> list[Card]:
        at = self.parts["hand"][0]
        decks = self.rules.decks
        hand: list[Card] = []
        jokers = decks * 52
        for t in np.flatnonzero(obs[at : at + CARD_TYPES]):
            n = int(obs[at + t])
            if t == JOKER_TYPE:
                hand.extend(card(jokers + k, decks) for k in range(n))
                jokers += n
            else:
                hand.extend(card(int(t) + 52 * k, decks) for k in range(n))
        return hand

    def _seen(self, obs: NDArray[np.int8]) -> Counter[tuple[int, int]]:
        """Copies of each kind the seat knows are not in the stock (hand, table, pile as
        seen, cards seen taken), as ``strong``'s memory counts them."""
        counts = np.zeros(CARD_TYPES, dtype=np.int64)
        for name in ("hand", "pile_seen", "table"):
            at = self.parts[name][0]
            counts += obs[at : at + CARD_TYPES]
        at, length = self.parts["opponents_known"]
        counts += obs[at : at + length].reshape(-1, CARD_TYPES).sum(axis=0)
        top = self.parts["discard_top"][0]
        pile = self.parts["pile_seen"][0]
        counts += np.maximum(obs[top : top + CARD_TYPES] - obs[pile : pile + CARD_TYPES], 0)
        return Counter({_kind(int(t)): int(counts[t]) for t in np.flatnonzero(counts)})

    def _melds(self, obs: NDArray[np.int8]) -> list[tuple[bool, int, int, int]]:
        """(is a run, rank, suit, length) of each meld on the table."""
        at = self.parts["slots"][0]
        out = []
        for s in range(self.actions.slots):
            f = obs[at + s * SLOT_FEATURES : at + (s + 1) * SLOT_FEATURES]
            if not f[0]:
                break
            out.append((bool(f[1]), int(f[2]), int(f[3]) - 1, int(f[4])))
        return out

    def _fits(self, t: int, melds: Sequence[tuple[bool, int, int, int]]) -> bool:
        rules = self.rules
        if t == JOKER_TYPE:
            return rules.layoff_jokers and bool(melds)
        rank, suit = t % 13 + 1, t // 13
        for run, low, msuit, length in melds:
            if not run:
                if rank == low and (rules.set_max is None or length < rules.set_max):
                    return True
                continue
            if suit != msuit or length >= 13:
                continue
            above = low + length
            if low > 1 and rank == low - 1:
                return True
            if above <= rules.highest_run_rank and (rank == above or (rank == 1 and above == 14)):
                return True
        return False

    def _missing(self, hand: Sequence[Card], round_number: int) -> int:
        found = missing_cards(hand, self.rules, round_number, LIMIT)
        return LIMIT + 1 if found is None else found

    # ------------------------------------------------------------------ the features
    def __call__(
        self, obs: NDArray[np.int8], mask: NDArray[np.int8]
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """The legal indices and their features (one row each)."""
        legal = np.flatnonzero(mask)
        out = np.zeros((len(legal), self.size), dtype=np.float32)
        a = self.actions
        slots = a.slots
        scalars = self.parts["scalars"][0]
        round_number = int(obs[scalars])
        opened = bool(obs[self.parts["seats"][0] + 1])
        top_plane = self.parts["discard_top"][0]
        tops = np.flatnonzero(obs[top_plane : top_plane + CARD_TYPES])
        top = int(tops[0]) if len(tops) else -1
        penalty = self.rules.penalty
        hand: list[Card] | None = None
        melds: list[tuple[bool, int, int, int]] | None = None
        seen: Counter[tuple[int, int]] | None = None
        missing_now = -1
        layouts_at = self.parts["layouts"][0]
        for row, index in enumerate(legal.tolist()):
            f = out[row]
            if index < a.DISCARD:
                kind = ("stock", "pile", "claim", "pass", "end")[index]
                f[_F[f"kind_{kind}"]] = 1
                if kind in ("pile", "claim") and top >= 0:
                    if hand is None:
                        hand = self._hand(obs)
                    if melds is None:
                        melds = self._melds(obs)
                    top_card = _card_of(top, hand, self.rules.decks)
                    if opened:
                        if kind == "claim":
                            f[_F["claim_open"]] = 1
                        else:
                            f[_F["pile_fits"]] = self._fits(top, melds)
                            f[_F["pile_extra_meld"]] = self.rules.extra_melds and any(
                                top_card in cards
                                for _, cards in canonical_extra_melds((*hand, top_card), self.rules)
                            )
                    else:
                        if missing_now < 0:
                            missing_now = self._missing(hand, round_number)
                        lowers = missing_now > 0 and (
                            self._missing([*hand, top_card], round_number) < missing_now
                        )
                        f[_F[f"{kind}_lowers_missing"]] = lowers
                        if kind == "pile":
                            f[_F["pile_closed"]] = 1
            elif index < a.lay_off:
                t = index - a.DISCARD
                f[_F["kind_discard"]] = 1
                if hand is None:
                    hand = self._hand(obs)
                if melds is None:
                    melds = self._melds(obs)
                c = _card_of(t, hand, self.rules.decks)
                fits = self._fits(t, melds)
                p = penalty(c) / 10
                if opened:
                    f[_F["open_discard_fits"]] = fits
                    f[_F["open_discard_penalty"]] = p
                    f[_F["open_discard_joker"]] = t == JOKER_TYPE
                else:
                    # (each discard index is one card type: judged once a call)
                    if seen is None:
                        seen = self._seen(obs)
                    rest = list(hand)
                    rest.remove(c)
                    m, live = hand_live_outs(rest, self.rules, round_number, seen)
                    f[_F[f"closed_discard_missing_{m}"]] = 1
                    f[_F["closed_discard_live"]] = live / 10
                    f[_F["closed_discard_fits"]] = fits
                    f[_F["closed_discard_penalty"]] = p
                    f[_F["closed_discard_joker"]] = t == JOKER_TYPE
                    f[_F["closed_discard_twin"]] = sum(1 for x in hand if card_type(x) == t) > 1
            elif index < a.swap:
                f[_F["kind_lay_off"]] = 1
                t = (index - a.lay_off) // 2 // slots
                f[_F["lay_off_penalty"]] = penalty(_card_of(t, (), self.rules.decks)) / 10
            elif index < a.extra:
                f[_F["kind_swap"]] = 1
            elif index < a.layout:
                f[_F["kind_extra"]] = 1
            else:
                k = index - a.layout
                f[_F["kind_layout_0" if k == 0 else "kind_layout_k"]] = 1
                at = layouts_at + k * LAYOUT_FEATURES
                first = _F["layout_0"]
                f[first : first + LAYOUT_FEATURES] = obs[at : at + LAYOUT_FEATURES] / 10
        return legal, out


def _kind(t: int) -> tuple[int, int]:
    return (JOKER_RANK, -1) if t == JOKER_TYPE else (t % 13 + 1, t // 13)


def _card_of(t: int, hand: Sequence[Card], decks: int) -> Card:
    """A card of type ``t``: the hand's own copy, else a copy not in it."""
    for c in hand:
        if card_type(c) == t:
            return c
    if t == JOKER_TYPE:
        ids = {c.id for c in hand}
        return card(next(i for i in range(decks * 52, decks * 52 + 16) if i not in ids), decks)
    ids = {c.id for c in hand}
    return card(next(t + 52 * k for k in range(decks) if t + 52 * k not in ids), decks)
