"""Friends at the browser table: a table opened and shared by its link, found in the
lobby and joined, filled with a bot, watched by a spectator; a hint, and a turn played
by keyboard alone.
"""

from __future__ import annotations

from playwright.sync_api import Browser

from tests.e2e.web.support import NEEDS_CHROMIUM, Tab

pytestmark = NEEDS_CHROMIUM


def test_friends_a_spectator_a_hint_and_the_keyboard(tab: Tab, browser: Browser) -> None:
    """Ada opens a table and shares its link; Bob finds it in the lobby and joins by the
    link; Ada fills the last seat with a bot; a spectator watches by the watch link;
    Ada asks for a hint and plays a turn by keyboard alone."""
    page = tab.page
    page.goto(f"{tab.base}/?rounds=1&pace=0")
    page.fill("#name", "Ada")
    page.select_option("#seats", "3")
    page.click("#open-table")
    page.wait_for_selector("#share-link")
    tab.shot("open-table")
    assert not tab.visible("#draw-stock")  # no move before the table is full
    share = page.get_attribute("#share-link", "href")
    watch = page.get_attribute("#watch-link", "href")
    assert share and "#/join/" in share and watch and "#/watch/" in watch
    game_id = share.rsplit("/", 1)[1]

    other = browser.new_context(viewport={"width": 390, "height": 850})
    try:
        bob = Tab(other.new_page(), tab.base, tab.shots)
        bob.page.goto(f"{tab.base}/#/lobby")
        bob.page.wait_for_selector(f"text=Join table {game_id[:6]}")
        bob.page.goto(share)
        bob.page.fill("#join-name", "Bob")
        bob.page.click("text=Take a seat")
        bob.page.wait_for_selector(".felt")
        page.wait_for_selector(".felt >> text=Bob")
        page.select_option("#fill-strength", "random")
        page.click("#fill-bots")
        page.wait_for_selector(".felt >> text=Beginner bot 3")
        assert not tab.visible("#share-link")
        bob.page.wait_for_selector(".felt >> text=Beginner bot 3")
        bob.shot("bob-joined")

        viewer = Tab(other.new_page(), tab.base, tab.shots)
        viewer.page.goto(watch)
        viewer.page.wait_for_selector(".felt >> text=Ada")
        assert not viewer.visible(".hand") and not viewer.visible(".actions")
        viewer.shot("spectator")
        for someone in (bob, viewer):
            offsite = [u for u in someone.requests if not u.startswith(tab.base + "/")]
            assert not offsite and not someone.errors, (offsite, someone.errors)
    finally:
        other.close()

    page.wait_for_selector("#draw-stock")
    page.click("#hint")
    page.wait_for_selector("#hint-text")
    assert "lack" in page.inner_text("#hint-text") or "can lay" in page.inner_text("#hint-text")
    # the keyboard alone: draw, move a card, select it, discard it
    page.focus("#draw-stock")
    page.keyboard.press("Enter")
    page.wait_for_selector(".hand [data-moves~=discard]")
    first = page.locator(".hand button").first
    code = first.get_attribute("data-code")
    first.focus()
    page.keyboard.press("Alt+ArrowRight")
    assert page.locator(".hand button").nth(1).get_attribute("data-code") == code
    assert page.evaluate("document.activeElement.dataset.code") == code  # focus kept
    page.keyboard.press("Enter")
    page.wait_for_selector("#discard")
    page.focus("#discard")
    page.keyboard.press("Enter")
    page.wait_for_selector(".log >> text=You discarded")
    tab.shot("keyboard-discard")
