"""What the browser table says (issue 30): a joker standing for a ten, a one-line reason
for a move that is not legal, human sentences for refusals (a full table offers to
watch, not "Take a seat"), bots named by strength, who went out, "Stop" on the
whiskertrail route, plurals, a copy button for the share link.
"""

from __future__ import annotations

import re

from tests.e2e.web.support import NEEDS_CHROMIUM, Tab, api, play_through, start_game

pytestmark = NEEDS_CHROMIUM

#: a server's reason code shown raw ("GAME_FULL: …")
RAW_REASON = re.compile(r"\b[A-Z]{2,}_[A-Z_]{2,}\b")


def test_a_joker_standing_for_a_ten_says_ten(tab: Tab) -> None:
    tab.page.goto(f"{tab.base}/#/lobby")
    faces = tab.page.evaluate(
        """async () => {
          const c = await import("/static/cards.js");
          const cards = (...codes) => codes.map((code) => ({ code }));
          const run = { kind: "MELD_KIND_RUN", rank: 9, suit: "S", cards: cards("9S", "JK", "JS") };
          const set = { kind: "MELD_KIND_SET", rank: 10, cards: cards("TS", "TH", "JK") };
          const high = {
            kind: "MELD_KIND_RUN", rank: 11, suit: "H", cards: cards("JH", "QH", "KH", "JK"),
          };
          const stands = [
            c.meldStandsFor(run, false), c.meldStandsFor(set, true), c.meldStandsFor(high, false),
          ];
          return stands.map((s) => s.map((x) => [c.standsForFace(x), c.standsForLabel(x)]));
        }"""
    )
    assert faces[0][1] == ["10♠", "10 of spades"], faces
    assert faces[1][2] == ["10♣", "10 of clubs"], faces
    assert faces[2][3] == ["A♥", "ace of hearts"], faces
    assert "undefined" not in str(faces)


def test_a_card_with_no_move_says_why(tab: Tab) -> None:
    """A card clicked before the draw: "Draw first"; in whiskertrail, the card just taken
    from the discard pile: it cannot be discarded this turn."""
    start_game(tab, "whiskertrail", 2, extra="&seed=6e6f7465")
    page = tab.page
    page.click(".hand button.card >> nth=0", force=True)  # (aria-disabled: no move)
    assert "Draw first" in page.inner_text("#notice")
    taken = page.get_attribute("#discard-pile [data-code]", "data-code")
    page.click("#draw-discard")
    page.wait_for_selector(".hand [data-moves~=discard]")
    page.click(f".hand button.card.drawn[data-code='{taken}']", force=True)
    text = page.inner_text("#notice")
    assert "cannot discard" in text and "just took from the discard pile" in text, text
    tab.shot("notice")


def test_a_full_table_offers_to_watch_in_a_sentence(tab: Tab) -> None:
    game = api(tab.base, "/v1/games", {"ruleSetName": "whiskertrail", "seats": 2})
    for name in ("Rita", "Sam"):
        api(tab.base, f"/v1/games/{game['gameId']}:join", {"name": name})
    page = tab.page
    page.goto(f"{tab.base}/#/join/{game['gameId']}")
    take = "#take-seat, button:has-text('Take a seat')"
    page.wait_for_selector(f"#join-refused, {take}")
    wrong: list[str] = []
    if tab.visible(take):
        wrong.append("'Take a seat' is offered on a full table")
        page.click(take)  # (as a person would: what does it say then?)
        page.wait_for_timeout(1500)
    text = page.inner_text("main")
    if RAW_REASON.search(text):
        wrong.append(f"a raw reason: {RAW_REASON.search(text)}")
    if "This table is full" not in text:
        wrong.append(f"no sentence: {text[:200]!r}")
    assert not wrong, wrong
    assert tab.visible("#watch-instead")


def test_the_words_of_a_whiskertrail_game(tab: Tab) -> None:
    """Bots by strength, "Stop" in the log as in the header, who went out, no "card(s)"
    nor "(you)'s"; the end's standings have no blank header."""
    start_game(tab, "whiskertrail", 2, extra="&deal=6&seed=776f726473")
    play_through(tab)
    page = tab.page
    body = page.inner_text("main")
    assert "Casual bot 2" in body and "Greedy" not in body, body[:400]
    log = page.inner_text(".log")
    assert "Stop 1 of 1 dealt" in log and "Round 1" not in log, log[:300]
    assert re.search(r"Stop 1 is over: (You|Casual bot 2) went out", log), log[-400:]
    for wrong in ("card(s)", "(you)'s", "Ada (you) discarded", "undefined"):
        assert wrong not in body, wrong
    assert all(x.strip() for x in page.locator("#standings th").all_inner_texts())


def test_the_share_link_has_a_copy_button(tab: Tab) -> None:
    tab.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab.page.goto(f"{tab.base}/?rounds=1&pace=0")
    tab.page.fill("#name", "Ada")
    tab.page.select_option("#seats", "2")
    tab.page.click("#open-table")
    tab.page.click("#copy-share")
    copied = tab.page.evaluate("navigator.clipboard.readText()")
    assert copied == tab.page.get_attribute("#share-link", "href")
