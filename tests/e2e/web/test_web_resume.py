"""The browser table's connection lost and found: a refresh mid-game resumes it (the
player's order of the hand too), a dropped connection resumes after its last event, and
a join whose answer is lost is retried with its request id.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
from typing import Any

from playwright.sync_api import Browser, Route

from tests.e2e.web.support import NEEDS_CHROMIUM, SHOTS, Tab, api, play_through, start_game

pytestmark = NEEDS_CHROMIUM


def test_a_refresh_resumes_the_game(tab: Tab) -> None:
    start_game(tab, "whiskertrail", 3)
    play_through(tab, stop_after=3)
    tab.page.wait_for_selector("#draw-stock, .hand [data-moves~=discard]")
    tab.page.wait_for_timeout(300)
    # the player's own order of the hand survives the refresh too
    tab.page.locator(".hand button").first.focus()
    tab.page.keyboard.press("Alt+ArrowRight")
    order = tab.page.locator(".hand button").evaluate_all("cards => cards.map(c => c.dataset.card)")
    hand = sorted(tab.page.locator(".hand button").all_inner_texts())
    assert hand
    log = tab.page.inner_text(".log")
    tab.shot("before-refresh")
    tab.page.reload()
    tab.page.wait_for_selector("#draw-stock, .hand [data-moves~=discard]")
    tab.shot("after-refresh")
    assert sorted(tab.page.locator(".hand button").all_inner_texts()) == hand
    after = tab.page.locator(".hand button").evaluate_all("cards => cards.map(c => c.dataset.card)")
    assert after == order
    assert "Stop 1 of 1" in tab.page.inner_text(".contract") and log
    done = play_through(tab)
    assert "Game over" in tab.page.inner_text("#game-end"), done


class Proxy:
    """A TCP relay to the server whose connections the test can cut: a dropped
    connection, as a flaky network drops it."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        for connection in self.open:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self.open.clear()

    def close(self) -> None:
        self.cut()
        self.listener.close()


def test_a_dropped_connection_resumes_after_its_last_event(browser: Browser, base_url: str) -> None:
    proxy = Proxy(int(base_url.rsplit(":", 1)[1]))
    shots = SHOTS / "test_a_dropped_connection_resumes_after_its_last_event"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        tab = Tab(context.new_page(), f"http://127.0.0.1:{proxy.port}", shots)
        start_game(tab, "whiskertrail", 2)
        play_through(tab, stop_after=2)
        proxy.cut()
        tab.page.wait_for_selector("text=reconnecting…")
        tab.shot("dropped")
        tab.page.wait_for_selector("text=reconnecting…", state="detached")
        resumed = [u for u in tab.requests if ":play?after=" in u]
        assert resumed, tab.requests[-5:]
        done = play_through(tab)
        assert "Game over" in tab.page.inner_text("#game-end"), done
        assert not tab.errors, tab.errors
    finally:
        context.close()
        proxy.close()


def test_a_join_whose_answer_is_lost_is_retried_with_its_request_id(tab: Tab) -> None:
    """Bob's join reaches the server, which seats him, and its answer is lost (the
    connection reset): the page sends the join again with the same request id and gets
    the same seat back, so the table holds Bob once (docs/API.md, JoinGame's
    request_id; a retry without it would take a second seat of this three-seat table)."""
    game = api(tab.base, "/v1/games", {"ruleSetName": "whiskertrail", "seats": 3})
    game_id = game["gameId"]
    api(tab.base, f"/v1/games/{game_id}:join", {"seat": 0, "name": "Ada"})
    bodies: list[Any] = []

    def lose_the_first_answer(route: Route) -> None:
        bodies.append(route.request.post_data_json)
        if len(bodies) == 1:
            route.fetch()  # (the server applies it; the page never hears back)
            route.abort("connectionreset")
        else:
            route.continue_()

    tab.page.route("**/*:join", lose_the_first_answer)
    tab.page.goto(f"{tab.base}/#/join/{game_id}")
    tab.page.fill("#join-name", "Bob")
    tab.page.click("text=Take a seat")
    tab.page.wait_for_selector(".felt >> text=Bob")
    tab.shot("joined-after-a-lost-answer")
    assert len(bodies) == 2, bodies
    assert bodies[0]["requestId"] and bodies[0] == bodies[1]
    seated = api(tab.base, f"/v1/games/{game_id}")["seatInfo"]
    assert [s.get("name") for s in seated if s.get("joined")] == ["Ada", "Bob"], seated
    assert tab.page.locator(".felt >> text=Bob").count() == 1
