"""Rounds at the browser table (issue 30): the round summary holds play until "Next
round" (nothing times out for the person meanwhile); hands come sorted and a drawn card
goes to its place; the log is numbered past 99, capped, and back after a refresh; the
game's end ranks the standings with a per-round score sheet and offers "Play again".
"""

from __future__ import annotations

import re

from tests.e2e.web.screens import play_to_the_summary
from tests.e2e.web.support import NEEDS_CHROMIUM, Tab, play_through, replay_steps, start_game

pytestmark = NEEDS_CHROMIUM

SUIT_ORDER = {"C": 0, "D": 1, "S": 2, "H": 3}
RANKS = "A23456789TJQK"


def by_suit(code: str) -> tuple[int, int]:
    if code == "JK":
        return (9, 99)
    return (SUIT_ORDER[code[1]], RANKS.index(code[0]) + 1)


def hand_codes(tab: Tab) -> list[str]:
    return [
        str(c)
        for c in tab.page.locator(".hand [data-code]").evaluate_all(
            "b => b.map((x) => x.dataset.code)"
        )
    ]


def test_the_round_summary_waits_for_next_round(tab: Tab) -> None:
    """At a round's end the table stays on its scores (the next round's deal and May I?
    windows wait) until the person clicks "Next round"; no window ever times out."""
    game_id = start_game(
        tab, "contract", 4, extra="&deal=7&turnCap=12&seed=72", rounds=2, mayi="ask"
    )
    page = tab.page
    play_to_the_summary(tab)
    page.wait_for_timeout(2500)
    assert "Round 1 of 2" in page.inner_text("#contract-title")
    assert page.is_visible("#round-end")
    assert not tab.visible("#claim") and not tab.visible("#draw-stock")
    assert page.inner_text("#continue") == "Next round"
    tab.shot("summary")
    page.click("#continue")
    page.wait_for_selector("#contract-title:has-text('Round 2 of 2')")
    play_through(tab)
    steps = replay_steps(tab.base, game_id)
    assert not any(s.get("byDeadline") for s in steps), "a May I? window timed out"
    # the end: ranked standings with each round's points, and "Play again"
    rows = page.locator("#standings tbody tr")
    assert rows.count() == 4
    places = [int(x) for x in rows.locator("td:nth-child(2)").all_inner_texts()]
    assert places == sorted(places) and places[0] == 1, places
    heads = page.locator("#standings th[scope=col]").all_inner_texts()
    assert heads[:2] == ["Player", "Place"] and "R1" in heads and "R2" in heads and all(heads), (
        heads
    )
    totals = [int(x) for x in rows.locator("td:last-child").all_inner_texts()]
    assert totals == sorted(totals), totals
    assert page.is_visible("#play-again")
    page.click("#play-again")
    page.wait_for_selector("#actions-title")
    assert page.url.rsplit("/", 1)[1] != game_id


def test_hands_come_sorted_and_a_drawn_card_goes_to_its_place(tab: Tab) -> None:
    """ "Sort by suit" shows as active and is: the dealt hand, and after each draw."""
    start_game(tab, "whiskertrail", 2, extra="&deal=8&seed=736f7274", rounds=2)
    page = tab.page
    assert page.get_attribute("#sort-suit", "aria-pressed") == "true"
    for _ in range(4):
        page.wait_for_selector("#draw-stock")
        codes = hand_codes(tab)
        assert codes == sorted(codes, key=by_suit), codes
        page.click("#draw-stock")
        page.wait_for_selector("#discard-pile")
        page.wait_for_selector(".hand [data-moves~=discard]")
        codes = hand_codes(tab)
        assert codes == sorted(codes, key=by_suit), codes
        page.click(".hand [data-moves~=discard] >> nth=0")
        page.click("#discard")


def test_the_log_is_numbered_capped_and_kept_on_refresh(tab: Tab) -> None:
    """Line 100 reads "100.", the page keeps at most 150 lines, and a refresh shows them."""
    start_game(tab, "contract", 4, extra="&deal=9&turnCap=40&seed=6c6f67", mayi="never")
    page = tab.page
    play_through(tab, until=".log li[data-n='160']")
    assert page.inner_text(".log li[data-n='100']").startswith("100.")
    assert page.locator(".log li").count() <= 150
    before = page.inner_text(".log li:last-child")
    page.reload()
    page.wait_for_selector(".log li")
    assert page.locator(".log li").count() >= 100
    first = page.inner_text(".log li:first-child")
    assert re.match(r"\d+\.", first) and int(first.split(".")[0]) > 1, first
    assert before in page.inner_text(".log")
