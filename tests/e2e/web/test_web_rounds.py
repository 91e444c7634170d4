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


def _numbers(texts: list[str]) -> list[int] | None:
    try:
        return [int(x) for x in texts]
    except ValueError:
        return None


def test_the_round_summary_waits_for_next_round(tab: Tab) -> None:
    """At a round's end the table stays on its scores (the next round's deal and May I?
    windows wait) until the person clicks "Next round"; no window ever times out. The
    game's end ranks the standings with each round's points and offers "Play again"; the
    replay jumps a round at a time. (Each failure is told, not only the first: the hold
    and the end are defects of their own, issue 30's 6 and 9.)"""
    game_id = start_game(
        tab, "contract", 4, extra="&deal=7&turnCap=12&seed=72", rounds=2, mayi="ask"
    )
    page = tab.page
    wrong: list[str] = []
    play_to_the_summary(tab)
    page.wait_for_timeout(2500)
    title = page.inner_text("#contract-title")
    if "Round 1 of 2" not in title or not page.is_visible("#round-end"):
        wrong.append(f"the summary did not hold the table: {title!r}")
    if tab.visible("#claim") or tab.visible("#draw-stock"):
        wrong.append("the next round's prompts showed under the summary")
    tab.shot("summary")
    if tab.visible("#continue"):
        if page.inner_text("#continue") != "Next round":
            wrong.append(f"the button says {page.inner_text('#continue')!r}")
        page.click("#continue")
        page.wait_for_selector("#contract-title:has-text('Round 2 of 2')")
    play_through(tab)
    steps = replay_steps(tab.base, game_id)
    if any(s.get("byDeadline") for s in steps):
        wrong.append("a May I? window timed out")
    # the end: ranked standings with each round's points, and "Play again"
    rows = page.locator("#standings tbody tr")
    places = _numbers(rows.locator("td:nth-child(2)").all_inner_texts())
    totals = _numbers(rows.locator("td:last-child").all_inner_texts())
    heads = page.locator("#standings th[scope=col]").all_inner_texts()
    if rows.count() != 4 or not places or places != sorted(places) or places[0] != 1:
        wrong.append(f"the standings are not ranked by place: {places}")
    if heads[:2] != ["Player", "Place"] or "R1" not in heads or "R2" not in heads:
        wrong.append(f"no per-round score sheet: {heads}")
    if not all(heads) or totals is None or totals != sorted(totals):
        wrong.append(f"a blank header or unranked totals: {heads} {totals}")
    if not tab.visible("#play-again"):
        wrong.append("no Play again")
    # the replay: a round at a time
    page.click("#replay-link")
    page.wait_for_selector("#fairness")
    if not tab.visible("#replay-next-round"):
        wrong.append("the replay steps one move at a time only")
    else:
        page.click("#replay-next-round")
        step = page.inner_text("#replay-step")
        if "Round 2 of 2" not in step:
            wrong.append(f"the next round's jump shows {step[:200]!r}")
    assert not wrong, wrong
    page.go_back()
    page.wait_for_selector("#play-again")
    page.click("#play-again")
    # (a new game's table: its own id in the address, and its moves; the old game's
    # page may still show its own "#actions-title" for a moment after the click)
    page.wait_for_url(lambda url: "#/game/" in url and not url.endswith(game_id))
    page.wait_for_selector("#actions-title")


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
    """Line 100 reads "100." (not "00."), the page keeps at most 150 lines, appends new
    lines without redrawing the others, and a refresh shows them. (Each failure is told:
    issue 30's defect 3 is all four.)"""
    start_game(tab, "contract", 4, extra="&deal=9&turnCap=40&seed=6c6f67", mayi="never")
    page = tab.page
    # (some 20 lines a move of the person's: past line 160)
    play_through(tab, stop_after=14)
    page.wait_for_timeout(500)
    lines = page.locator(".log li").all_inner_texts()
    wrong: list[str] = []
    if not any(x.startswith("100.") for x in lines):
        wrong.append(f"no line reads '100.': {[x[:8] for x in lines[95:105]]}")
    if len(lines) > 150:
        wrong.append(f"the log keeps {len(lines)} lines")
    # lines are appended, not the log redrawn on each change (by round 5 the old page's
    # redraw of 3,800 lines blocked a click for close to a second)
    page.evaluate(
        """() => {
          window.logAdded = 0;
          new MutationObserver((records) => {
            for (const r of records) for (const n of r.addedNodes) {
              if (n.nodeType !== 1) continue;
              if (n.matches(".log li")) window.logAdded += 1;
              window.logAdded += n.querySelectorAll(".log li").length;
            }
          }).observe(document.body, { subtree: true, childList: true });
        }"""
    )
    last_line = "n => n.length ? Number(n[n.length - 1].dataset.n || n.length) : 0"
    first = page.locator(".log li").evaluate_all(last_line)
    play_through(tab, stop_after=3)
    page.wait_for_timeout(500)
    # (both read in one evaluation: the house bots go on playing meanwhile)
    written, added = page.evaluate(
        f"""() => {{
          const last = {last_line};
          return [last(document.querySelectorAll(".log li")), window.logAdded];
        }}"""
    )
    written -= first
    if added > written + 5:
        wrong.append(f"{added} log lines drawn for {written} new ones: the log is redrawn")
    lines = page.locator(".log li").all_inner_texts()
    before = lines[-1] if lines else ""
    page.reload()
    page.wait_for_selector("#actions-title")
    page.wait_for_timeout(1000)
    after = page.locator(".log li").all_inner_texts()
    first = after[0] if after else ""
    numbered = re.match(r"\d+\.", first) and int(first.split(".")[0]) > 1
    if len(after) < 100 or not numbered or before not in "\n".join(after):
        wrong.append(f"after a refresh the log has {len(after)} lines, from {first[:30]!r}")
    assert not wrong, wrong
