"""The round summary and the final standings at the browser table (issue 30): a summary
waiting for "Next round" survives a refresh (from this tab's records, and rebuilt from
the public events when the tab kept none), is gone once left, and axe-core finds no
serious or critical violation on it or on the standings, at desktop and phone sizes.
"""

from __future__ import annotations

import json

from tests.e2e.web.screens import axe_violations, play_to_the_summary
from tests.e2e.web.support import DESKTOP, NEEDS_CHROMIUM, PHONE, Tab, play_through, start_game

pytestmark = NEEDS_CHROMIUM


def summary(tab: Tab) -> str:
    tab.page.wait_for_selector("#round-end #continue")
    return tab.page.inner_text("#round-end")


def hand(tab: Tab) -> list[str]:
    """The person's hand on screen, by the cards' codes."""
    cards = tab.page.locator(".hand button.card").all()
    return [c.get_attribute("data-code") or "" for c in cards]


def test_the_round_summary_survives_a_refresh(tab: Tab) -> None:
    page = tab.page
    page.set_viewport_size(DESKTOP)
    start_game(tab, "contract", 4, extra="&deal=7&turnCap=12&seed=72", rounds=2, mayi="never")
    play_to_the_summary(tab)
    before = summary(tab)
    assert "Round 1 is over" in before and "Points this round" in before, before
    held_hand = hand(tab)
    tab.shot("summary")
    found = {"summary": axe_violations(tab)}
    # a refresh: the same summary, the table held (no move offered) until "Next round"
    page.reload()
    assert summary(tab) == before
    page.wait_for_timeout(1000)
    assert not tab.visible("#draw-stock") and not tab.visible("#claim")
    # ...as without a refresh: still round 1's title, round 2's dealt hand not shown
    title = page.inner_text("#contract-title")
    assert title.startswith("Round 1 of 2"), title
    assert hand(tab) in ([], held_hand), (hand(tab), held_hand)
    tab.shot("refreshed")
    # a tab that kept nothing (another tab, a cleared session): rebuilt from the public events
    page.evaluate("sessionStorage.clear()")
    page.reload()
    assert summary(tab) == before
    assert page.inner_text("#contract-title").startswith("Round 1 of 2")
    assert hand(tab) in ([], held_hand)
    tab.shot("rebuilt")
    page.set_viewport_size(PHONE)
    found["summary-phone"] = axe_violations(tab)
    # (on a phone "Next round" is on the first screen: the hand's dock rests below it)
    page.evaluate("window.scrollTo(0, 0)")
    box = page.locator("#continue").bounding_box()
    assert box and box["y"] + box["height"] <= PHONE["height"], box
    tab.shot("summary-phone")
    page.set_viewport_size(DESKTOP)
    page.click("#continue")
    page.wait_for_selector("#contract-title:has-text('Round 2 of 2')")
    page.wait_for_selector(".hand button.card")
    # left with "Next round": a refresh no longer shows it
    page.reload()
    page.wait_for_selector(".hand button.card")
    page.wait_for_timeout(1000)
    assert not tab.visible("#round-end")
    play_through(tab)
    # the standings' score sheet has both rounds, the first rebuilt from the public events
    heads = page.locator("#standings th[scope=col]").all_inner_texts()
    assert "R1" in heads and "R2" in heads, heads
    tab.shot("standings")
    found["standings"] = axe_violations(tab)
    page.set_viewport_size(PHONE)
    tab.shot("standings-phone")
    found["standings-phone"] = axe_violations(tab)
    bad = {name: v for name, v in found.items() if v}
    assert not bad, json.dumps(bad, indent=1)[:3000]
