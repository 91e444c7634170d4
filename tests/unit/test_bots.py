"""The bots in process: legal play, reproducibility, and who beats whom on fixed deals."""

from __future__ import annotations

import dataclasses
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from clients.bots import BOTS, Bot, BotSpecError, known_bots, make_bot, resolve
from clients.bots.base import Situation
from clients.bots.greedy import GreedyBot
from clients.bots.montecarlo import determinize
from clients.bots.strong import StrongBot, live_outs
from clients.tournament import schedule as sched
from clients.tournament.runner import run_inprocess
from clients.tournament.stats import _resamples, bot_stats
from clients.turn import engine_turn
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL
from engine.solver import analyse
from tests.support.wire import wire_situation

SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:2])


def mean_penalties(bots: list[str], deals: int, seed: int) -> dict[str, float]:
    specs = sched.games(bots, 2, deals, seed, "round-robin")
    return {s.bot: s.mean_penalty for s in bot_stats(run_inprocess(specs, SHORT, seed), seed)}


def test_registry_knows_the_builtin_bots() -> None:
    assert {"random", "greedy", "strong", "expert", "montecarlo", "oracle"} <= set(BOTS)
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("nobody")


@pytest.mark.parametrize("name", ["random", "greedy", "strong", "expert", "montecarlo"])
def test_bots_play_contract_legally(name: str) -> None:
    """Every choice is one of the legal actions offered (May I?, swaps, no-discard round)."""
    rules = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[-2:])
    state = GameState.new_game(rules, 4, b"bots-contract")
    bots = [make_bot(name, s) for s in range(4)]
    for s, bot in enumerate(bots):
        bot.setup(rules, s)
    rng = random.Random(5)
    steps = 0
    while not state.is_terminal() and steps < 3000:
        seat = state.to_act[0]
        legal = state.legal_actions(seat)
        state, action, _ = engine_turn(state, seat, bots[seat], rng)
        assert action in legal
        steps += 1
    assert state.is_terminal()


def test_determinization_matches_the_view() -> None:
    state = GameState.new_game(SHORT, 3, b"det")
    sit = wire_situation(state, 0)
    world = determinize(sit, random.Random(1))
    assert world is not None
    assert world.hands[0] == state.hands[0]
    assert [len(h) for h in world.hands] == [len(h) for h in state.hands]
    assert len(world.stock) == len(state.stock) and world.discards[-1] == state.discards[-1]
    assert sorted(c.id for c in world.all_cards()) == sorted(c.id for c in state.all_cards())


def test_duplicate_rotation_gives_every_bot_every_hand() -> None:
    specs = sched.games(["a", "b", "c"], 3, 2, seed=9, schedule="round-robin", seating="cyclic")
    assert len(specs) == 1 * 2 * 3
    for deal in range(2):
        games = [s for s in specs if s.deal == deal]
        assert len({s.seed for s in games}) == 1  # one deal...
        for bot in "abc":  # ...and each bot held each seat's hand of it once
            assert sorted(s.seats.index(bot) for s in games) == [0, 1, 2]
    assert specs[0].seed != next(s for s in specs if s.deal == 1).seed
    assert sched.games(["a", "b", "c"], 3, 2, seed=9, seating="cyclic") == specs  # reproduces
    gauntlet = sched.lineups(["x", "a", "b"], 3, "gauntlet")
    assert gauntlet == [("x", "a", "a"), ("x", "b", "b")]


def test_greedy_beats_random() -> None:
    means = mean_penalties(["greedy", "random"], deals=2, seed=11)
    assert means["greedy"] < means["random"]


def test_strong_beats_greedy() -> None:
    """40 games (20 duplicate deal sets); the benchmark's intervals: docs/TOURNAMENTS.md."""
    means = mean_penalties(["strong", "greedy"], deals=20, seed=2)
    assert means["strong"] < means["greedy"]


def test_in_process_runs_reproduce() -> None:
    specs = sched.games(["strong", "greedy"], 2, 1, 4)
    first = [r.row() for r in run_inprocess(specs, SHORT, 4)]
    assert first == [r.row() for r in run_inprocess(specs, SHORT, 4)]
    assert all(r["ruleset_hash"] == SHORT.hash and r["tournament_seed"] == 4 for r in first)


def test_strong_counts_the_discards_it_has_seen_until_the_next_deal() -> None:
    state = GameState.new_game(SHORT, 2, b"counting")
    bot = StrongBot(1)
    bot.setup(SHORT, 0)
    rng = random.Random(3)
    tops: set[int] = set()
    while state.round_number == 1 and len(tops) < 4:
        seat = state.to_act[0]
        legal = state.legal_actions(seat)
        if seat == 0:
            if state.discards:
                tops.add(state.discards[-1].id)
            action = bot.choose(Situation.from_state(state, 0), legal, rng)
        else:
            action = legal[rng.randrange(len(legal))]
        state, _ = state.apply_action(seat, action)
    sit = wire_situation(state, 0)
    seen = bot.seen(sit)
    known = {c.id: c for c in sit.hand} | {c.id: c for m in sit.table for c in m.cards}
    for card_id in tops - known.keys():  # each top it saw is counted once, as not drawable
        kind = next(c for c in state.all_cards() if c.id == card_id).kind
        assert seen[kind] >= 1
    assert sum(seen.values()) >= len(sit.hand) + len(tops - known.keys())
    # a new deal forgets: only what the view itself shows is counted
    bot._watch(sit._replace(round_number=2, discard_top=None, exhaustions=0))
    assert sum(bot.seen(sit).values()) == len(sit.hand) + sum(len(m.cards) for m in sit.table) + (
        1 if sit.discard_top is not None else 0
    )


def test_live_outs_lower_with_every_copy_seen() -> None:
    sits = (wire_situation(GameState.new_game(SHORT, 2, bytes([n])), 0) for n in range(50))
    sit = next(s for s in sits if analyse(s.hand, SHORT, 1).outs)  # a hand with outs
    report = analyse(sit.hand, SHORT, 1)
    missing, live = live_outs(sit.hand, sit, Counter())
    assert missing == report.missing
    assert live == sum(SHORT.jokers if k[0] == 0 else SHORT.decks for k in report.outs)
    first = report.outs[0]
    assert live_outs(sit.hand, sit, Counter({first: 1})) == (missing, live - 1)


def test_pairs_compare_bots_deal_set_by_deal_set() -> None:
    from clients.tournament.stats import pair_stats

    sets = {
        0: {"a": [10, 20], "b": [30, 40]},  # a better by 20
        1: {"a": [50], "b": [40]},  # b better by 10
        2: {"a": [5], "c": [0]},  # b absent: not counted
    }
    pair = pair_stats(sets, "a", "b", seed=1)
    assert pair is not None
    assert (pair.deal_sets, pair.mean_difference) == (2, -5.0)
    assert (pair.better_share, pair.tied_share, pair.worse_share) == (0.5, 0.0, 0.5)
    assert pair.ci_low == -20.0 and pair.ci_high == 10.0
    assert pair_stats(sets, "b", "c", seed=1) is None


# --------------------------------------------------------------------------- the registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "lowball_bot.py"


def test_the_built_in_bots_register_through_the_entry_point_group() -> None:
    assert known_bots() == [
        "best",
        "closer",
        "dumpfar",
        "expert",
        "greedy",
        "montecarlo",
        "oracle",
        "racer",
        "random",
        "search",
        "strong",
    ]
    assert resolve("strong") is StrongBot and isinstance(make_bot("greedy", 3), GreedyBot)
    assert make_bot("strong", 3).seed == 3


def test_a_bot_is_found_by_module_and_class_or_by_file_and_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"lowball_{tmp_path.name}"  # resolve() caches by spec: a name per test
    shutil.copy(EXAMPLE, tmp_path / f"{module}.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    by_module = resolve(f"{module}:LowballBot")
    by_file = resolve(f"{tmp_path / f'{module}.py'}:LowballBot")
    for cls in (by_module, by_file):
        assert issubclass(cls, Bot) and cls.__name__ == "LowballBot"
    assert resolve(f"{tmp_path / f'{module}.py'}:LowballBot") is by_file  # loaded once


@pytest.mark.parametrize(
    ("source", "spec", "message"),
    [
        (
            "",
            "nobody",
            r"unknown bot 'nobody'; known: best, closer, dumpfar, expert, greedy, montecarlo,"
            r" oracle, racer, random, search, strong",
        ),
        ("", "no_such_module_here:Bot", r"cannot import no_such_module_here: ModuleNotFoundError"),
        ("raise RuntimeError('boom')\n", "FILE:Bot", r"cannot import .*: RuntimeError: boom"),
        ("x = 1\n", "FILE:Missing", r"has no Missing"),
        ("class NotABot:\n    pass\n", "FILE:NotABot", r"is not a Bot subclass"),
        (
            "from clients.bots import Bot\nclass Half(Bot):\n    pass\n",
            "FILE:Half",
            r"Half does not implement choose",
        ),
        ("", "FILE:", r"expected module:Class or path/to/file.py:Class"),
        ("", "/no/such/dir/bot.py:Bot", r"bot file /no/such/dir/bot.py does not exist"),
    ],
)
def test_a_spec_that_names_no_usable_bot_is_one_clear_line(
    tmp_path: Path, source: str, spec: str, message: str
) -> None:
    path = tmp_path / "broken_bot.py"
    path.write_text(source)
    with pytest.raises(BotSpecError, match=message) as caught:
        resolve(spec.replace("FILE", str(path)))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 17, 40])
def test_the_bootstrap_resamples_are_randrange_s_numbers(n: int) -> None:
    """The intervals reproduce those of earlier runs: the same draws as randrange."""
    rng = random.Random(11)
    expected = tuple(tuple(rng.randrange(n) for _ in range(n)) for _ in range(30))
    assert _resamples(11, n, 30) == expected
