"""Friends at the browser table: a table opened and shared by its link, found in the
lobby and joined, filled with a bot, watched by a spectator; a hint, and a turn played
by keyboard alone.
"""

from __future__ import annotations

import json
import urllib.error

import pytest
from playwright.sync_api import Browser

from tests.e2e.web.support import NEEDS_CHROMIUM, Tab, api

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


def test_a_friends_table_waits_for_its_second_player(tab: Tab) -> None:
    """Ada opens a table for two: until Bob takes the second seat the page shows a
    table waiting for its players and offers no move (the server would refuse one:
    TABLE_NOT_FULL); Bob joins (by the API) and Ada's page starts the game."""
    page = tab.page
    page.goto(f"{tab.base}/?rounds=1&pace=0")
    page.fill("#name", "Ada")
    page.select_option("#seats", "2")
    page.click("#open-table")
    page.wait_for_selector("#share-link")
    page.wait_for_selector(".hand button")
    assert page.inner_text("#waiting-title") == "Waiting for one more player"
    assert page.inner_text("#actions-title") == "The game starts when every seat is taken"
    assert not tab.visible("#draw-stock") and not tab.visible("#draw-discard")
    moves = page.eval_on_selector_all(".hand button", "cs => cs.map((c) => c.dataset.moves)")
    assert moves and not any(moves), moves  # no card offers a move
    tab.shot("waiting-for-bob")
    share = page.get_attribute("#share-link", "href")
    assert share is not None
    game_id = share.rsplit("/", 1)[1]
    seat = page.evaluate(f"JSON.parse(localStorage.getItem('glintwick.seat.{game_id}'))")
    # what the page would send, refused by the server while the seat is free
    draw = {"expectedVersion": 0, "requestId": "early", "action": {"draw": {}}}
    with pytest.raises(urllib.error.HTTPError) as refused:
        api(tab.base, f"/v1/games/{game_id}:submit", draw, seat["token"])
    assert refused.value.code == 409
    assert json.loads(refused.value.read())["reason"] == "TABLE_NOT_FULL"

    bob = api(tab.base, f"/v1/games/{game_id}:join", {"name": "Bob"})
    page.wait_for_selector(".felt >> text=Bob")
    assert not tab.visible("#waiting-title")
    view = api(tab.base, f"/v1/games/{game_id}/view", token=seat["token"])
    if view.get("current", 0) == seat["seat"]:
        page.wait_for_selector("#draw-stock")  # Ada's first move, offered once the game starts
    else:
        page.wait_for_selector("#actions-title >> text=Waiting for Bob")
        api(tab.base, f"/v1/games/{game_id}:submit", draw, bob["token"])
        page.wait_for_selector(".log >> text=Bob drew")
    tab.shot("game-started")
