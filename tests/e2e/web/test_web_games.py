"""Whole games through clicks against house bots in a real browser, to the final score
screen, for both rule sets (cut to their first contracts with the page's ``?rounds=N``
dev option): what the page offers is what ListLegalActions lists, a May I? claim is
made through the prompt, round 7 of contract rummy ends turns without discards, a lay-off
and a joker swap are clicked in an arranged game; the page never receives another
seat's cards (every stream it read is checked against the engine's mirror of the game,
as tests/e2e/test_secrecy.py does) and its replay screen verifies the deal.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from google.protobuf import json_format

from engine.rulesets import PRESETS, Contract, MeldKind, MeldRequirement, RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.support import Mirror, Rules, check_clean
from tests.e2e.web.support import (
    NEEDS_CHROMIUM,
    OPERATOR,
    Tab,
    api,
    play_through,
    replay_steps,
    start_game,
)

pytestmark = NEEDS_CHROMIUM


def check_replay_screen(tab: Tab) -> None:
    tab.page.click("#replay-link")
    tab.page.wait_for_selector("#fairness")
    text = tab.page.inner_text("#fairness")
    assert "Fair deal verified" in text, text
    deals = tab.page.locator("#deal-check")
    assert deals.get_attribute("class") == "ok", deals.inner_text()
    assert "your dealt hands and the upcards match" in deals.inner_text() or (
        "the upcards match" in deals.inner_text()
    )
    for _ in range(3):
        tab.page.click("#replay-next")
    assert "Move 3 of" in tab.page.inner_text("#replay-step")
    tab.shot("replay")
    tab.page.click("#replay-last")  # the table as the game ended: the winner holds nothing
    winners = tab.page.locator("#replay-step .seat:has-text(' 0 cards')")
    assert winners.count() >= 1, tab.page.inner_text("#replay-step")
    tab.shot("replay-last")


def short(
    rules: str, seats: int, deal: int | None = None, turn_cap: int | None = None, rounds: int = 1
) -> RuleSet:
    """The rule set the page makes of ``?rounds=N`` (``&deal=``, ``&turnCap=``)."""
    preset = PRESETS[rules]
    contracts = preset.contracts[:rounds]
    if deal is not None:
        contracts = tuple(dataclasses.replace(c, deal=deal) for c in contracts)
    return dataclasses.replace(
        preset,
        contracts=contracts,
        min_players=min(seats, preset.min_players),
        turn_cap=preset.turn_cap if turn_cap is None else turn_cap,
    )


def stream_events(tab: Tab) -> list[dict[str, Any]]:
    """Every event of the play streams the page received, in order."""
    events = []
    for response in tab.responses:
        if ":play" in response.url and response.request.method == "GET":
            for line in response.body().decode().split("\n"):
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    if "event" in message:
                        events.append(message["event"])
    return events


def check_secrecy(tab: Tab, game_id: str, rules: RuleSet, seats: int, seed: str) -> int:
    """Every play-stream message and view the page received shows only what seat 0
    may know at its version (tests/e2e/support.py: Mirror); returns the messages."""
    replay = api(tab.base, f"/v1/games/{game_id}/replay")
    assert replay["seed"] == seed
    mirror = Mirror(rules, seats, bytes.fromhex(seed))
    for step in replay["steps"]:
        action = json_format.ParseDict(step["action"], pb.Action())
        mirror.apply(step.get("seat", 0), convert.action_from_pb(action))
    checked = 0
    for response in tab.responses:
        url = response.url
        if ":play" not in url or response.request.method != "GET":
            continue
        body = response.body().decode()
        position: dict[int, int] = {}
        for block in body.split("\n\n"):
            data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
            if not data:
                continue
            message = json.loads("\n".join(data))
            what = f"{url} {block[:60]!r}"
            if "event" in message:
                event = message["event"]
                version = int(event["version"])
                index = position.get(version, 0)
                position[version] = index + 1
                assert int(event["index"]) == index
                check_clean(rules, event, mirror.event_rules(0, version, index), what)
            for key in ("snapshot", "prompt"):
                if key in message:
                    item = message[key]
                    version = int(item["version"])
                    check_clean(rules, item, mirror.view_rules(0, version), what)
            checked += 1
    assert checked > 10, "the page's play stream was not recorded"
    # every other answer the page had before the game was over (the game, the lobby,
    # the solver's previews and hints): cards the seat knew at some point, no seed
    ever_known = frozenset().union(*(point.known[0] for point in mirror.points))
    seeds = mirror.points[0].forbidden
    for response in tab.responses:
        url = response.url
        if ":play" in url or ":watch" in url or url.endswith("/replay"):
            continue
        if "application/json" not in (response.headers.get("content-type") or ""):
            continue
        check_clean(rules, response.json(), Rules(ever_known, frozenset(), seeds), url)
        checked += 1
    return checked


def offered_matches_legal(tab: Tab, game_id: str) -> None:
    """What the page offers is what ListLegalActions lists for the seat now: the draws
    as buttons, the cards that may be discarded (or laid off, or swapped) as enabled."""
    token = tab.page.evaluate(f"JSON.parse(localStorage.getItem('glintwick.seat.{game_id}')).token")
    legal = api(tab.base, f"/v1/games/{game_id}/legalActions", token=token)["actions"]
    sources = {a["draw"]["source"] for a in legal if "draw" in a}
    assert tab.visible("#draw-stock") == ("DRAW_SOURCE_STOCK" in sources)
    assert tab.visible("#draw-discard") == ("DRAW_SOURCE_DISCARD" in sources)
    movable = {a[k]["card"] for a in legal for k in ("discard", "layOff", "swapJoker") if k in a}
    enabled = tab.page.locator(".hand button:not([aria-disabled])").evaluate_all(
        "cards => cards.map(c => Number(c.dataset.card))"
    )
    assert set(enabled) == movable
    assert tab.visible("#lay-contract") == any("layContract" in a for a in legal)


def test_a_whiskertrail_game_against_house_bots(tab: Tab) -> None:
    seed = "77656231"
    game_id = start_game(tab, "whiskertrail", 2, extra=f"&seed={seed}", rounds=2)
    offered_matches_legal(tab, game_id)
    tab.page.click("#draw-stock")
    tab.page.wait_for_selector(".hand [data-moves~=discard]")
    offered_matches_legal(tab, game_id)
    contract = tab.page.inner_text(".contract")
    assert "Stop 1 of 2: Lantern Gate" in contract and "Two sets of three" in contract, contract
    assert tab.page.locator(".route li").all_inner_texts() == ["Lantern Gate", "Silk Bridge"]
    done = play_through(tab)
    assert done.moves > 0 and done.rounds_seen == 1, done  # the round-end table, continued
    contract = tab.page.inner_text(".contract")
    assert "Stop 2 of 2: Silk Bridge" in contract and "One run of five" in contract, contract
    assert tab.page.locator(".route li.done").all_inner_texts() == ["✓ Lantern Gate"]
    assert "Game over" in tab.page.inner_text("#game-end")
    scores = tab.page.locator("#game-end table:last-of-type tbody tr").count()
    assert scores == 2
    check_secrecy(tab, game_id, short("whiskertrail", 2, rounds=2), 2, seed)
    check_replay_screen(tab)
    # the check can fail: a commitment other than the one dealt, a dealt hand other than
    # the seed's, and the page says so
    tab.page.evaluate(
        "id => { localStorage.setItem(`glintwick.commitments.${id}`, JSON.stringify({1: '00'}));"
        " const d = JSON.parse(localStorage.getItem(`glintwick.deals.${id}`));"
        " d[1].hand[0] = 107; localStorage.setItem(`glintwick.deals.${id}`, JSON.stringify(d)); }",
        game_id,
    )
    tab.page.reload()
    tab.page.wait_for_selector("#fairness")
    assert "could NOT be verified" in tab.page.inner_text("#fairness")
    assert "does NOT match: round 1: your hand" in tab.page.inner_text("#deal-check")
    tab.shot("replay-tampered")


def test_a_contract_game_with_a_may_i_claim(tab: Tab) -> None:
    seed = "6d61792d69"
    game_id = start_game(tab, "contract", 4, extra=f"&deal=7&turnCap=24&seed={seed}")
    assert "Round 1 of 1" in tab.page.inner_text(".contract")
    offered_matches_legal(tab, game_id)  # no discard-pile draw in contract rummy
    done = play_through(tab, claims_wanted=1)
    assert done.claims >= 1, done
    awarded = [e for e in stream_events(tab) if e["type"] == "EVENT_TYPE_CLAIM_AWARDED"]
    mine = [e for e in awarded if e.get("seat", 0) == 0]
    assert mine and len(mine[0]["claimAwarded"]["penalty"]) == 1, awarded
    # the claim's penalty card reached this seat's stream only (and nothing else secret)
    check_secrecy(tab, game_id, short("contract", 4, deal=7, turn_cap=24), 4, seed)
    steps = replay_steps(tab.base, game_id)
    assert any(s.get("seat", 0) == 0 and "claim" in s["action"] for s in steps)
    check_replay_screen(tab)


def test_contract_round_7_ends_turns_without_discards(tab: Tab) -> None:
    start_game(tab, "contract", 4, extra="&from=7&turnCap=12")
    assert "no discards this round" in tab.page.inner_text(".contract")
    done = play_through(tab)
    assert done.end_turns >= 1 and "Game over" in tab.page.inner_text("#game-end"), done


def _arranged_game(base: str) -> tuple[str, str]:
    """A two-seat contract round ("one sequence") dealt from an arranged deck: the house
    bot (seat 0, first to play) lays 5♠ 6♠ 7♠ + a joker (standing for 4♠); the player
    (seat 1) holds 4♠ for the swap, 9♥–Q♥ for its contract and 8♠ to lay off on the
    bot's run the turn after (not on the lay-down turn, in contract rummy)."""
    suits = {"C": 0, "D": 1, "H": 2, "S": 3}

    def cid(code: str, deck: int = 0) -> int:
        if code == "JK":
            return 104 + deck
        return deck * 52 + suits[code[1]] * 13 + "A23456789TJQK".index(code[0])

    rules = dataclasses.replace(
        PRESETS["contract"],
        contracts=(Contract("1 sequence", (MeldRequirement(MeldKind.RUN, 4),), deal=10),),
        min_players=2,
        may_i=False,
    )

    def cids(codes: str, deck: int = 0) -> list[int]:
        return [cid(c, deck) for c in codes.split()]

    bot = cids("5S 6S 7S JK 2C 5C 8C JC 2D 5D")
    human = cids("4S 9H TH JH QH 8S 8D JD KC KD")
    stock = cids("2C 5C 8C JC 2D 5D 8D JD", deck=1)
    dealt = [x for pair in zip(bot, human, strict=True) for x in pair]
    rest = [i for i in range(rules.deck_size) if i not in dealt and i not in stock]
    request = pb.CreateGameFromDeckRequest(
        game=pb.CreateGameRequest(
            custom_rule_set=convert.rules_to_pb(rules), seats=2, bots={0: "greedy"}
        ),
        decks=[pb.DeckOrder(round=1, cards=dealt + stock + rest)],
    )
    body = json_format.MessageToDict(request)
    game = api(base, "/v1/games:fromDeck", body, token=OPERATOR)
    joined = api(base, f"/v1/games/{game['gameId']}:join", {"seat": 1, "name": "Ada"})
    return game["gameId"], joined["token"]


def test_a_joker_swap_and_a_lay_off_by_clicking(tab: Tab) -> None:
    game_id, token = _arranged_game(tab.base)
    page = tab.page
    page.goto(f"{tab.base}/?pace=0")
    page.evaluate(
        "([id, token]) => localStorage.setItem(`glintwick.seat.${id}`,"
        " JSON.stringify({seat: 1, token}))",
        [game_id, token],
    )
    page.goto(f"{tab.base}/?pace=0#/game/{game_id}")
    page.wait_for_selector("#draw-stock")
    # the bot's run shows its joker standing for 4♠
    page.wait_for_selector(".meld [aria-label='joker standing for 4 of spades']")
    tab.shot("bot-run")
    page.click("#draw-stock")
    page.click(".hand [data-code='4S']")
    tab.shot("swap-target")
    page.click(".meld button:text('for the joker')")
    page.wait_for_selector(".hand [data-code='JK']")
    tab.shot("swapped")
    assert "swapped 4 of spades for a joker" in page.inner_text(".log")
    assert page.locator(".meld .joker").count() == 0  # the bot's run is all naturals now
    page.click("#lay-contract")
    page.wait_for_selector("#confirm-contract")
    preview = page.locator(".preview .meld-cards").all_inner_texts()
    assert preview, "no melds previewed"
    tab.shot("contract-preview")
    page.click("#confirm-contract")
    # the melds laid are the ones previewed
    page.wait_for_selector(".seat.me .meld")
    assert page.locator(".seat.me .meld-cards").all_inner_texts() == preview
    page.wait_for_selector(".hand [data-moves~=discard]")
    page.click(".hand [data-code='8D']")
    page.click("#discard")
    page.wait_for_selector("#draw-stock")  # the bot played its turn
    page.click("#draw-stock")
    page.click(".hand [data-code='8S']")
    tab.shot("lay-off-target")
    page.click(".meld button:text('Lay off')")
    page.wait_for_selector(".meld [aria-label='8 of spades']")
    tab.shot("laid-off")
    log = page.inner_text(".log")
    assert "laid off 8 of spades" in log, log
