"""Which form of the solver runs: its compiled build, or its Python source.

setup.py compiles the solver's modules (``COMPILED_MODULES``) with mypyc into
C extensions that sit next to their sources, and Python's import system
prefers an extension to a source of the same name.  Left alone, an edited
source would stay shadowed by the extension built from the old one until the
next build.  So the build also compiles ``build_stamp`` (a module it writes,
holding the hash of the sources it compiled), and the package's ``__init__``
asks ``choose_form`` before any solver module loads:

* ``GLINTWICK_PURE_PYTHON=1`` in the environment: the source runs;
* no extension (no compiler, or never built): the source runs;
* the extension was built from other sources than the ones here: the source
  runs, the edit takes effect at once (slower, never wrong), and
  tests/unit/test_solver_build.py fails until ``make solver`` rebuilds it;
* otherwise the compiled build runs.

Running the source means the solver's modules are read from their ``.py``
files although extensions sit beside them (``_SourceFinder``).  This module is
never compiled itself: it decides which of the two forms the others take.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

# The modules mypyc compiles, as one group (setup.py), in the order they build on
# each other; their sources make the hash a build records.
COMPILED_MODULES: Final = (
    "values",
    "planes",
    "card_ids",
    "tables",
    "skeletons",
    "best_so_far",
    "best_search",
    "meld_building",
    "cost_leaves",
    "cost_search",
    "answers",
)
# written by setup.py when it compiles, compiled with the rest, never committed
STAMP_MODULE: Final = "build_stamp"
COMPILED: Final = "compiled"
DIRECTORY: Final = Path(__file__).resolve().parent

# packages whose modules must come from source whatever is built (load_source_form)
_SOURCE_ONLY: set[str] = set()


def source_hash(directory: Path = DIRECTORY) -> str:
    """SHA-256 over the compiled modules' sources, names included."""
    digest = hashlib.sha256()
    for name in COMPILED_MODULES:
        digest.update(name.encode() + b"\0")
        digest.update((directory / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()


def group_hash(root: Path, modules: Sequence[str]) -> str:
    """SHA-256 over the sources of a group of dotted ``modules`` under ``root`` (a group
    that spans packages: clients/compiled.py), names included."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update(name.encode() + b"\0")
        digest.update((root / f"{name.replace('.', '/')}.py").read_bytes() + b"\0")
    return digest.hexdigest()


def stamp_source(digest: str) -> str:
    """The text of build_stamp.py for a build of sources with this hash."""
    return (
        '"""Written by setup.py when it compiles a group of modules: the hash of the\n'
        'sources it compiled (engine/solver/loading.py compares it with the sources here)."""\n\n'
        "from typing import Final\n\n"
        f'SOURCE_HASH: Final = "{digest}"\n'
    )


def decide_form(pure_requested: bool, built_hash: str | None, current_hash: str | None) -> str:
    """``COMPILED``, or "pure: " and the reason the source runs instead
    (``current_hash`` None: an install that ships the build without its sources)."""
    if pure_requested:
        return "pure: GLINTWICK_PURE_PYTHON=1"
    if built_hash is None:
        return "pure: no extension"
    if current_hash is not None and built_hash != current_hash:
        return "pure: compiled build is stale"
    return COMPILED


def choose_form(
    package: str, directory: Path = DIRECTORY, sources: Callable[[], str] | None = None
) -> str:
    """Decide which form the package's modules take, before any of them loads, and
    make the import system follow it; returns the form (see ``decide_form``).
    ``sources``: the hash of the compiled group's sources as they are now (default: the
    solver's, in ``directory``); the package's ``build_stamp`` holds the build's."""
    if package in _SOURCE_ONLY:
        form = "pure: loaded as source"
    else:
        pure = os.environ.get("GLINTWICK_PURE_PYTHON") == "1"
        try:
            current: str | None = source_hash(directory) if sources is None else sources()
        except FileNotFoundError:
            current = None
        form = decide_form(pure, None if pure else _built_hash(package), current)
    if form != COMPILED:
        sys.meta_path.insert(0, _SourceFinder(package, directory))
    return form


def _built_hash(package: str) -> str | None:
    """The hash the compiled build recorded, or None where there is no build."""
    name = f"{package}.{STAMP_MODULE}"
    try:
        stamp = importlib.import_module(name)
    except ImportError:  # never built, or a build this interpreter cannot load
        return None
    finally:
        sys.modules.pop(name, None)  # read once: no solver module imports it
    compiled = not str(stamp.__file__).endswith(".py")
    built = getattr(stamp, "SOURCE_HASH", None)
    return built if compiled and isinstance(built, str) else None


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds a package's modules as their .py sources, ahead of the extensions
    beside them."""

    def __init__(self, package: str, directory: Path) -> None:
        self.package = package
        self.directory = directory

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        source = self.directory / f"{name}.py"
        if package != self.package or not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def load_source_form(name: str) -> ModuleType:
    """The solver run from its source, as a fresh package ``name`` beside the one
    ``engine.solver`` runs: to compare the two forms (tests, bench)."""
    _SOURCE_ONLY.add(name)
    spec = importlib.util.spec_from_file_location(
        name, DIRECTORY / "__init__.py", submodule_search_locations=[str(DIRECTORY)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def unload_source_form(name: str) -> None:
    """Forget a package load_source_form made (its modules and its finder)."""
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    sys.meta_path[:] = [
        f for f in sys.meta_path if not (isinstance(f, _SourceFinder) and f.package == name)
    ]
    _SOURCE_ONLY.discard(name)
