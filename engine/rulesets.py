"""Rule sets as data.

Everything the two games differ in lives in one :class:`RuleSet` value; the
engine has no ``if name == "contract"`` anywhere.  A custom rule set is validated
when it is built and has a stable hash (SHA-256 of its canonical JSON form), so a
tournament result or a replay can name exactly the rules it was played under.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, NoReturn

from engine.cards import JOKER_RANK, MAX_DECKS, MAX_JOKERS, Card
from engine.errors import InvalidActionError, excerpt

# The limits of a custom rule set (docs/API.md, "Limits").  With them every score a
# game can reach (rounds x the whole deck in one hand x the top penalty, at most
# 32 x 432 x 1000) fits the stored int32 and every count its uint32.
MAX_NAME = 64  # characters of a rule set's or a contract's name
MIN_SEATS = 2
MAX_SEATS = 8
MIN_MELD = 3  # the fewest cards of a set (set_min) or a run (run_min)
MAX_ROUNDS = 32  # contracts
MAX_PENALTY = 1000  # joker_penalty, ace_penalty, face_penalty
MAX_MELD = 64  # cards a contract meld, set_max or max_jokers_per_meld may name
MAX_CLAIM_PENALTY_CARDS = 10
MAX_EXHAUSTIONS = 100
MAX_TURN_CAP = 10_000
MAX_SCORE = 2**31 - 1  # the stored int32


class MeldKind(StrEnum):
    SET = "set"
    RUN = "run"


class Stalemate(StrEnum):
    """How a round ends when nobody goes out."""

    EXHAUSTIONS = "exhaustions"  # whiskertrail: the Nth stock exhaustion (or the turn cap)
    DRY = "dry"  # contract: a draw finds stock and discards dry


@dataclass(frozen=True, slots=True)
class MeldRequirement:
    kind: MeldKind
    size: int  # exact size when the contract says so, else the minimum


@dataclass(frozen=True, slots=True)
class Contract:
    name: str
    melds: tuple[MeldRequirement, ...]
    deal: int  # cards dealt to each player
    discards: bool = True  # contract round 7: False, the turn ends without a discard

    @property
    def cards_required(self) -> int:
        return sum(m.size for m in self.melds)

    def describe(self) -> str:
        parts: dict[tuple[MeldKind, int], int] = {}
        for m in self.melds:
            parts[(m.kind, m.size)] = parts.get((m.kind, m.size), 0) + 1
        words = []
        for (kind, size), n in parts.items():
            noun = "set" if kind is MeldKind.SET else "run"
            words.append(f"{n} {noun}{'s' if n > 1 else ''} of {size}")
        return " + ".join(words)


@dataclass(frozen=True, slots=True)
class RuleSet:
    name: str
    contracts: tuple[Contract, ...]
    jokers: int
    decks: int = 2
    min_players: int = 2
    max_players: int = 4
    # --- melds
    exact_contract_sizes: bool = True  # whiskertrail: contract melds use exactly their size
    set_min: int = 3
    set_max: int | None = None  # contract: 4
    set_distinct_suits: bool = False
    run_min: int = 4
    ace_high: bool = False  # contract: J-Q-K-A is a run too
    max_jokers_per_meld: int | None = 1
    min_naturals_per_meld: int = 2
    # --- penalties
    joker_penalty: int = 25
    ace_penalty: int = 15
    face_penalty: int = 10
    # --- turn structure
    draw_from_discard: bool = True
    initial_upcard: bool = True
    explicit_contract: bool = False  # a player may name the melds of its contract
    layoff_jokers: bool = False
    layoff_on_opening_turn: bool = True
    extra_melds: bool = True
    joker_swap: bool = False
    may_i: bool = False
    claim_penalty_cards: int = 1
    # --- stalemate
    stalemate: Stalemate = Stalemate.EXHAUSTIONS
    max_exhaustions: int = 3
    turn_cap: int | None = 200
    # a round ends at once, nobody out, when every seat is open and every meld on the
    # table is full (:func:`engine.melds.is_full`): nobody can empty a hand any more
    # (contract: True; False keeps the rules of the rule sets stored before it existed)
    dead_round_ends: bool = False
    # computed
    hash: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        self._validate()
        object.__setattr__(self, "hash", self._compute_hash())

    # ------------------------------------------------------------------ queries
    def penalty(self, c: Card) -> int:
        if c.rank == JOKER_RANK:
            return self.joker_penalty
        if c.rank == 1:
            return self.ace_penalty
        if c.rank >= 11:
            return self.face_penalty
        return c.rank

    def penalty_of_rank(self, rank: int) -> int:
        """Penalty by rank (0 = joker); the solver's tables are built from this."""
        if rank == JOKER_RANK:
            return self.joker_penalty
        if rank == 1:
            return self.ace_penalty
        return self.face_penalty if rank >= 11 else rank

    @property
    def rounds(self) -> int:
        return len(self.contracts)

    @property
    def deck_size(self) -> int:
        return self.decks * 52 + self.jokers

    @property
    def highest_run_rank(self) -> int:
        """14 where an ace may stand above the king."""
        return 14 if self.ace_high else 13

    def contract(self, round_number: int) -> Contract:
        """The contract of round ``round_number`` (1-based, as players count)."""
        if not 1 <= round_number <= len(self.contracts):
            raise InvalidActionError(
                f"rule set {excerpt(self.name)} has rounds 1..{self.rounds}, not {round_number}"
            )
        return self.contracts[round_number - 1]

    # --------------------------------------------------------------- validation
    def _validate(self) -> None:
        """Refuse a rule set a game could not be played to its end under.

        Every number is bounded (the limits above, documented in docs/API.md), so
        every score a game can reach fits the stored ``int32`` and every count its
        ``uint32``; every contract can be dealt and laid.
        """

        def fail(msg: str) -> NoReturn:
            raise InvalidActionError(f"invalid rule set {excerpt(self.name)}: {msg}")

        def bounded(value: object, what: str, low: int, high: int) -> None:
            if type(value) is not int or not low <= value <= high:
                fail(f"{what} must be an integer in {low}..{high}, not {excerpt(value)}")

        def optional(value: object, what: str, low: int, high: int) -> None:
            if value is not None:
                bounded(value, what, low, high)

        if not isinstance(self.name, str) or not 1 <= len(self.name) <= MAX_NAME:
            fail(f"a rule set's name has 1..{MAX_NAME} characters")
        bounded(self.decks, "decks", 1, MAX_DECKS)
        bounded(self.jokers, "jokers", 0, MAX_JOKERS)
        bounded(self.min_players, "min_players", MIN_SEATS, MAX_SEATS)
        bounded(self.max_players, "max_players", MIN_SEATS, MAX_SEATS)
        if self.min_players > self.max_players:
            fail("min_players is above max_players")
        for what, penalty in (
            ("joker_penalty", self.joker_penalty),
            ("ace_penalty", self.ace_penalty),
            ("face_penalty", self.face_penalty),
        ):
            bounded(penalty, what, 0, MAX_PENALTY)
        bounded(self.set_min, "set_min", MIN_MELD, MAX_MELD)
        optional(self.set_max, "set_max", MIN_MELD, MAX_MELD)
        bounded(self.run_min, "run_min", MIN_MELD, self.highest_run_rank)
        optional(self.max_jokers_per_meld, "max_jokers_per_meld", 0, MAX_MELD)
        bounded(self.min_naturals_per_meld, "min_naturals_per_meld", 1, MAX_MELD)
        bounded(self.claim_penalty_cards, "claim_penalty_cards", 0, MAX_CLAIM_PENALTY_CARDS)
        bounded(self.max_exhaustions, "max_exhaustions", 1, MAX_EXHAUSTIONS)
        optional(self.turn_cap, "turn_cap", 1, MAX_TURN_CAP)
        for what in _FLAGS:
            if type(getattr(self, what)) is not bool:
                fail(f"{what} must be true or false, not {excerpt(getattr(self, what))}")
        if not isinstance(self.stalemate, Stalemate):
            fail(f"stalemate must be one of {', '.join(s.value for s in Stalemate)}")
        if not isinstance(self.contracts, tuple) or not 1 <= len(self.contracts) <= MAX_ROUNDS:
            fail(f"a rule set has 1..{MAX_ROUNDS} contracts")
        if self.set_max is not None and self.set_max < self.set_min:
            fail("set_max is below set_min")
        if self.set_distinct_suits and (self.set_max is None or self.set_max > 4):
            fail("sets of distinct suits hold at most 4 cards")
        if self.min_naturals_per_meld > min(self.set_min, self.run_min):
            fail(
                f"min_naturals_per_meld {self.min_naturals_per_meld} is above the smallest meld"
                f" ({min(self.set_min, self.run_min)} cards)"
            )
        if self.stalemate is Stalemate.DRY and self.turn_cap is None:
            # discards recycle forever once nobody can lay off: only the cap ends the round
            fail("a rule set with the dry stalemate needs a turn_cap")
        if self.may_i and self.draw_from_discard:
            fail("May I claims replace drawing from the discard pile; choose one")
        if self.dead_round_ends and self.extra_melds:
            # a new meld from the hand may still empty it: no round is dead for sure
            fail("dead_round_ends needs extra_melds false")
        for i, c in enumerate(self.contracts, start=1):
            self._validate_contract(i, c, fail)
        # the worst score: every round lost holding every card at the top penalty
        worst = (
            self.rounds
            * self.deck_size
            * max(self.joker_penalty, self.ace_penalty, self.face_penalty, 10)
        )
        if worst > MAX_SCORE:
            fail(f"a score could reach {worst}, above {MAX_SCORE}")

    def _validate_contract(self, i: int, c: Contract, fail: Callable[[str], NoReturn]) -> None:
        if not isinstance(c.name, str) or len(c.name) > MAX_NAME:
            fail(f"contract {i}: a contract's name has at most {MAX_NAME} characters")
        if not isinstance(c.melds, tuple) or not c.melds:
            fail(f"contract {i} has no melds")
        if type(c.discards) is not bool:
            fail(f"contract {i}: discards must be true or false")
        # the most cards of one rank a set can hold (naturals of the rank, plus jokers)
        natural_set = 4 if self.set_distinct_suits else 4 * self.decks
        jokers = self.jokers if self.max_jokers_per_meld is None else self.max_jokers_per_meld
        longest_set = min(self.set_max or MAX_MELD, natural_set + min(jokers, self.jokers))
        longest_run = self.highest_run_rank
        for m in c.melds:
            if not isinstance(m, MeldRequirement) or not isinstance(m.kind, MeldKind):
                fail(f"contract {i}: every meld is a set or a run")
            if type(m.size) is not int:
                fail(f"contract {i}: a meld's size must be an integer")
            if m.kind is MeldKind.SET:
                if not self.set_min <= m.size <= longest_set:
                    fail(
                        f"contract {i}: a set of {excerpt(m.size)} breaks the set size limits"
                        f" ({self.set_min}..{longest_set} with these decks and jokers)"
                    )
            elif not self.run_min <= m.size <= min(13, longest_run):
                fail(f"contract {i}: a run of {excerpt(m.size)} breaks the run size limits")
        if type(c.deal) is not int or c.deal < 1:
            fail(f"contract {i}: deal must be a positive integer")
        if c.deal < c.cards_required:
            fail(f"contract {i}: a deal of {c.deal} is smaller than its {c.cards_required} cards")
        needed_cards = self.max_players * c.deal + (1 if self.initial_upcard else 0) + 1
        if needed_cards > self.deck_size:
            fail(f"contract {i}: {self.max_players} hands of {c.deal} do not fit the deck")

    # ---------------------------------------------------------------- identity
    def to_dict(self) -> dict[str, Any]:
        """The plain form: every field but the hash, and but a field added since rule
        sets were first stored while it keeps its old behaviour (:data:`_ADDED_FIELDS`),
        so such a rule set keeps the form, and the hash, it had before the field."""
        data = asdict(self)
        data.pop("hash")
        for name, old_behaviour in _ADDED_FIELDS.items():
            if data[name] == old_behaviour:
                del data[name]
        return data

    def _compute_hash(self) -> str:
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Build (and validate) a rule set from its plain form; unknown keys are errors."""
        try:
            values = dict(data)
            values.pop("hash", None)
            values["contracts"] = tuple(
                Contract(
                    name=str(c["name"]),
                    melds=tuple(
                        MeldRequirement(MeldKind(m["kind"]), m["size"]) for m in c["melds"]
                    ),
                    deal=c["deal"],
                    discards=c.get("discards", True),
                )
                for c in values["contracts"]
            )
            if "stalemate" in values:
                values["stalemate"] = Stalemate(values["stalemate"])
            return cls(**values)
        except InvalidActionError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidActionError(f"malformed rule set: {exc}") from exc


#: fields added after rule sets were first stored and hashed, each with its value that
#: keeps the rules as they were: a rule set that leaves one there has the plain form and
#: the hash it had before the field existed (a stored game's rule set reads as its
#: game began; docs/DECISIONS.md)
_ADDED_FIELDS: dict[str, object] = {"dead_round_ends": False}

#: the rule set's true-or-false fields (checked to be bools: a JSON file may hold "no")
_FLAGS = (
    "exact_contract_sizes",
    "set_distinct_suits",
    "ace_high",
    "draw_from_discard",
    "initial_upcard",
    "explicit_contract",
    "layoff_jokers",
    "layoff_on_opening_turn",
    "extra_melds",
    "joker_swap",
    "may_i",
    "dead_round_ends",
)


def _s(size: int) -> MeldRequirement:
    return MeldRequirement(MeldKind.SET, size)


def _r(size: int) -> MeldRequirement:
    return MeldRequirement(MeldKind.RUN, size)


def _whiskertrail_contract(name: str, *melds: MeldRequirement) -> Contract:
    required = sum(m.size for m in melds)
    return Contract(name, tuple(melds), deal=max(10, required + 2))


WHISKERTRAIL = RuleSet(
    name="whiskertrail",
    contracts=(
        _whiskertrail_contract("Lantern Gate", _s(3), _s(3)),
        _whiskertrail_contract("Silk Bridge", _r(5)),
        _whiskertrail_contract("Brass Arcade", _s(4), _r(4)),
        _whiskertrail_contract("Moonbell Square", _s(3), _s(3), _s(3)),
        _whiskertrail_contract("Twin Canals", _r(4), _r(4)),
        _whiskertrail_contract("Royal Gardens", _s(4), _s(4)),
        _whiskertrail_contract("Comet Crossing", _s(3), _r(6)),
        _whiskertrail_contract("Wayfarers' Lodge", _r(5), _r(5)),
    ),
    jokers=4,
    min_players=2,
    max_players=4,
    exact_contract_sizes=True,
    set_max=None,
    set_distinct_suits=False,
    ace_high=False,
    max_jokers_per_meld=1,
    joker_penalty=25,
    draw_from_discard=True,
    initial_upcard=True,
    explicit_contract=False,
    layoff_jokers=False,
    layoff_on_opening_turn=True,
    extra_melds=True,
    joker_swap=False,
    may_i=False,
    stalemate=Stalemate.EXHAUSTIONS,
    max_exhaustions=3,
    turn_cap=200,
)

CONTRACT = RuleSet(
    name="contract",
    contracts=(
        Contract("2 groups", (_s(3), _s(3)), deal=10),
        Contract("1 group + 1 sequence", (_s(3), _r(4)), deal=10),
        Contract("2 sequences", (_r(4), _r(4)), deal=10),
        Contract("3 groups", (_s(3), _s(3), _s(3)), deal=12),
        Contract("2 groups + 1 sequence", (_s(3), _s(3), _r(4)), deal=12),
        Contract("1 group + 2 sequences", (_s(3), _r(4), _r(4)), deal=12),
        Contract("3 sequences", (_r(4), _r(4), _r(4)), deal=12, discards=False),
    ),
    jokers=3,
    min_players=4,
    max_players=4,
    exact_contract_sizes=False,
    set_max=4,
    set_distinct_suits=True,
    ace_high=True,
    max_jokers_per_meld=None,
    joker_penalty=15,
    draw_from_discard=False,
    initial_upcard=False,
    explicit_contract=True,
    layoff_jokers=True,
    layoff_on_opening_turn=False,
    extra_melds=False,
    joker_swap=True,
    may_i=True,
    claim_penalty_cards=1,
    stalemate=Stalemate.DRY,
    # A round ends by going out, by a dry stock, or dead: every seat open and every
    # meld full, so nobody can empty a hand (docs/RULES.md, rule 6; in the rounds of
    # groups only the usual end).  A round nobody goes out of that is not dead (a seat
    # never opens) would recycle the discards forever: as the rule book says, the same
    # 200-completed-turn cap as whiskertrail's ends it (DECISIONS.md).
    turn_cap=200,
    dead_round_ends=True,
)

PRESETS: dict[str, RuleSet] = {r.name: r for r in (WHISKERTRAIL, CONTRACT)}


def ruleset(name: str) -> RuleSet:
    try:
        return PRESETS[name]
    except KeyError:
        raise InvalidActionError(
            f"unknown rule set {excerpt(name)}; known: {', '.join(sorted(PRESETS))}"
        ) from None
