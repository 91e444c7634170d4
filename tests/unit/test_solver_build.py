"""The compiled solver (setup.py, mypyc) is the source, current, and agrees with it.

The modules of ``engine/solver/`` are the one source of the solver; the
editable install (or ``make solver``) compiles them in place, and Python then
imports the extensions instead, unless they were built from other sources
(engine/solver/loading.py).  These tests keep that honest: where a C compiler
exists the compiled build must be what runs, an edited source must run instead
of a build made before the edit, ``GLINTWICK_PURE_PYTHON=1`` must run the
source, and on every conformance hand the compiled build must answer exactly
what the source answers when run by the interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from engine import solver
from engine.cards import cards_from_codes
from engine.rulesets import ruleset
from engine.solver.loading import (
    COMPILED_MODULES,
    decide_form,
    load_source_form,
    unload_source_form,
)
from tests.support.builds import run_python

DATA = Path(__file__).parents[1] / "data"
ENGINE = Path(solver.__file__).resolve().parents[1]
PURE = os.environ.get("GLINTWICK_PURE_PYTHON") == "1"
HAS_COMPILER = any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))

# what a fresh interpreter reports of the solver it imports (run by _report)
REPORT = """
import json, sys
import engine.solver as s
from engine.cards import cards_from_codes
from engine.rulesets import ruleset
rules = ruleset("contract")
hand = cards_from_codes("3H 4H 5H 6H 8S 8D 8C 9C 9D 9H KC".split(), rules.decks, rules.jokers)
files = [sys.modules["engine.solver." + name].__file__ for name in sys.argv[1:]]
print(json.dumps({"form": s.SOLVER_FORM, "compiled": s.COMPILED, "package": s.__file__,
                  "files": files, "analysis": repr(s.analyse(hand, rules, 1))}))
"""


def _report(cwd: Path, pure: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = run_python(REPORT, cwd, pure, *COMPILED_MODULES)
    return report


@pytest.fixture(scope="module")
def source_solver() -> Iterator[ModuleType]:
    """engine/solver/ run by the interpreter, whatever the import system prefers."""
    name = "engine._solver_source"
    try:
        yield load_source_form(name)
    finally:
        unload_source_form(name)


def _plain(result: Any) -> tuple[Any, ...]:
    """An Analysis as plain data (the two forms' classes never compare equal)."""
    best = result.best
    melds = (
        None
        if best is None
        else (
            best.points,
            best.jokers,
            [(m.kind, [c.id for c in m.cards], m.rank, m.suit) for m in best.melds],
        )
    )
    return (result.feasible, melds, result.missing, tuple(result.outs))


def test_the_solver_runs_compiled_where_a_compiler_is() -> None:
    if PURE:
        assert solver.SOLVER_FORM == "pure: GLINTWICK_PURE_PYTHON=1"
        assert not solver.COMPILED
    elif HAS_COMPILER:
        assert solver.COMPILED, (
            f"a C compiler is here, yet the solver runs {solver.SOLVER_FORM!r}: "
            "`make solver` (re)builds it"
        )
    assert (solver.SOLVER_FORM == "compiled") is solver.COMPILED


def test_every_solver_module_runs_in_the_form_chosen() -> None:
    # never a mix: a stale or absent build runs every module from its source
    for name in COMPILED_MODULES:
        module = sys.modules[f"engine.solver.{name}"]
        assert str(module.__file__).endswith(".py") != solver.COMPILED, name


def test_the_form_follows_the_environment_and_the_build() -> None:
    assert decide_form(False, "abc", "abc") == "compiled"
    assert decide_form(False, "abc", "abd") == "pure: compiled build is stale"
    assert decide_form(False, None, "abc") == "pure: no extension"
    assert decide_form(True, "abc", "abc") == "pure: GLINTWICK_PURE_PYTHON=1"
    assert decide_form(False, "abc", None) == "compiled"  # a build shipped without sources


def test_an_edited_source_runs_instead_of_its_stale_build(tmp_path: Path) -> None:
    if not solver.COMPILED:
        pytest.skip("the source itself runs (no compiled solver here)")
    shutil.copytree(ENGINE, tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    fresh = _report(tmp_path)
    assert Path(fresh["package"]).is_relative_to(tmp_path)  # the copy, not the install
    assert fresh["form"] == "compiled" and fresh["compiled"]
    assert not any(f.endswith(".py") for f in fresh["files"])
    with open(tmp_path / "engine" / "solver" / "planes.py", "a", encoding="utf-8") as fh:
        fh.write("# an edit the build has not seen\n")
    stale = _report(tmp_path)
    assert stale["form"] == "pure: compiled build is stale" and not stale["compiled"]
    assert all(f.endswith(".py") for f in stale["files"])
    assert stale["analysis"] == fresh["analysis"]


def test_pure_python_runs_the_source_whatever_is_built() -> None:
    pure = _report(ENGINE.parent, pure=True)
    assert pure["form"] == "pure: GLINTWICK_PURE_PYTHON=1" and not pure["compiled"]
    assert all(f.endswith(".py") for f in pure["files"])
    assert pure["analysis"] == _report(ENGINE.parent)["analysis"]


def test_source_and_compiled_answer_the_same(source_solver: ModuleType) -> None:
    if not solver.COMPILED:
        pytest.skip("the source itself runs (no compiled solver here)")
    assert not source_solver.COMPILED
    assert source_solver.SOLVER_FORM == "pure: loaded as source"
    for module in COMPILED_MODULES:
        assert str(sys.modules[f"engine._solver_source.{module}"].__file__).endswith(".py")
    compared = 0
    for name in ("solver-cases.jsonl", "solver-edge-cases.jsonl", "missing-cases.jsonl"):
        for line in (DATA / name).read_text().splitlines():
            row = json.loads(line)
            rules = ruleset(row["ruleset"])
            hand = cards_from_codes(row["hand"], rules.decks, rules.jokers)
            rnd = row["round"]
            assert _plain(solver.analyse(hand, rules, rnd)) == _plain(
                source_solver.analyse(hand, rules, rnd)
            ), (name, row["hand"])
            compared += 1
    assert compared >= 400
