"""Shared machinery of the browser table's tests (tests/e2e/web/).

* :class:`Tab`: one page of the table, every request, response and error it made recorded,
  with a screenshot of each step in ``build/web/<test>/``.
* :func:`start_game` and :func:`play_through`: a game against house bots opened and
  played by clicking what the page offers, to its end or for some moves.
* :func:`api`: a call of the server's HTTP/JSON API beside the page.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Page, Response, ViewportSize  # noqa: E402

ROOT = Path(__file__).parents[3]
CHROMIUM = "/usr/bin/chromium"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 375, "height": 667}  # portrait
SIZES: dict[str, ViewportSize] = {"desktop": DESKTOP, "phone": PHONE}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: each test's screenshots and the server's log (another tree's run: build/web-tree/)
SHOTS = ROOT / "build" / ("web-tree" if os.environ.get("GLINTWICK_WEB_TREE") else "web")
OPERATOR = "web-e2e-operator"
#: how many clicks a whole one-round game may take before the test gives up
MAX_STEPS = 1500
#: how long a page may offer the person nothing to click (the bots' turns) before the
#: test calls it stuck
IDLE_SECONDS = 60.0
#: how long the person reads a May I? prompt before answering when a test waits for
#: something it may show (the other seats' answers arrive meanwhile, as for a person)
READING_MS = 600

#: every test module's mark (``pytestmark``): the tests drive Debian's Chromium
NEEDS_CHROMIUM = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Debian's chromium (make test installs it)"
)


class Tab:
    """One page of the table, with every request and response it made recorded."""

    def __init__(self, page: Page, base: str, shots: Path) -> None:
        self.page = page
        self.base = base
        self.shots = shots
        self.count = 0
        self.requests: list[str] = []
        self.responses: list[Response] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("response", lambda r: self.responses.append(r))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def shot(self, what: str) -> None:
        self.count += 1
        self.page.screenshot(path=str(self.shots / f"{self.count:03d}-{what}.png"), full_page=True)

    def visible(self, selector: str) -> bool:
        return self.page.locator(selector).count() > 0

    def seen_within(self, selector: str, ms: float) -> bool:
        """Whether ``selector`` shows within ``ms`` milliseconds."""
        try:
            self.page.wait_for_selector(selector, timeout=ms)
        except playwright_api.TimeoutError:
            return False
        return True

    def click(self, selector: str) -> bool:
        """Click the first match; False when it went away first (the table moved on)."""
        try:
            self.page.locator(selector).first.click(timeout=2000)
            return True
        except playwright_api.TimeoutError:
            return False


@dataclasses.dataclass
class Clicks:
    moves: int = 0
    claims: int = 0
    passes: int = 0
    layoffs: int = 0
    contracts: int = 0
    rounds_seen: int = 0
    end_turns: int = 0
    #: each round summary as the page showed it, and when (seconds from the first step)
    summaries: list[str] = dataclasses.field(default_factory=list)
    summary_seconds: list[float] = dataclasses.field(default_factory=list)
    #: when the game-end screen showed (seconds from the first step)
    end_seconds: float | None = None


#: how a player picks the card to discard: a selector of a card of the hand, or None
Discard = Callable[[Tab], str | None]


def last_card(tab: Tab) -> str | None:
    """The last card of the hand that may be discarded (whatever it is)."""
    return ".hand [data-moves~=discard] >> nth=-1"


def draw_or_discard(tab: Tab) -> None:
    """One step of a plain turn: draw from the stock, else discard the last card that may
    go, else wait a moment for the table to move."""
    if tab.visible("#draw-stock"):
        tab.click("#draw-stock")
    elif tab.visible(".hand [data-moves~=discard]"):
        if tab.click(".hand [data-moves~=discard] >> nth=-1"):
            tab.click("#discard")
    else:
        tab.page.wait_for_timeout(30)


def play_through(
    tab: Tab,
    *,
    claims_wanted: int = 0,
    stop_after: int | None = None,
    until: str | None = None,
    max_steps: int = MAX_STEPS,
    discard: Discard = last_card,
    seconds: float | None = None,
) -> Clicks:
    """Play the seat by clicking what the page offers until the game-end screen: the
    contract when it can be laid (previewed, then confirmed), lay-offs, a claim while
    fewer than ``claims_wanted`` were won (else pass), the end of a turn, else a discard
    of the card ``discard`` picks (by default the last one that may be discarded;
    :func:`sensible_discard` plays like a person). ``until``: stop when that selector
    shows (before clicking "Next round"). ``seconds``: give up (AssertionError) when the
    game has not ended after so long."""
    done = Clicks()
    started = time.monotonic()
    idle_since: float | None = None
    step = 0
    while step < max_steps:
        if seconds is not None and time.monotonic() - started > seconds:
            tab.shot("out-of-time")
            raise AssertionError(f"no game end after {seconds:.0f} s: {done}")
        if until is not None and tab.visible(until):
            return done
        if tab.visible("#game-end"):
            done.end_seconds = round(time.monotonic() - started, 1)
            tab.shot("game-end")
            return done
        if stop_after is not None and done.moves >= stop_after:
            return done
        if tab.visible("#continue"):
            if until is not None and tab.visible(until):
                return done  # (it showed after the check above: "Next round" is in it)
            tab.shot("round-end")
            done.rounds_seen += 1
            done.summaries.append(tab.page.locator("#round-end").inner_text())
            done.summary_seconds.append(round(time.monotonic() - started, 1))
            tab.click("#continue")
        elif tab.visible("#claim"):
            if until is not None and tab.seen_within(until, READING_MS):
                return done  # (a person reads a prompt before answering it)
            # (a seat before this one may claim the card too, and win it: claim again)
            won = tab.page.locator(".log li:has-text('You take')").count()
            if won < claims_wanted and done.claims < claims_wanted + 3:
                tab.shot("may-i")
                if tab.click("#claim"):
                    done.claims += 1
            elif tab.click("#pass-claim"):
                done.passes += 1
        elif tab.visible("#confirm-contract"):
            tab.shot("contract-preview")
            if tab.click("#confirm-contract"):
                done.contracts += 1
        elif tab.visible("#lay-contract"):
            tab.click("#lay-contract")
        elif tab.visible("#draw-stock"):
            if tab.click("#draw-stock"):
                done.moves += 1
        elif tab.visible(".hand [data-moves~=layOff]"):
            picked = tab.click(".hand [data-moves~=layOff]")
            if picked and tab.click(".meld button:text('Lay off')"):
                done.layoffs += 1
        elif tab.visible("#end-turn"):
            if tab.click("#end-turn"):
                done.moves += 1
                done.end_turns += 1
        elif tab.visible(".hand [data-moves~=discard]"):
            card = discard(tab)
            if card is not None and tab.click(card) and tab.click("#discard"):
                done.moves += 1
        else:
            # (nothing to click: the bots' turns; waiting is no step, whatever the
            # machine's speed, but a page that offers nothing for a while is stuck)
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > IDLE_SECONDS:
                tab.shot("stuck")
                raise AssertionError(f"nothing to click for {IDLE_SECONDS:.0f} s: {done}")
            tab.page.wait_for_timeout(30)
            continue
        idle_since = None
        if step % 25 == 0 and step < 2000:
            tab.shot(f"step-{step}")
        step += 1
    tab.shot("gave-up")
    raise AssertionError(f"no game end after {max_steps} steps: {done}")


def start_game(
    tab: Tab,
    rules: str,
    seats: int,
    *,
    extra: str = "",
    rounds: int = 1,
    pace: int = 0,
    mayi: str = "ask",
) -> str:
    """A game against house bots through the start screen (``mayi``: the page's May I?
    choice, ``ask`` a prompt for every window)."""
    query = f"?rounds={rounds}&pace={pace}&mayi={mayi}{extra}"
    if rules == "contract" and seats != 4:
        query += f"&players={seats}"
    tab.page.goto(f"{tab.base}/{query}")
    tab.shot("start")
    tab.page.fill("#name", "Ada")
    tab.page.select_option("#rules", rules)
    if rules == "whiskertrail" or seats != 4:
        tab.page.select_option("#seats", str(seats))
    tab.page.select_option("#strength", "greedy")
    tab.page.click("#play-bots")
    tab.page.wait_for_selector("#actions-title")
    game_id = tab.page.url.rsplit("/", 1)[1]
    tab.shot("table")
    return game_id


def api(base: str, path: str, body: Any = None, token: str | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    call = urllib.request.Request(base + path, data=data, headers=headers)
    with urllib.request.urlopen(call, timeout=10) as answer:
        return json.loads(answer.read())


def replay_steps(base: str, game_id: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = api(base, f"/v1/games/{game_id}/replay")["steps"]
    return steps
