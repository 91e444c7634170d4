"""A prompt player who discards like a sensible person, from what the page shows.

:func:`sensible_discard` reads the hand's cards (their codes: ``data-code``), the
round's contract (its title: "2 groups", "1 group + 2 sequences", …) and whether the
person has laid it (the seat's "contract laid"), and picks the card to discard:

* before the contract is laid, the card that helps least towards it: a card counts
  for each other card of its rank in another suit when the contract asks for groups,
  and for each card of its suit close to it in rank when it asks for sequences;
  jokers are kept; among the least helpful, the one with the most penalty points;
* once it is laid (nothing more to meld: lay-offs are clicked before the discard, so a
  joker still held fits no meld), a joker, else the card with the most penalty points.

It acts only by clicks: it returns the selector of the card, :func:`play_through`
clicks it and then *Discard*.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.e2e.web.support import Tab

RANKS = "A23456789TJQK"
#: penalty points by rank letter (contract: aces 15, faces and tens 10, others their
#: pips; a joker 15)
POINTS = {r: (15 if r == "A" else 10 if r in "TJQK" else int(r)) for r in RANKS}
JOKER = "JK"


def _rank(code: str) -> int:
    return RANKS.index(code[0]) + 1


def _gap(a: int, b: int) -> int:
    """Distance in rank, an ace low or high (contract's aces are both)."""
    gap = abs(a - b)
    if 1 in (a, b):
        gap = min(gap, abs(14 - max(a, b)))
    return gap


def usefulness(code: str, others: list[str], *, groups: bool, runs: bool) -> float:
    """How much ``code`` helps towards the contract with the rest of the hand."""
    if code == JOKER:
        return 100.0
    score = 0.0
    naturals = [c for c in others if c != JOKER]
    if groups:
        suits = {c[1] for c in naturals if c[0] == code[0] and c[1] != code[1]}
        score += 2.0 * len(suits)
    if runs:
        near = {_rank(c) for c in naturals if c[1] == code[1] and c[0] != code[0]}
        score += sum({1: 2.0, 2: 1.0, 3: 0.5}.get(_gap(_rank(code), r), 0.0) for r in near)
    return score


def pick(codes: list[str], allowed: list[bool], contract: str, opened: bool) -> int | None:
    """The index of the card to discard among those ``allowed``."""
    groups = "group" in contract
    runs = "sequence" in contract
    best: tuple[float, int] | None = None
    chosen: int | None = None
    for i, code in enumerate(codes):
        if not allowed[i]:
            continue
        points = 15 if code == JOKER else POINTS[code[0]]
        if opened:
            key = (-1.0 if code == JOKER else 0.0, -points)
        else:
            others = codes[:i] + codes[i + 1 :]
            key = (usefulness(code, others, groups=groups, runs=runs), -points)
        if best is None or key < best:
            best, chosen = key, i
    return chosen


def sensible_discard(tab: Tab) -> str | None:
    """The selector of the card a sensible person discards now (None: none may be)."""
    cards = tab.page.eval_on_selector_all(
        ".hand [data-card]",
        "els => els.map(e => [e.dataset.card, e.dataset.code, e.dataset.moves || ''])",
    )
    contract = tab.page.locator("#contract-title").inner_text()
    opened = tab.visible(".seat.me .opened")
    codes = [str(c[1]) for c in cards]
    allowed = ["discard" in str(c[2]).split() for c in cards]
    index = pick(codes, allowed, contract, opened)
    if index is None:
        return None
    return f'.hand [data-card="{cards[index][0]}"]'
