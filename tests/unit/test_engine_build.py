"""The compiled rules engine (engine/compiled.py: GameState, its rules, cards, melds,
events and views) is its sources, current, and hands out what they do.

setup.py compiles the group in place with mypyc, as it does the solver
(tests/unit/test_solver_build.py) and the client group (tests/unit/test_clients_build.py);
both packages it spans decide the same form before their modules load: compiled where a
C compiler built it from these very sources, else every module of the group from its
source.  The environment's pinned digests (tests/unit/test_training_digest.py) and the
golden games hold in both forms.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import engine
import engine.game
from engine import compiled
from engine.cards import cards_from_codes
from engine.compiled import COMPILED_MODULES, PACKAGES
from engine.game import GameState, Phase
from engine.melds import build_meld
from engine.rulesets import MeldKind, ruleset
from engine.views import build_seat_view, build_spectator_view
from tests.support.builds import check_group_forms, check_stale_build, run_python
from tests.unit.test_training_digest import DIGESTS

ROOT = Path(compiled.__file__).resolve().parents[1]
COMPILED = engine.game.ENGINE_FORM == "compiled"

# what a fresh interpreter reports of the group it imports (run by _report)
REPORT = """
import json, sys
import engine, engine.game, engine.views
files = [sys.modules[name].__file__ for name in sys.argv[1:]]
print(json.dumps({"forms": [engine.ENGINE_FORM, engine.game.ENGINE_FORM],
                  "package": engine.game.__file__, "files": files}))
"""

# the pinned digests and a replayed game's stored forms, by a fresh interpreter
DIGEST = """
import json, random
from engine.game import GameState
from engine.rulesets import ruleset
from engine.views import seat_view
from tests.unit.test_training_digest import DIGESTS, digest
games = []
for name, seats in (("whiskertrail", 2), ("contract", 4)):
    rng = random.Random(seats)
    state = GameState.new_game(ruleset(name), seats, b"build")
    events = []
    while not state.is_terminal():
        seat = state.to_act[0]
        state, made = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        events += [e.to_dict() for e in made]
    games.append([state.to_dict(), events, seat_view(state, 0)])
print(json.dumps({"digests": [[*key, digest(*key)] for key in sorted(DIGESTS)],
                  "games": games}, sort_keys=True, default=str))
"""


def _report(cwd: Path, pure: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = run_python(REPORT, cwd, pure, *COMPILED_MODULES)
    return report


def test_the_group_runs_compiled_where_a_compiler_is() -> None:
    check_group_forms({engine.ENGINE_FORM, engine.game.ENGINE_FORM})


def test_every_module_of_the_group_runs_in_the_form_chosen() -> None:
    for name in COMPILED_MODULES:
        assert str(sys.modules[name].__file__).endswith(".py") != COMPILED, name
    assert {name.rpartition(".")[0] for name in COMPILED_MODULES} == set(PACKAGES)


def test_the_makefile_rebuilds_on_an_edit_of_any_module_of_the_group() -> None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^ENGINE_SOURCES := ((?:.*\\\n)*.*)$", text, re.M)
    assert listed is not None
    sources = set(listed.group(1).replace("\\\n", " ").split())
    assert {m.replace(".", "/") + ".py" for m in COMPILED_MODULES} <= sources
    assert {"engine/compiled.py", "engine/loading.py"} <= sources


def test_an_edited_source_runs_instead_of_its_stale_build(tmp_path: Path) -> None:
    if not COMPILED:
        pytest.skip("the sources themselves run (no compiled group here)")
    check_stale_build(ROOT, tmp_path, "engine/game/state.py", _report)


def test_pure_python_runs_the_sources_and_hands_out_the_same() -> None:
    report = _report(ROOT, pure=True)
    assert report["forms"] == ["pure: GLINTWICK_PURE_PYTHON=1"] * 2
    assert all(f.endswith(".py") for f in report["files"])
    pure = run_python(DIGEST, ROOT, True)
    assert {(name, seats): d for name, seats, d in pure["digests"]} == DIGESTS
    if COMPILED:  # the same games, byte for byte, from the build
        assert run_python(DIGEST, ROOT, False) == pure


def test_the_engine_values_copy_and_pickle_in_either_form() -> None:
    """copy, deepcopy and pickle rebuild a value through its ``__reduce__``: compiled, a
    frozen class refuses the attribute writes they would make otherwise."""
    state = GameState.new_game(ruleset("contract"), 4, b"copies")
    rng = random.Random(3)
    events = []
    while not state.table and not state.is_terminal():
        seat = state.to_act[0]
        state, made = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        events += made
    values = [state, state.hands[0][0], *state.table, *events]
    values += [build_seat_view(state, 0), build_spectator_view(state)]
    for value in values:
        for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
            assert type(twin) is type(value) and twin == value


def test_evolve_and_init_take_each_field_of_the_state() -> None:
    """GameState's ``__init__`` and ``evolve`` are written out, a keyword per field (no
    function written at import: the compiled class runs them native)."""
    state = GameState.new_game(ruleset("whiskertrail"), 2, b"one")
    other = GameState.new_game(ruleset("contract"), 4, b"two")
    rng = random.Random(5)
    for _ in range(9):
        seat = other.to_act[0]
        other = other.apply_action(seat, rng.choice(other.legal_actions(seat)))[0]
    other = other.evolve(taken_from_discard=7, laid_this_turn=True, exhaustions=1, epoch=2)
    other = other.evolve(claim_answers=(None, True), stock_orders=((1, (0,)),), abandoned=True)
    other = other.evolve(round_number=2, phase=Phase.CLAIM, current=3, turns_completed=5)
    rules = ruleset("contract")
    sevens = cards_from_codes(["7C", "7D", "7H"], rules.decks, rules.jokers)
    other = other.evolve(table=(build_meld(MeldKind.SET, sevens, rules),))
    names = [f.name for f in dataclasses.fields(GameState) if f.init]
    assert names == [f.name for f in dataclasses.fields(GameState)][:-1]  # then the memo
    assert GameState(**{name: getattr(other, name) for name in names}) == other
    for name in names:
        assert getattr(state, name) != getattr(other, name), name
        made = state.evolve(**{name: getattr(other, name)})
        assert [getattr(made, n) for n in names] == [
            getattr(other if n == name else state, n) for n in names
        ], name
