"""The environment's one ``Discrete`` action space: a stable meaning per index, by card type.

The two decks' copies of a card are interchangeable for every decision, so an index
names a card *type* (``suit * 13 + rank - 1`` for a natural, :data:`JOKER_TYPE` for a
joker), never a physical id.  The layout, for a table of ``slots`` meld slots and
``layouts`` contract candidates::

    0 draw from the stock         1 take the discard pile's top
    2 claim (May I?)              3 pass (May I?)               4 end the turn (no discard)
    discard t                     DISCARD + t                             (53)
    lay off t onto slot s, end e  LAY_OFF + (t * slots + s) * 2 + e       (53 x slots x 2)
    swap t for the joker in s     SWAP + t * slots + s                    (52 x slots)
    an extra meld                 EXTRA + key                             (194, see extra_meld_key)
    contract layout k             LAYOUT + k                              (layouts)

``e`` is 0 for a set, a card that fits one end only, or the low end; 1 for the high end.
Layout 0 is the solver's own choice (``LayContract()``); layouts 1.. are the other
canonical layouts (:func:`contract_layouts`) where the rules let a seat name its melds.

:func:`choices` maps a seat's legal actions onto the indices: the first action of each
index (lowest card id) stands for its class, so index → action → index is the identity
and the map from the legal set's classes to the mask is one-to-one (tests check both).
What does not fit (a meld slot past ``slots``, a layout past ``layouts``) is left out
of the mask and counted in :class:`Truncation`.  No numpy here: the tournament's
recorder imports this module without the training extra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.actions import (
    Action,
    Claim,
    Discard,
    Draw,
    DrawSource,
    EndTurn,
    ExtraMeld,
    LayContract,
    LayOff,
    MeldSpec,
    PassClaim,
    SwapJoker,
)
from engine.cards import JOKER_RANK, MAX_DECKS, MAX_JOKERS, Card
from engine.melds import End, Meld
from engine.rulesets import MeldKind, RuleSet
from engine.solver import JOKER_TYPE, Selection, best_selection, best_selections_without

__all__ = [
    "CARD_TYPES",
    "JOKER_TYPE",
    "LAYOUT_FEATURES",
    "TYPE_OF_ID",
    "ActionLayout",
    "Choices",
    "Truncation",
    "card_type",
    "choices",
    "contract_layouts",
    "extra_meld_key",
]

CARD_TYPES = 53  # 52 natural kinds, then the joker (JOKER_TYPE: the solver's, 52)
EXTRA_KEYS = 13 * 2 + 4 * 14 * 3  # sets by rank (+joker), runs by suit, start and form
LAYOUT_FEATURES = 5  # per contract candidate: cards, jokers, points laid, cards and points left
DEFAULT_LAYOUTS = 8
_EXTRA_SLOTS = 12  # meld slots for extra melds, where the rules allow them


def card_type(c: Card) -> int:
    """The type of a card: what the two decks' copies share (the joker is one type)."""
    # (a natural's id is deck * 52 + its type: docs/RULES.md's id layout)
    return JOKER_TYPE if c.rank == JOKER_RANK else c.id % 52


def _type_of_id(decks: int) -> tuple[int, ...]:
    """Card id -> type, for a game of ``decks`` decks (jokers after the naturals)."""
    naturals = decks * 52
    return tuple(i % 52 if i < naturals else JOKER_TYPE for i in range(naturals + MAX_JOKERS))


#: card id -> :func:`card_type`, by the number of decks (the hot paths' table)
TYPE_OF_ID = {decks: _type_of_id(decks) for decks in range(1, MAX_DECKS + 1)}


def default_slots(rules: RuleSet) -> int:
    """Meld slots of a rule set's action space: every seat's contract at its largest, and
    room for extra melds; independent of the seat count, so an index means one thing
    at every table size of one rule set."""
    contract = max(len(c.melds) for c in rules.contracts)
    return rules.max_players * contract + (_EXTRA_SLOTS if rules.extra_melds else 0)


@dataclass(frozen=True, slots=True)
class ActionLayout:
    """Where each block of actions starts, for ``slots`` meld slots and ``layouts``."""

    slots: int
    layouts: int = DEFAULT_LAYOUTS

    DRAW_STOCK = 0
    TAKE_DISCARD = 1
    CLAIM = 2
    PASS = 3
    END_TURN = 4
    DISCARD = 5

    @classmethod
    def for_rules(cls, rules: RuleSet, layouts: int = DEFAULT_LAYOUTS) -> ActionLayout:
        return cls(default_slots(rules), layouts)

    # each block's start and the whole size, computed once (read on every step)
    lay_off: int = field(init=False, repr=False, compare=False)
    swap: int = field(init=False, repr=False, compare=False)
    extra: int = field(init=False, repr=False, compare=False)
    layout: int = field(init=False, repr=False, compare=False)
    size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lay_off = self.DISCARD + CARD_TYPES
        swap = lay_off + CARD_TYPES * self.slots * 2
        extra = swap + (CARD_TYPES - 1) * self.slots
        layout = extra + EXTRA_KEYS
        for name, value in (
            ("lay_off", lay_off),
            ("swap", swap),
            ("extra", extra),
            ("layout", layout),
            ("size", layout + self.layouts),
        ):
            object.__setattr__(self, name, value)

    def describe(self, index: int) -> str:
        """What an index means, in words (for logs and docs)."""
        if index < self.DISCARD:
            return ("draw", "take discard", "claim", "pass", "end turn")[index]
        if index < self.lay_off:
            return f"discard type {index - self.DISCARD}"
        if index < self.swap:
            t, rest = divmod(index - self.lay_off, self.slots * 2)
            slot, end = divmod(rest, 2)
            return f"lay off type {t} on slot {slot} at end {end}"
        if index < self.extra:
            t, slot = divmod(index - self.swap, self.slots)
            return f"swap type {t} for the joker of slot {slot}"
        if index < self.layout:
            return f"extra meld {index - self.extra}"
        if index < self.size:
            return f"contract layout {index - self.layout}"
        raise IndexError(index)


def extra_meld_key(spec: MeldSpec, cards: Sequence[Card]) -> int:
    """The extra-meld block's key of a meld: a set by its rank and whether it holds a
    joker; a run by its suit, its lowest natural's position (an ace above the king: 14)
    and its form: plain, a joker at an end, or a joker bridging a gap."""
    naturals = [c for c in cards if c.rank != JOKER_RANK]
    joker = len(naturals) != len(cards)
    if spec.kind is MeldKind.SET:
        return (naturals[0].rank - 1) * 2 + int(joker)
    positions = [c.rank for c in naturals]
    # an ace after a king stands at 14 (the engine lists a run's naturals in rank order)
    for k in range(1, len(positions)):
        if positions[k] < positions[k - 1]:
            positions[k] += 13
    start = positions[0]
    form = 0 if not joker else (1 if positions[-1] - start + 1 == len(positions) else 2)
    return 26 + ((naturals[0].suit * 14 + start - 1) * 3 + form)


@dataclass
class Truncation:
    """Legal actions the layout could not index, counted (reported by the env's info)."""

    slots: int = 0  # lay-offs or swaps onto a meld slot past the layout's
    layouts: int = 0  # contract layouts past the top K
    collisions: int = 0  # two different extra melds on one key (never seen; counted)

    def total(self) -> int:
        return self.slots + self.layouts + self.collisions


@dataclass
class Choices:
    """A seat's legal actions on the index space: the mask and the action of each index."""

    mask: bytearray
    actions: dict[int, Action]
    layout_features: list[tuple[int, ...]] = field(default_factory=list)

    def action(self, index: int) -> Action:
        found = self.actions.get(index)
        if found is None:
            raise ValueError(f"action {index} is not legal now")
        return found


def contract_layouts(
    hand: Sequence[Card], rules: RuleSet, round_number: int, auto: Selection
) -> list[Selection]:
    """The canonical contract layouts of a hand, the solver's own first: then, for each
    card type the solver's layout uses (in type order), the best layout keeping every
    copy of that type in hand, and the best without jokers; distinct by card types,
    ranked by points laid (most first). Deterministic: the same hand, the same list."""
    types = TYPE_OF_ID[rules.decks]
    first = _signature(auto, types)
    seen = {first}
    found: list[tuple[int, tuple[tuple[int, ...], ...], Selection]] = []
    used = sorted({t for sig in first for t in sig})
    # (the solver's card types: a natural's kind, the joker JOKER_TYPE)
    for other in best_selections_without(hand, rules, round_number, used):
        if other is not None:
            signature = _signature(other, types)
            if signature not in seen:
                seen.add(signature)
                found.append((-other.points, signature, other))
    found.sort(key=lambda f: (f[0], f[1]))
    return [auto, *(s for _, _, s in found)]


def _signature(selection: Selection, types: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    # (types: TYPE_OF_ID's table of the game's decks, card_type by id: the hot path)
    return tuple(tuple(sorted([types[c.id] for c in m.cards])) for m in selection.melds)


def _layout_features(size: int, held: int, s: Selection) -> tuple[int, ...]:
    """A candidate's features, for a hand of ``size`` cards and ``held`` penalty points."""
    laid = sum(len(m.cards) for m in s.melds)
    left = held - s.points
    return (laid, s.jokers, min(127, s.points // 2), size - laid, min(127, left // 2))


def _explicit(selection: Selection) -> LayContract:
    return LayContract(
        tuple(MeldSpec(m.kind, tuple(c.id for c in m.cards), _start(m)) for m in selection.melds)
    )


def _start(m: Meld) -> int | None:
    return m.rank if m.kind is MeldKind.RUN else None


def _strands(hand: Sequence[Card], selection: Selection, blocked: int | None) -> bool:
    if blocked is None:
        return False
    used = {c.id for m in selection.melds for c in m.cards}
    left = [c.id for c in hand if c.id not in used]
    return left == [blocked]


def choices(
    layout: ActionLayout,
    legal: Sequence[Action],
    hand: Sequence[Card],
    rules: RuleSet,
    round_number: int,
    blocked: int | None,
    truncation: Truncation,
    auto: Selection | None = None,
    select: Callable[[], Selection | None] | None = None,
) -> Choices:
    """The legal actions on the index space.  ``hand``: the seat's; ``blocked``: the card
    it may not strand (taken from the pile this turn, in a round with discards);
    ``auto``: the solver's layout when the legal set holds ``LayContract()`` (else
    ``select()``'s, else computed here)."""
    mask = bytearray(layout.size)
    actions: dict[int, Action] = {}
    features: list[tuple[int, ...]] = []
    types = TYPE_OF_ID[rules.decks]  # card id -> type
    slots = layout.slots
    discard = layout.DISCARD
    for action in legal:
        kind = type(action)
        if kind is Discard:
            index = discard + types[action.card]  # type: ignore[union-attr]
        elif kind is LayOff:
            assert isinstance(action, LayOff)
            if action.meld >= slots:
                truncation.slots += 1
                continue
            end = 1 if action.end is End.HIGH else 0
            index = layout.lay_off + (types[action.card] * slots + action.meld) * 2 + end
        elif kind is Draw:
            assert isinstance(action, Draw)
            index = layout.DRAW_STOCK if action.source is DrawSource.STOCK else layout.TAKE_DISCARD
        elif kind is Claim:
            index = layout.CLAIM
        elif kind is PassClaim:
            index = layout.PASS
        elif kind is EndTurn:
            index = layout.END_TURN
        elif kind is SwapJoker:
            assert isinstance(action, SwapJoker)
            if action.meld >= slots:
                truncation.slots += 1
                continue
            index = layout.swap + types[action.card] * slots + action.meld
        elif kind is ExtraMeld:
            assert isinstance(action, ExtraMeld)
            by_id = {c.id: c for c in hand}
            key = extra_meld_key(action.meld, [by_id[i] for i in action.meld.cards])
            index = layout.extra + key
            if index in actions and actions[index] != action:
                truncation.collisions += 1
                continue
        elif kind is LayContract:
            if auto is None:
                auto = select() if select is not None else best_selection(hand, rules, round_number)
            assert auto is not None, "LayContract() is legal only when the contract lays"
            candidates = [auto]
            if rules.explicit_contract:
                candidates = contract_layouts(hand, rules, round_number, auto)
                candidates = [auto] + [s for s in candidates[1:] if not _strands(hand, s, blocked)]
            if len(candidates) > layout.layouts:
                truncation.layouts += len(candidates) - layout.layouts
                candidates = candidates[: layout.layouts]
            penalty = rules.penalty
            held = sum([penalty(c) for c in hand])
            for k, selection in enumerate(candidates):
                index = layout.layout + k
                mask[index] = 1
                actions[index] = action if k == 0 else _explicit(selection)
                features.append(_layout_features(len(hand), held, selection))
            continue
        else:  # pragma: no cover - every action type is above
            raise TypeError(f"not an action: {action!r}")
        if index not in actions:
            mask[index] = 1
            actions[index] = action
    return Choices(mask, actions, features)


def index_of(layout: ActionLayout, action: Action, hand: Sequence[Card]) -> int:
    """The index of one legal action (the inverse of :func:`choices` on its classes): a
    contract laid by the solver's choice is layout 0, named melds are not looked up here."""
    by_id = {c.id: c for c in hand}
    slots = layout.slots
    match action:
        case Draw(source=source):
            return layout.DRAW_STOCK if source is DrawSource.STOCK else layout.TAKE_DISCARD
        case Claim():
            return layout.CLAIM
        case PassClaim():
            return layout.PASS
        case EndTurn():
            return layout.END_TURN
        case Discard(card=cid):
            return layout.DISCARD + card_type(by_id[cid])
        case LayOff(card=cid, meld=meld, end=end):
            e = 1 if end is End.HIGH else 0
            return layout.lay_off + (card_type(by_id[cid]) * slots + meld) * 2 + e
        case SwapJoker(card=cid, meld=meld):
            return layout.swap + card_type(by_id[cid]) * slots + meld
        case ExtraMeld(meld=spec):
            return layout.extra + extra_meld_key(spec, [by_id[i] for i in spec.cards])
        case LayContract(melds=None):
            return layout.layout
    raise ValueError(f"no index for {action!r}")
