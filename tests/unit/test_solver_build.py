"""The compiled solver (setup.py, mypyc) is the source, current, and agrees with it.

``engine/solver.py`` is the one source of the solver; the editable install
compiles it in place and Python then imports the extension instead.  These
tests keep that honest: where a C compiler exists the extension must be what
runs, it must not be older than the source it was built from, and on every
conformance hand it must answer exactly what the source answers when run by
the interpreter.
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
from tests.solver_source import SOURCE, load_solver_source

DATA = Path(__file__).parents[1] / "data"
PURE = os.environ.get("GLINTWICK_PURE_PYTHON") == "1"
HAS_COMPILER = any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))


@pytest.fixture(scope="module")
def source_solver() -> Iterator[ModuleType]:
    """engine/solver.py run by the interpreter, whatever the import system prefers."""
    name = "engine._solver_source"
    try:
        yield load_solver_source(name)
    finally:
        sys.modules.pop(name, None)


def _plain(result: Any) -> tuple[Any, ...]:
    """An Analysis as plain data (the two modules' classes never compare equal)."""
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
        assert not solver.COMPILED, "GLINTWICK_PURE_PYTHON=1 installs the source only"
    elif HAS_COMPILER:
        assert solver.COMPILED, (
            "a C compiler is here, yet the solver was not compiled: `make install`"
        )


def test_the_compiled_solver_is_not_older_than_its_source() -> None:
    if not solver.COMPILED:
        pytest.skip("the source itself runs (no compiled solver here)")
    # mypyc writes a small shim (solver.*.so, the module's __file__) and the code
    # itself (solver__mypyc.*.so); only the latter changes with the source
    built = max(p.stat().st_mtime for p in SOURCE.parent.glob("solver*.so"))
    assert built >= SOURCE.stat().st_mtime, (
        "engine/solver.py changed after it was compiled: `make install` rebuilds it"
    )


def test_source_and_compiled_answer_the_same(source_solver: ModuleType) -> None:
    if not solver.COMPILED:
        pytest.skip("the source itself runs (no compiled solver here)")
    assert not source_solver.COMPILED
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
