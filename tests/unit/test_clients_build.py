"""The compiled client group (clients/compiled.py: the training observation, its action
index, the bots' card tracking) is its sources, current, and hands out what they do.

setup.py compiles the group in place with mypyc, as it does the solver
(tests/unit/test_solver_build.py); both packages it spans decide the same form before
their modules load: compiled where a C compiler built it from these very sources,
else every module of the group from its source.  The environment's pinned digests
(tests/unit/test_training_digest.py) hold in both forms.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import clients.bots
import clients.training
from clients import compiled
from clients.compiled import COMPILED_MODULES, PACKAGES
from tests.support.builds import check_group_forms, check_stale_build, run_python
from tests.unit.test_training_digest import DIGESTS

ROOT = Path(compiled.__file__).resolve().parents[1]
COMPILED = clients.training.CLIENTS_FORM == "compiled"

# what a fresh interpreter reports of the group it imports (run by _report)
REPORT = """
import json, sys
import clients.bots, clients.training
files = [sys.modules[name].__file__ for name in sys.argv[1:]]
print(json.dumps({"forms": [clients.bots.CLIENTS_FORM, clients.training.CLIENTS_FORM],
                  "package": clients.training.__file__, "files": files}))
"""

# the pinned digests, computed by a fresh interpreter (run by _digests)
DIGEST = """
import json
from tests.unit.test_training_digest import DIGESTS, digest
print(json.dumps([[*key, digest(*key)] for key in sorted(DIGESTS)]))
"""


def _report(cwd: Path, pure: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = run_python(REPORT, cwd, pure, *COMPILED_MODULES)
    return report


def test_the_group_runs_compiled_where_a_compiler_is() -> None:
    check_group_forms({clients.bots.CLIENTS_FORM, clients.training.CLIENTS_FORM})


def test_every_module_of_the_group_runs_in_the_form_chosen() -> None:
    for name in COMPILED_MODULES:
        assert str(sys.modules[name].__file__).endswith(".py") != COMPILED, name
    assert {name.rpartition(".")[0] for name in COMPILED_MODULES} == set(PACKAGES)


def test_an_edited_source_runs_instead_of_its_stale_build(tmp_path: Path) -> None:
    if not COMPILED:
        pytest.skip("the sources themselves run (no compiled group here)")
    check_stale_build(ROOT, tmp_path, "clients/training/observation.py", _report)


def test_pure_python_runs_the_sources_and_hands_out_the_same() -> None:
    report = _report(ROOT, pure=True)
    assert report["forms"] == ["pure: GLINTWICK_PURE_PYTHON=1"] * 2
    assert all(f.endswith(".py") for f in report["files"])
    digests = {(name, seats): d for name, seats, d in run_python(DIGEST, ROOT, True)}
    assert digests == DIGESTS
