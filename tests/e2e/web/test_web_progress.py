"""The contract's progress at the browser table (issue 30): per requirement, how many
the hand holds now ("2 groups: you have 1"), computed by the page (progress.js) and
checked here against the engine's solver on random hands of both rule sets: what the
page says the hand holds can be laid at once, and no more requirements could.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
from typing import Any

from engine.cards import Card, cards_from_codes, full_deck
from engine.rulesets import PRESETS, Contract, MeldKind, MeldRequirement, RuleSet
from engine.solver.answers import can_lay
from tests.e2e.web.support import NEEDS_CHROMIUM, Tab, start_game

pytestmark = NEEDS_CHROMIUM

#: random hands per round of each preset
HANDS = 14


def holds(hand: list[Card], rules: RuleSet, melds: list[MeldRequirement]) -> bool:
    """Whether the hand can lay these melds at once (the solver on a one-round contract)."""
    if not melds:
        return True
    contract = Contract(name="part", melds=tuple(melds), deal=len(hand))
    return can_lay(hand, dataclasses.replace(rules, contracts=(contract,)), 1)


def groups_of(contract: Contract) -> list[tuple[MeldRequirement, int]]:
    """The contract's requirements, alike ones counted: [(requirement, how many)]."""
    out: list[tuple[MeldRequirement, int]] = []
    for m in contract.melds:
        for i, (req, n) in enumerate(out):
            if req == m:
                out[i] = (req, n + 1)
                break
        else:
            out.append((m, 1))
    return out


def check(hand: list[Card], rules: RuleSet, contract: Contract, have: list[int]) -> str | None:
    """None when ``have`` (per requirement group) is right: layable at once, and maximal."""
    groups = groups_of(contract)
    chosen = [req for (req, _), k in zip(groups, have, strict=True) for _ in range(k)]
    if not holds(hand, rules, chosen):
        return f"says {have}, which the solver cannot lay at once"
    for more in itertools.product(*(range(n + 1) for _, n in groups)):
        if sum(more) == sum(have) + 1:
            melds = [req for (req, _), k in zip(groups, more, strict=True) for _ in range(k)]
            if holds(hand, rules, melds):
                return f"says {have}, but the hand holds {list(more)}"
    return None


def test_the_page_counts_what_the_hand_holds_as_the_solver_does(tab: Tab) -> None:
    tab.page.goto(f"{tab.base}/#/lobby")
    rng = random.Random(30)
    cases: list[dict[str, Any]] = []
    for name, rules in sorted(PRESETS.items()):
        deck = [c.code for c in full_deck(rules.decks, rules.jokers)]
        for number, contract in enumerate(rules.contracts, start=1):
            for _ in range(HANDS):
                # (some hands larger than the deal: claims and draws grow a hand)
                size = contract.deal + rng.choice([0, 0, 1, 3, 6])
                cases.append({"rules": name, "round": number, "hand": rng.sample(deck, size)})
    answers: list[list[int]] = tab.page.evaluate(
        """async (cases) => {
          const { contractHeld } = await import("/static/progress.js");
          const { ruleSets } = await (await fetch("/v1/rulesets")).json();
          return cases.map((c) => {
            const rules = ruleSets.find((r) => r.name === c.rules);
            return contractHeld(c.hand, rules.contracts[c.round - 1], rules).map((g) => g.have);
          });
        }""",
        cases,
    )
    wrong = []
    for case, have in zip(cases, answers, strict=True):
        rules = PRESETS[case["rules"]]
        hand = cards_from_codes(case["hand"], rules.decks, rules.jokers)
        contract = rules.contracts[case["round"] - 1]
        problem = check(hand, rules, contract, have)
        if problem:
            where = f"{case['rules']} round {case['round']} {' '.join(case['hand'])}"
            wrong.append(f"{where}: {problem}")
    assert not wrong, f"{len(wrong)} of {len(cases)}:\n" + "\n".join(wrong[:8])
    # (the check can fail: a count one too high, or one too low where the hand holds more)
    rules = PRESETS["contract"]
    hand = cards_from_codes(["7H", "7S", "7D", "9C", "9D", "2S", "KH"], rules.decks, rules.jokers)
    assert check(hand, rules, rules.contracts[0], [2]) is not None
    assert check(hand, rules, rules.contracts[0], [1]) is None
    hand = cards_from_codes(["7H", "7S", "7D", "9C", "9D", "9S", "KH"], rules.decks, rules.jokers)
    assert check(hand, rules, rules.contracts[0], [1]) is not None
    assert check(hand, rules, rules.contracts[0], [2]) is None
    assert rules.contracts[0].melds[0].kind is MeldKind.SET


def test_the_contract_panel_says_how_many_of_each_the_hand_holds(tab: Tab) -> None:
    """At a table: "2 groups: you have N", N what the solver finds in the hand on screen,
    and after each draw; never "you lack"."""
    start_game(tab, "contract", 4, extra="&seed=676f6c64656e", mayi="never")
    page = tab.page
    rules = PRESETS["contract"]
    for _ in range(3):
        page.wait_for_selector("#draw-stock")
        for phase in ("before the draw", "after it"):
            cards = page.locator(".hand [data-code]")
            codes = cards.evaluate_all("b => b.map((x) => x.dataset.code)")
            text = page.inner_text("#contract-progress")
            assert "lack" not in text, text
            found = re.search(r"2 groups: you have (\d)", text)
            assert found, text
            have = int(found.group(1))
            hand = cards_from_codes(codes, rules.decks, rules.jokers)
            assert check(hand, rules, rules.contracts[0], [have]) is None, (codes, text)
            assert ("you can lay it now" in text) == (have == 2), text
            if phase == "before the draw":
                page.click("#draw-stock")
                page.wait_for_selector(".hand [data-moves~=discard]")
        tab.shot("progress")
        page.click(".hand [data-moves~=discard] >> nth=-1")
        page.click("#discard")
