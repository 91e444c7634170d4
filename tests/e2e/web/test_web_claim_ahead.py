"""May I? when a seat ahead has claimed (issue 30, defect 8): the person's prompt says
that a player ahead of them in the window's priority order has already claimed the
card, and so that it goes to them; it says so exactly when one has (the seats' badges
on the table tell who discarded and who claims). A seeded game against house bots in
which a bot ahead of the person claims in the first rounds' windows.
"""

from __future__ import annotations

from typing import Any

from tests.e2e.web.support import NEEDS_CHROMIUM, Tab, draw_or_discard, start_game

pytestmark = NEEDS_CHROMIUM

#: a game in which Casual bot 3 claims, ahead of the person, early on
SEEDED = "&deal=10&turnCap=40&seed=616865616403"

#: the prompt as the page shows it: who discarded, who claims, and the "ahead" line
PROMPT = """() => {
  const badge = (s) => (s.querySelector(".badge") || { textContent: "" }).textContent.trim();
  const seats = [...document.querySelectorAll(".felt .seat")]
    .map((s) => [Number(s.dataset.seat), badge(s)]);
  const line = document.getElementById("claimed-ahead");
  return { seats, line: line ? line.textContent : null };
}"""


def ahead_claimants(prompt: dict[str, Any], me: int = 0) -> list[int]:
    """The seats before ``me`` in the window's priority order (after the discarder, in
    turn order) whose badge says they claim."""
    badges = dict(prompt["seats"])
    seats = len(badges)
    discarder = next(s for s, b in badges.items() if b == "discarded")
    order = [(discarder + k) % seats for k in range(1, seats)]
    return [s for s in order[: order.index(me)] if badges[s] == "claims"]


def test_the_prompt_says_a_player_ahead_has_claimed(tab: Tab) -> None:
    page = tab.page
    start_game(tab, "contract", 4, extra=SEEDED, mayi="ask")
    prompts = 0
    ahead: list[int] = []
    for _ in range(1500):
        if tab.visible("#round-end") or tab.visible("#game-end"):
            break
        if tab.visible("#claim"):
            prompts += 1
            page.wait_for_timeout(300)  # (every bot has answered: the newest prompt is shown)
            prompt: dict[str, Any] = page.evaluate(PROMPT)
            ahead = ahead_claimants(prompt)
            assert (prompt["line"] is not None) == bool(ahead), prompt
            if ahead:
                break
            tab.click("#pass-claim")
        else:
            draw_or_discard(tab)
    else:
        raise AssertionError("the game did not end")
    assert ahead, f"no prompt with a claimant ahead in {prompts} prompts"
    tab.shot("claimed-ahead")
    name = page.inner_text(f".seat[data-seat='{ahead[0]}'] .seat-name")
    line = prompt["line"]
    assert line.startswith(f"{name} has already claimed it") and "goes to them" in line, line
    # claiming anyway: the card goes to the seat ahead, not to the person
    hand = page.locator(".hand button.card").count()
    page.click("#claim")
    page.wait_for_selector(f".log li:has-text('{name} takes')")
    assert page.locator(".log li:has-text('You take')").count() == 0
    assert page.locator(".hand button.card").count() == hand
    tab.shot("taken-by-the-seat-ahead")
    assert not tab.visible(".error"), page.inner_text(".error")
