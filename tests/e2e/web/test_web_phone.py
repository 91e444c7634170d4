"""The browser table on a phone (issue 30): at 375×667 portrait a game plays by taps with
no scrolling at all: at every choice the hand's cards and the buttons of the choice lie
inside the screen as it opens (scrolled to the top), the page is never wider than the
screen, and every control is a touch target of at least 44×44 px.
"""

from __future__ import annotations

from typing import Any

from tests.e2e.web.support import NEEDS_CHROMIUM, PHONE, Tab, start_game

pytestmark = NEEDS_CHROMIUM

#: the smallest touch target (WCAG 2.5.5), in CSS pixels
TARGET = 44

#: where a box of the page lies, with the page scrolled to its top
BOXES = """(selector) => {
  window.scrollTo(0, 0);
  return [...document.querySelectorAll(selector)].filter((e) => e.offsetParent !== null)
    .map((e) => { const r = e.getBoundingClientRect();
      return { what: e.id || e.dataset.code || e.textContent.trim().slice(0, 30),
               left: r.left, top: r.top, right: r.right, bottom: r.bottom }; });
}"""

#: the controls a person touches (a checkbox's target is its label; links in running
#: text, the log and the spectator link aside)
CONTROLS = (
    ".top a, .top select, main button, main select, main summary, "
    "main input:not([type=checkbox]), .options label"
)


def off_screen(tab: Tab, selector: str) -> list[dict[str, Any]]:
    boxes: list[dict[str, Any]] = tab.page.evaluate(BOXES, selector)
    return [
        b
        for b in boxes
        if b["left"] < 0
        or b["top"] < 0
        or b["right"] > PHONE["width"] + 0.5
        or b["bottom"] > PHONE["height"] + 0.5
    ]


def small_targets(tab: Tab) -> list[dict[str, Any]]:
    boxes: list[dict[str, Any]] = tab.page.evaluate(BOXES, CONTROLS)
    return [
        b
        for b in boxes
        if b["right"] - b["left"] < TARGET - 0.5 or b["bottom"] - b["top"] < TARGET - 0.5
    ]


def check_the_screen(tab: Tab, what: str, choice: str) -> None:
    """The hand and the choice's buttons on screen, no sideways scroll, big targets."""
    page = tab.page
    page.wait_for_timeout(150)  # (the last card settles)
    tab.shot(what)
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"{what}: the page is {width} px wide"
    hand = page.evaluate(BOXES, ".hand button.card")
    assert hand, f"{what}: no hand"
    assert not off_screen(tab, ".hand button.card"), (what, off_screen(tab, ".hand button.card"))
    assert page.evaluate(BOXES, choice), f"{what}: no {choice}"
    assert not off_screen(tab, choice), (what, off_screen(tab, choice))
    assert not small_targets(tab), (what, small_targets(tab))


def test_a_contract_game_plays_on_a_phone_without_scrolling(tab: Tab) -> None:
    """Twelve cards dealt, two claims made (a hand of up to 16), the contract previewed
    and laid: every choice on one screen, to the game's end."""
    page = tab.page
    page.set_viewport_size(PHONE)
    start_game(tab, "contract", 4, extra="&deal=12&turnCap=24&seed=70686f6e6503", mayi="ask")
    seen: set[str] = set()
    claims = 0
    for _ in range(1500):
        if tab.visible("#game-end"):
            break
        if tab.visible("#claim"):
            check_the_screen(tab, "may-i", "#claim, #pass-claim")
            seen.add("may-i")
            if claims < 2 and tab.click("#claim"):
                claims += 1
            else:
                tab.click("#pass-claim")
        elif tab.visible("#draw-stock"):
            check_the_screen(tab, "draw", "#draw-stock, #hint")
            seen.add("draw")
            tab.click("#draw-stock")
        elif tab.visible("#confirm-contract"):
            check_the_screen(tab, "contract-preview", "#confirm-contract, #cancel-contract")
            seen.add("contract-preview")
            tab.click("#confirm-contract")
        elif tab.visible("#lay-contract"):
            check_the_screen(tab, "contract", "#lay-contract")
            seen.add("contract")
            tab.click("#lay-contract")
        elif tab.visible(".hand [data-moves~=discard]"):
            tab.click(".hand [data-moves~=discard] >> nth=-1")
            if tab.visible("#discard"):
                check_the_screen(tab, "discard", "#discard, .hand .chosen")
                seen.add("discard")
                tab.click("#discard")
        else:
            page.wait_for_timeout(30)
    else:
        raise AssertionError(f"no game end: {seen}")
    assert {"may-i", "draw", "discard", "contract", "contract-preview"} <= seen, seen
    assert claims == 2, claims
    tab.shot("game-end")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]


def test_whiskertrail_on_a_phone(tab: Tab) -> None:
    """Whiskertrail's route in the contract panel; the draw from either pile on screen."""
    page = tab.page
    page.set_viewport_size(PHONE)
    start_game(tab, "whiskertrail", 4, extra="&seed=70686f6e6532")
    page.wait_for_selector("#draw-stock")
    check_the_screen(tab, "draw", "#draw-stock, #draw-discard")
    page.click("#draw-discard")
    page.wait_for_selector(".hand [data-moves~=discard]")
    page.click(".hand [data-moves~=discard] >> nth=0")
    check_the_screen(tab, "discard", "#discard")
