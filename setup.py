"""Compiles the contract solver with mypyc, when it can.

The solver (the package ``engine/solver/``) is plain typed Python and stays the
one source: mypyc turns its modules, as one group, into C extensions that run it
several times faster, and Python imports those in place of the sources.  The
extensions are optional: with no C compiler (or ``GLINTWICK_PURE_PYTHON=1``) the
install goes on and the engine runs the sources as they are, with identical
results.  The build records the hash of the sources it compiled
(``engine/solver/build_stamp.py``, compiled with them), so an edited source is
never shadowed by an older build: engine/solver/loading.py.  ``make solver``
rebuilds in place.  Everything else about the package lives in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

from setuptools import setup

SOLVER = Path("engine") / "solver"


def solver_loading() -> ModuleType:
    """engine/solver/loading.py on its own (importing the package would load the
    solver itself): the module list and the source hash the check at import uses."""
    spec = importlib.util.spec_from_file_location("solver_loading", SOLVER / "loading.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extensions() -> list[object]:
    if os.environ.get("GLINTWICK_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build environment without mypy: run the source
        return []
    loading = solver_loading()
    stamp = SOLVER / f"{loading.STAMP_MODULE}.py"
    stamp.write_text(loading.stamp_source(loading.source_hash(SOLVER)))
    sources = [str(SOLVER / f"{name}.py") for name in loading.COMPILED_MODULES]
    modules = mypycify([*sources, str(stamp)], opt_level="3", group_name="engine.solver.native")
    for module in modules:
        module.optional = True  # no compiler: a warning, and the pure-Python engine
    return list(modules)


setup(ext_modules=extensions())
