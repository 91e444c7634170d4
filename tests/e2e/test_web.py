"""The browser table (docs/WEB.md) in a real browser: Debian's Chromium, headless,
driven by Playwright for Python against ``glintwick serve --store memory`` (what
``make run`` runs) on free ports, with its in-process house-bot pool.

Whole games are played through clicks to the final score screen for both rule sets
(cut to their first contract with the page's ``?rounds=1`` dev option); a refresh
mid-game resumes; a May I? claim is made through the prompt; a lay-off and a joker
swap are clicked in an arranged game; axe-core finds no serious or critical
violation; the page never receives another seat's cards (every stream it read is
checked against the engine's mirror of the game, as tests/e2e/test_secrecy.py does)
and never sends a request off its origin.  Screenshots of each step are written to
``build/web/<test>/`` (kept after the run, failing or not).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from engine.rulesets import PRESETS, Contract, MeldKind, MeldRequirement, RuleSet
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.support import Mirror, Rules, check_clean

playwright_api = pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Browser, Page, Response, Route  # noqa: E402

ROOT = Path(__file__).parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SHOTS = ROOT / "build" / "web"
AXE = ROOT / "tests" / "data" / "axe" / "axe.min.js"
OPERATOR = "web-e2e-operator"
#: how many page steps a whole one-round game may take before the test gives up
MAX_STEPS = 1500

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Debian's chromium (make test installs it)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """``glintwick serve --store memory`` on free ports, house bots in process."""
    http, grpc_port = free_port(), free_port()
    command = [
        sys.executable,
        "-c",
        "import glintwick_cli, sys; sys.exit(glintwick_cli.main())",
        "serve",
        "--store",
        "memory",
        "--http",
        f"127.0.0.1:{http}",
        "--grpc",
        f"127.0.0.1:{grpc_port}",
        "--operator-token",
        OPERATOR,
    ]
    SHOTS.mkdir(parents=True, exist_ok=True)
    log = open(SHOTS / "server.log", "w")  # noqa: SIM115 (closed after the server)
    server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{http}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(10)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


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

    def click(self, selector: str) -> bool:
        """Click the first match; False when it went away first (the table moved on)."""
        try:
            self.page.locator(selector).first.click(timeout=2000)
            return True
        except playwright_api.TimeoutError:
            return False


@pytest.fixture
def tab(browser: Browser, base_url: str, request: pytest.FixtureRequest) -> Iterator[Tab]:
    shots = SHOTS / request.node.name.replace("[", "-").replace("]", "")
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    context.set_default_timeout(15000)
    page = context.new_page()
    opened = Tab(page, base_url, shots)
    yield opened
    offsite = [u for u in opened.requests if not u.startswith(base_url + "/")]
    context.close()
    assert not offsite, f"requests left the page's origin: {offsite[:5]}"
    assert not opened.errors, f"the page threw: {opened.errors[:3]}"


# ---------------------------------------------------------------------- playing by clicks


@dataclasses.dataclass
class Clicks:
    moves: int = 0
    claims: int = 0
    passes: int = 0
    layoffs: int = 0
    contracts: int = 0
    rounds_seen: int = 0
    end_turns: int = 0


def play_through(tab: Tab, *, claims_wanted: int = 0, stop_after: int | None = None) -> Clicks:
    """Play the seat by clicking what the page offers until the game-end screen: the
    contract when it can be laid (previewed, then confirmed), lay-offs, a claim while
    fewer than ``claims_wanted`` were won (else pass), the end of a turn, else a discard
    of the last card that may be discarded."""
    done = Clicks()
    for step in range(MAX_STEPS):
        if tab.visible("#game-end"):
            tab.shot("game-end")
            return done
        if stop_after is not None and done.moves >= stop_after:
            return done
        if tab.visible("#continue"):
            tab.shot("round-end")
            done.rounds_seen += 1
            tab.click("#continue")
        elif tab.visible("#claim"):
            # (a seat before this one may claim the card too, and win it: claim again)
            won = tab.page.locator(".log li:has-text('Ada (you) takes')").count()
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
            if tab.click(".hand [data-moves~=discard] >> nth=-1") and tab.click("#discard"):
                done.moves += 1
        else:
            tab.page.wait_for_timeout(30)
            continue
        if step % 25 == 0:
            tab.shot(f"step-{step}")
    tab.shot("gave-up")
    raise AssertionError(f"no game end after {MAX_STEPS} steps: {done}")


def start_game(
    tab: Tab, rules: str, seats: int, *, extra: str = "", rounds: int = 1, pace: int = 0
) -> str:
    query = f"?rounds={rounds}&pace={pace}{extra}"
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


def replay_steps(base: str, game_id: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = api(base, f"/v1/games/{game_id}/replay")["steps"]
    return steps


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


# ---------------------------------------------------------------------- the tests


def test_the_page_and_its_assets_are_served_with_a_self_only_policy(base_url: str) -> None:
    with urllib.request.urlopen(base_url + "/") as page:
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
        assert page.headers["Cache-Control"] == "no-cache"
        policy = page.headers["Content-Security-Policy"]
        etag = page.headers["ETag"]
        html = page.read().decode()
    assert "default-src 'self'" in policy and "connect-src 'self'" in policy
    assert "http" not in policy.replace("'self'", "")  # no other host is allowed
    assert "/static/app.js" in html
    with urllib.request.urlopen(base_url + "/static/app.js") as script:
        assert script.headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert "max-age" in script.headers["Cache-Control"]
    again = urllib.request.Request(base_url + "/", headers={"If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as cached:
        urllib.request.urlopen(again)
    assert cached.value.code == 304
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(base_url + "/static/nothing.js")
    assert missing.value.code == 404


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
    assert "Stop 1 of 2 · Lantern Gate: two sets of three" in tab.page.inner_text(".contract")
    assert tab.page.locator(".route li").all_inner_texts() == ["Lantern Gate", "Silk Bridge"]
    done = play_through(tab)
    assert done.moves > 0 and done.rounds_seen == 1, done  # the round-end table, continued
    assert "Stop 2 of 2 · Silk Bridge: one run of five" in tab.page.inner_text(".contract")
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
            if f"Greedy bot 2 {what}" in log and what not in seen:
                seen[what] = time.monotonic() - started
        page.wait_for_timeout(40)
    assert seen.keys() == {"drew", "discarded"}, seen
    assert seen["discarded"] - seen["drew"] >= 0.2, seen  # one at a time
    assert seen["discarded"] >= 0.55, seen
    tab.shot("paced")


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
    tab.page.wait_for_selector(".seats >> text=Bob")
    tab.shot("joined-after-a-lost-answer")
    assert len(bodies) == 2, bodies
    assert bodies[0]["requestId"] and bodies[0] == bodies[1]
    seated = api(tab.base, f"/v1/games/{game_id}")["seatInfo"]
    assert [s.get("name") for s in seated if s.get("joined")] == ["Ada", "Bob"], seated
    assert tab.page.locator(".seats >> text=Bob").count() == 1


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
    page.wait_for_selector(".owner:has-text('Ada (you)') .meld")
    assert page.locator(".owner:has-text('Ada (you)') .meld-cards").all_inner_texts() == preview
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
        bob.page.wait_for_selector(".seats")
        page.wait_for_selector(".seats >> text=Bob")
        page.select_option("#fill-strength", "random")
        page.click("#fill-bots")
        page.wait_for_selector(".seats >> text=Random bot 3")
        assert not tab.visible("#share-link")
        bob.page.wait_for_selector(".seats >> text=Random bot 3")
        bob.shot("bob-joined")

        viewer = Tab(other.new_page(), tab.base, tab.shots)
        viewer.page.goto(watch)
        viewer.page.wait_for_selector(".seats >> text=Ada")
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
    page.wait_for_selector(".log >> text=Ada (you) discarded")
    tab.shot("keyboard-discard")


def test_the_page_recomputes_the_documented_shuffle(tab: Tab) -> None:
    """docs/SHUFFLE.md's test vector, in the browser: round seed, commitment, stock."""
    tab.page.goto(f"{tab.base}/#/lobby")
    found = tab.page.evaluate(
        """async () => {
          const fair = await import("/static/fair.js");
          const seed = fair.toHex(new TextEncoder().encode("example-seed"));
          const roundSeed = await fair.roundSeed(seed, 1);
          const deck = await fair.shuffledDeck(roundSeed, 0, 108);
          return [fair.toHex(roundSeed), await fair.commitment(roundSeed), deck.slice(0, 12)];
        }"""
    )
    assert found == [
        "4e7c0aa0b5a04ce9c694e2a85bb9a6dd207e08f74b977c2e9f834e4b98f6810b",
        "a42fd27b9f432a6c61a66838a1f1c174adb4b801c94b20faebd48d69045860cb",
        [32, 83, 0, 107, 63, 20, 90, 41, 78, 34, 59, 79],
    ]


def test_no_serious_accessibility_violations(tab: Tab) -> None:
    source = AXE.read_text()
    tab.page.goto(f"{tab.base}/?pace=0")
    tab.page.wait_for_selector("#play-bots")
    screens = {"start": _axe(tab, source)}
    start_game(tab, "contract", 4)
    tab.page.wait_for_selector(".hand button")
    screens["table"] = _axe(tab, source)
    tab.page.set_viewport_size({"width": 375, "height": 800})  # a phone's width
    tab.shot("phone")
    screens["phone"] = _axe(tab, source)
    bad = {name: found for name, found in screens.items() if found}
    assert not bad, json.dumps(bad, indent=1)[:3000]


def _axe(tab: Tab, source: str) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now (the script
    is evaluated, not loaded: the page's policy allows only its own scripts)."""
    tab.page.evaluate(source)
    result: dict[str, Any] = tab.page.evaluate("axe.run(document)")
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["html"][:120] for n in v["nodes"][:3]]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_a_paced_game_shows_every_event_once_to_its_end(tab: Tab) -> None:
    """At a pace above 0 the stream's events wait in the page's queue; when the game ends
    (the session closes) while they wait, the page must not connect again after the
    last event *shown* and have the server send the waiting ones a second time."""
    start_game(tab, "whiskertrail", 2, extra="&deal=6&seed=70616365", pace=100)
    play_through(tab)
    log = tab.page.inner_text(".log")
    assert log.count("Round 1 is over") == 1, log[-600:]
    # why, for people (the event's RoundEndReason, not its enum name)
    assert re.search(r"Round 1 is over \((went out|exhaustions|turn cap|dry)\)\.", log), log
    assert log.count("The game is over.") == 1, log[-600:]
    numbered = [line.split(".", 1)[1] for line in log.splitlines() if line[:1].isdigit()]
    # no tail of the log repeated (every event of a move told once)
    tail = numbered[-6:]
    assert all(numbered.count(line) == 1 for line in tail if "turn" not in line), tail
