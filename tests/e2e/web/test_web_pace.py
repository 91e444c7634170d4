"""The house bots' pace at the browser table: their moves show one after the other at
the chosen pace, and a paced game shows every event once, to its end.
"""

from __future__ import annotations

import re
import time

from tests.e2e.web.support import NEEDS_CHROMIUM, Tab, play_through, start_game

pytestmark = NEEDS_CHROMIUM


def test_house_bots_move_at_the_chosen_pace(tab: Tab) -> None:
    """At 300 ms a move, the bot's draw and discard show one after the other, the
    discard at least two paces after the player's own."""
    start_game(tab, "whiskertrail", 2, extra="&seed=7061636531")
    page = tab.page
    page.select_option("#pace", "300")
    page.click("#draw-stock")
    page.click(".hand [data-moves~=discard] >> nth=0")
    page.click("#discard")
    started = time.monotonic()
    seen: dict[str, float] = {}
    while "discarded" not in seen and time.monotonic() - started < 10:
        log = page.inner_text(".log")
        for what in ("drew", "discarded"):
            if f"Casual bot 2 {what}" in log and what not in seen:
                seen[what] = time.monotonic() - started
        page.wait_for_timeout(40)
    assert seen.keys() == {"drew", "discarded"}, seen
    assert seen["discarded"] - seen["drew"] >= 0.2, seen  # one at a time
    assert seen["discarded"] >= 0.55, seen
    tab.shot("paced")


def test_a_paced_game_shows_every_event_once_to_its_end(tab: Tab) -> None:
    """At a pace above 0 the stream's events wait in the page's queue; when the game ends
    (the session closes) while they wait, the page must not connect again after the
    last event *shown* and have the server send the waiting ones a second time."""
    start_game(tab, "whiskertrail", 2, extra="&deal=6&seed=70616365", pace=100)
    play_through(tab)
    log = tab.page.inner_text(".log")
    assert log.count("Stop 1 is over") == 1, log[-600:]
    # why, for people (the event's RoundEndReason, not its enum name)
    assert re.search(r"Stop 1 is over: (.+ went out|the stock ran out .+)\.", log), log
    assert log.count("The game is over.") == 1, log[-600:]
    numbered = [line.split(".", 1)[1] for line in log.splitlines() if line[:1].isdigit()]
    # no tail of the log repeated (every event of a move told once)
    tail = numbered[-6:]
    # (a turn's start and a draw from the stock read alike every time)
    once = [line for line in tail if "turn" not in line and "from the stock." not in line]
    assert once and all(numbered.count(line) == 1 for line in once), tail
