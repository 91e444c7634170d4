"""Complete random games for every rule set, every invariant checked after every action.

The default suite plays ``GAMES_PER_RULESET`` games per rule set (the two presets
and two custom rule sets); ``make soak`` (``pytest -m slow``) plays
``GLINTWICK_SOAK_GAMES`` (default 10,000) more.  Each game is reproducible from
its rule set and index (which fix the seats, the seed, the rng seed and the
policy): a failure names them, and ``replay_game(name, index)`` replays it in
process.  Games run on ``GLINTWICK_PLAYOUT_WORKERS`` processes (default: up to 2
cores; 1 plays in the test process).
"""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

import pytest

from clients.bots.base import Bot, Situation
from clients.turn import engine_turn
from engine.actions import Action, Discard, PassClaim
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import seat_view, spectator_view
from tests.support import (
    CUSTOM_MAYI,
    CUSTOM_MIX,
    EagerBot,
    PlayoutFailure,
    UniformBot,
    check_invariants,
    random_playout,
    secrecy,
)

GAMES_PER_RULESET = int(os.environ.get("GLINTWICK_PLAYOUT_GAMES", "100"))
#: one game in UNIFORM_EVERY is played by purely uniform agents (long, stalemate-heavy
#: rounds); the rest by eager random agents (rounds mostly end by going out)
UNIFORM_EVERY = 20
#: expensive checks (JSON, round trip, check()+apply of every legal action) every N steps
DEEP_EVERY = 40
WORKERS = int(os.environ.get("GLINTWICK_PLAYOUT_WORKERS", str(min(2, os.cpu_count() or 1))))

RULESETS: dict[str, RuleSet] = {
    r.name: r for r in (WHISKERTRAIL, CONTRACT, CUSTOM_MIX, CUSTOM_MAYI)
}


def _seats(rules: RuleSet, index: int) -> int:
    span = rules.max_players - rules.min_players + 1
    return rules.min_players + index % span


def replay_game(
    name: str, index: int, deep_every: int = DEEP_EVERY, uniform_every: int = UNIFORM_EVERY
) -> Counter[str]:
    """Play (again) game ``index`` of rule set ``name`` with every check.

    Game ``index`` is played by uniform agents when ``index % uniform_every == 0``, by
    eager random agents otherwise.  Returns what happened: ``steps``, the count of
    every event type and of every reason a round ended (``round_ended:<reason>``)."""
    rules = RULESETS[name]
    seed = hashlib.sha256(f"playout/{name}/{index}".encode()).digest()[:16]
    rng = random.Random(f"playout-rng/{name}/{index}")
    agent: Bot = UniformBot() if index % uniform_every == 0 else EagerBot()
    playout = random_playout(
        rules, _seats(rules, index), seed, rng, deep_every=deep_every, agent=agent, keep_log=True
    )
    assert playout.final.is_terminal()
    assert playout.final.round_number == rules.rounds
    assert all(s >= 0 for s in playout.final.scores)
    seen: Counter[str] = Counter(str(ev.type) for ev in playout.events)
    seen.update(
        f"round_ended:{ev.public['reason']}" for ev in playout.events if ev.type == "round_ended"
    )
    seen["steps"] = playout.steps
    return seen


Job = tuple[str, int, int, int]  # rule set name, game index, deep_every, uniform_every


def _safe_game(job: Job) -> tuple[Counter[str], str | None]:
    """replay_game for a worker process: (what happened, None) or (empty, the traceback)."""
    name, index, deep_every, uniform_every = job
    try:
        return replay_game(name, index, deep_every, uniform_every), None
    except Exception:
        return Counter(), f"game {name}#{index}:\n{traceback.format_exc()}"


def _play_all(pool: Executor | None, jobs: list[Job]) -> Counter[str]:
    """Play every job, on the pool if there is one; fail listing the broken games."""
    results = pool.map(_safe_game, jobs, chunksize=1) if pool else map(_safe_game, jobs)
    seen: Counter[str] = Counter()
    failures: list[str] = []
    for done, failure in results:
        seen.update(done)
        if failure:
            failures.append(failure)
    if failures:
        pytest.fail(
            f"{len(failures)} of {len(jobs)} games failed (replay one with "
            f"tests.property.test_playouts.replay_game(name, index)); first:\n"
            + "\n".join(failures[:3]),
            pytrace=False,
        )
    return seen


@pytest.fixture(scope="module")
def pool() -> Iterator[Executor | None]:
    if WORKERS <= 1:
        yield None
        return
    with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("forkserver")) as ex:
        yield ex


#: what the games of each rule set must have gone through at least once, so that the
#: invariants were checked on every kind of transition (not on draw/discard alone)
MUST_SEE: dict[str, set[str]] = {
    "whiskertrail": {
        "laid_contract",
        "laid_off",
        "extra_meld",
        "stock_exhausted",
        "stock_reshuffled",
        "round_ended:went_out",
        "round_ended:turn_cap",
    },
    "contract": {
        "laid_contract",
        "laid_off",
        "joker_swapped",
        "claim_awarded",
        "stock_reshuffled",
        "round_ended:went_out",
        "round_ended:dry",
    },
    "custom-mix": {
        "laid_contract",
        "laid_off",
        "extra_meld",
        "joker_swapped",
        "round_ended:went_out",
        "round_ended:exhaustions",
    },
    "custom-mayi": {
        "laid_contract",
        "laid_off",
        "claim_awarded",
        "round_ended:dry",
        "round_ended:turn_cap",
    },
}


# a fixed amount of work (GAMES_PER_RULESET games), about a minute on a quiet 2-core
# machine: the suite's 300 s guard against hangs is too tight for it beside other work
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("name", list(RULESETS))
def test_random_games_end_properly(name: str, pool: Executor | None) -> None:
    jobs = [(name, index, DEEP_EVERY, UNIFORM_EVERY) for index in range(GAMES_PER_RULESET)]
    seen = _play_all(pool, jobs)
    if GAMES_PER_RULESET >= 100:
        missing = sorted(MUST_SEE[name] - set(seen))
        assert not missing, f"{name}: no game went through {missing}; seen {dict(seen)}"


def test_seat_counts_are_mixed() -> None:
    assert {_seats(WHISKERTRAIL, i) for i in range(GAMES_PER_RULESET)} == {2, 3, 4}
    assert {_seats(CONTRACT, i) for i in range(GAMES_PER_RULESET)} == {4}
    assert {_seats(CUSTOM_MIX, i) for i in range(GAMES_PER_RULESET)} == {2, 3, 4}


@pytest.mark.slow
@pytest.mark.skipif(
    "GLINTWICK_SOAK_GAMES" not in os.environ,
    reason="the soak runs under `make soak` (GLINTWICK_SOAK_GAMES sets its game count)",
)
def test_soak(pool: Executor | None) -> None:
    games = int(os.environ["GLINTWICK_SOAK_GAMES"])
    names = list(RULESETS)
    # one game in four by uniform agents: long, stalemate-heavy rounds
    jobs = [(names[i % len(names)], 1_000_000 + i, 25, 4) for i in range(games)]
    started = time.perf_counter()
    seen = _play_all(pool, jobs)
    elapsed = time.perf_counter() - started
    print(f"soak: {games} games, {seen['steps']} checked steps in {elapsed:.0f} s: {dict(seen)}")


# ---------------------------------------------------------------- known engine/rules issues


class PassEveryClaimBot(EagerBot):
    """Eager, but never claims: passes every claim window."""

    def choose(self, situation: Situation, legal: Sequence[Action], rng: random.Random) -> Action:
        passes = [a for a in legal if isinstance(a, PassClaim)]
        return passes[0] if passes else super().choose(situation, legal, rng)


#: the `contract` preset without the dead-round rule: only the turn cap ends a dead round
CONTRACT_NO_DEAD = dataclasses.replace(CONTRACT, name="contract-no-dead", dead_round_ends=False)


@pytest.mark.parametrize(
    ("rules", "reason"), [(CONTRACT, "dead"), (CONTRACT_NO_DEAD, "turn_cap")], ids=["dead", "cap"]
)
def test_contract_round_ends_even_when_nobody_can_go_out(rules: RuleSet, reason: str) -> None:
    """Seed b"live0", every claim passed: within a few hundred turns of round 1 all
    four seats are open, the eight sets on the table are full (4 cards each) and the
    hands hold one to three cards such as K♦ K♣ K♠ that fit nowhere: nothing can be
    laid off, contract allows no new meld, so each turn would draw and discard, the
    pile reshuffled into the stock again and again.  The dead-round rule
    (docs/RULES.md, rule 6) ends the round the moment the last set fills; without it
    the 200-completed-turn cap (docs/DECISIONS.md) does."""
    state = GameState.new_game(rules, 4, b"live0")
    rng = random.Random(0)
    passer = PassEveryClaimBot()
    reasons: list[str] = []
    while state.round_number == 1 and state.turns_completed < 1_000:
        seat = state.to_act[rng.randrange(len(state.to_act))]
        before = state.turns_completed
        state, _, events = engine_turn(state, seat, passer, rng)
        reasons += [e.public["reason"] for e in events if e.type == "round_ended"]
    assert state.round_number > 1, (
        f"round 1 still running after {state.turns_completed} turns: "
        f"hands {[[c.code for c in h] for h in state.hands]}, "
        f"table {[m.describe() for m in state.table]}"
    )
    assert reasons == [reason]
    assert rules.turn_cap is not None
    assert (before < rules.turn_cap - 1) is (reason == "dead")


# ---------------------------------------------------------------- the harness can fail


def _some_state() -> GameState:
    state = GameState.new_game(WHISKERTRAIL, 3, b"harness-self-test")
    rng = random.Random(7)
    agent = UniformBot()
    for _ in range(40):
        state, _, _ = engine_turn(state, state.to_act[0], agent, rng)
    return state


def test_harness_accepts_a_sound_state() -> None:
    check_invariants(_some_state(), deep=True)


def test_harness_detects_a_duplicated_card() -> None:
    state = _some_state()
    hands = list(state.hands)
    hands[0] = (*hands[0][:-1], state.stock[0])  # a stock card appears twice, one card vanishes
    broken = dataclasses.replace(state, hands=tuple(hands))
    with pytest.raises(AssertionError, match="deck"):
        check_invariants(broken)


def test_harness_detects_a_leaking_view(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _some_state()
    real: Callable[[GameState, int], dict[str, Any]] = seat_view

    def leaky(s: GameState, seat: int) -> dict[str, Any]:
        view = real(s, seat)
        other = s.hands[(seat + 1) % s.seats]
        view["debug"] = [{"id": c.id, "code": c.code} for c in other]
        return view

    monkeypatch.setattr(secrecy, "seat_view", leaky)
    with pytest.raises(AssertionError, match="reveals card ids"):
        check_invariants(state)


def test_harness_detects_a_leaked_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _some_state()
    real: Callable[[GameState], dict[str, Any]] = spectator_view

    def leaky(s: GameState) -> dict[str, Any]:
        return {**real(s), "note": f"seed {s.seed.hex()}"}

    monkeypatch.setattr(secrecy, "spectator_view", leaky)
    with pytest.raises(AssertionError, match="seed"):
        check_invariants(state)


def test_harness_detects_a_stock_order_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _some_state()
    real: Callable[[GameState], dict[str, Any]] = spectator_view

    def leaky(s: GameState) -> dict[str, Any]:
        # ids only, no codes: the top of the stock in order under a card-ish key
        return {**real(s), "next_cards": [c.id for c in s.stock[:3]]}

    monkeypatch.setattr(secrecy, "spectator_view", leaky)
    with pytest.raises(AssertionError, match="reveals"):
        check_invariants(state)


def test_harness_reports_engine_errors_with_a_reproducer(monkeypatch: pytest.MonkeyPatch) -> None:
    class BadBot(Bot):
        def choose(
            self, situation: Situation, legal: Sequence[Action], rng: random.Random
        ) -> Action:
            return Discard(10_000)  # a card that does not exist

    with pytest.raises(PlayoutFailure, match="seed="):
        random_playout(WHISKERTRAIL, 2, b"x" * 8, random.Random(1), agent=BadBot())


def test_failed_games_are_reported_with_their_traceback(pool: Executor | None) -> None:
    with pytest.raises(
        pytest.fail.Exception, match=r"(?s)1 of 2 games failed.*no-such-rules.*KeyError"
    ):
        _play_all(pool, [("custom-mix", 1, 0, 20), ("no-such-rules", 0, 0, 20)])
