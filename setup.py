"""Compiles the contract solver, the rules engine and the training environment's hot
path with mypyc, when it can.

The solver (the package ``engine/solver/``) is plain typed Python and stays the
one source: mypyc turns its modules, as one group, into C extensions that run it
several times faster, and Python imports those in place of the sources.  The
extensions are optional: with no C compiler (or ``GLINTWICK_PURE_PYTHON=1``) the
install goes on and the engine runs the sources as they are, with identical
results.  The build records the hash of the sources it compiled
(``engine/solver/build_stamp.py``, compiled with them), so an edited source is
never shadowed by an older build: engine/loading.py.  ``make solver`` rebuilds in
place.  The second group, ``engine.game_native`` (engine/compiled.py: the rules engine,
GameState and its rules), and the third, ``clients.native`` (clients/compiled.py: the
training observation, its action index and the bots' card tracking), are built and
checked the same way, a stamp in each package a group spans.  Everything else about the
package lives in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup

ENGINE = Path("engine")
SOLVER = ENGINE / "solver"


def standalone(name: str, path: Path) -> ModuleType:
    """One module's file on its own (importing its package would load the modules
    being built): the module lists and the source hash the check at import uses."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def group_extensions(loading: ModuleType, name: str, path: Path) -> list[object]:
    """The group a ``compiled.py`` at ``path`` names (engine/compiled.py,
    clients/compiled.py).  numpy and the protobuf stubs may be absent from the build's
    environment: what it cannot find is typed Any (--ignore-missing-imports), and only
    the group's own modules must type-check (--follow-imports=silent)."""
    from mypyc.build import mypycify

    group = standalone(name, path)
    stamp = loading.stamp_source(loading.group_hash(Path(), group.COMPILED_MODULES))
    stamps = []
    for package in group.PACKAGES:
        stamp_path = Path(*package.split(".")) / f"{loading.STAMP_MODULE}.py"
        stamp_path.write_text(stamp)
        stamps.append(str(stamp_path))
    sources = [str(Path(*m.split("."))) + ".py" for m in group.COMPILED_MODULES]
    flags = ["--ignore-missing-imports", "--follow-imports=silent"]
    return list(mypycify([*flags, *sources, *stamps], opt_level="3", group_name=group.GROUP))


def extensions() -> list[object]:
    if os.environ.get("GLINTWICK_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build environment without mypy: run the source
        return []
    # the solver's loading imports engine.loading, which imports nothing of the engine:
    # registered here by name, the engine package (being built) is not imported
    loading = sys.modules["engine.loading"] = standalone("engine.loading", ENGINE / "loading.py")
    solver = standalone("solver_loading", SOLVER / "loading.py")
    stamp = SOLVER / f"{loading.STAMP_MODULE}.py"
    stamp.write_text(loading.stamp_source(solver.source_hash(SOLVER)))
    sources = [str(SOLVER / f"{name}.py") for name in solver.COMPILED_MODULES]
    modules = mypycify([*sources, str(stamp)], opt_level="3", group_name="engine.native")
    for name, path in (
        ("engine_compiled", ENGINE / "compiled.py"),
        ("clients_compiled", Path("clients") / "compiled.py"),
    ):
        try:
            modules += group_extensions(loading, name, path)
        except (Exception, SystemExit) as failed:  # (mypyc exits on a type error)
            # the group runs from source (slower, the same results); the others build
            print(f"setup.py: {path}'s group is not compiled ({failed!r}): it runs from source")
    for module in modules:
        module.optional = True  # no compiler: a warning, and the pure-Python engine
    return list(modules)


setup(ext_modules=extensions())
