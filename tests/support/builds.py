"""Running a fresh interpreter on a checkout, as the compiled builds' tests do
(tests/unit/test_solver_build.py, tests/unit/test_clients_build.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_python(script: str, cwd: Path, pure: bool, *args: str) -> Any:
    """What ``script`` prints (one JSON value), run by a fresh interpreter in ``cwd``
    (whose checkout it imports first); ``pure``: with ``GLINTWICK_PURE_PYTHON=1``."""
    env = {k: v for k, v in os.environ.items() if k != "GLINTWICK_PURE_PYTHON"}
    if pure:
        env["GLINTWICK_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=240,
    )
    return json.loads(done.stdout)


HAS_COMPILER = any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))


def check_group_forms(forms: set[str]) -> None:
    """The forms the packages of one compiled group took: one form, the compiled one
    where a C compiler is (``make solver`` builds it), the sources under
    ``GLINTWICK_PURE_PYTHON=1``."""
    if os.environ.get("GLINTWICK_PURE_PYTHON") == "1":
        assert forms == {"pure: GLINTWICK_PURE_PYTHON=1"}
    elif HAS_COMPILER:
        assert forms == {"compiled"}, f"a C compiler is here, yet {forms}: `make solver` builds it"
    assert len(forms) == 1  # never a mix


def check_stale_build(
    root: Path, copy: Path, edited: str, report: Callable[[Path], dict[str, Any]]
) -> None:
    """A copy of the checkout (``root``) in ``copy`` runs its group compiled, and every
    module of it from source once ``edited`` (a path under it) changed: ``report``
    (what a fresh interpreter in a checkout says: the package's file, the forms of the
    group's packages and its modules' files) before and after."""
    keep = shutil.ignore_patterns("__pycache__", "node_modules", "examples")
    for top in ("engine", "clients", "glintwick"):
        shutil.copytree(root / top, copy / top, ignore=keep)
    fresh = report(copy)
    assert Path(fresh["package"]).is_relative_to(copy)  # the copy, not the install
    assert set(fresh["forms"]) == {"compiled"}
    assert not any(f.endswith(".py") for f in fresh["files"])
    with open(copy / edited, "a", encoding="utf-8") as fh:
        fh.write("# an edit the build has not seen\n")
    stale = report(copy)
    # every package of the group: the modules not edited run from source too
    assert set(stale["forms"]) == {"pure: compiled build is stale"}
    assert all(f.endswith(".py") for f in stale["files"])
