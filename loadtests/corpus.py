"""The hands the solver user sends: the conformance corpus plus seeded generated deals.

The conformance hands (``tests/data/*.jsonl``: rule set, round, hand as card codes)
are the solver's known hard and edge cases; the generated ones are what a seat
really holds — a random deal of the round's size (sometimes one card more: a hand
that has just drawn) from the rule set's full deck — so the corpus covers every
round of both rule sets.  Generation is seeded: the same seed, the same corpus.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.cards import full_deck
from engine.rulesets import PRESETS

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
CONFORMANCE_FILES = ("solver-cases.jsonl", "solver-edge-cases.jsonl", "missing-cases.jsonl")


@dataclass(frozen=True, slots=True)
class Hand:
    rule_set: str
    round: int
    cards: tuple[str, ...]  # card codes, "7H", "JK"; duplicates are the second deck's


def conformance_hands(files: Iterable[Path] | None = None) -> list[Hand]:
    """Every hand of the conformance files (each distinct hand once)."""
    paths = list(files) if files is not None else [DATA / name for name in CONFORMANCE_FILES]
    seen: set[Hand] = set()
    hands: list[Hand] = []
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            hand = Hand(str(case["ruleset"]), int(case["round"]), tuple(case["hand"]))
            if hand not in seen:
                seen.add(hand)
                hands.append(hand)
    return hands


def generated_hands(count: int, seed: int = 0) -> list[Hand]:
    """``count`` random hands over every preset and round, reproducible from ``seed``."""
    rng = random.Random(seed)
    names = sorted(PRESETS)
    hands: list[Hand] = []
    for _ in range(count):
        rules = PRESETS[rng.choice(names)]
        round_number = rng.randint(1, rules.rounds)
        size = rules.contract(round_number).deal + rng.randint(0, 1)
        deck = full_deck(rules.decks, rules.jokers)
        hands.append(Hand(rules.name, round_number, tuple(c.code for c in rng.sample(deck, size))))
    return hands


def corpus(generated: int = 500, seed: int = 0) -> list[Hand]:
    return conformance_hands() + generated_hands(generated, seed)
