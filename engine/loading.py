"""Which form a compiled group of modules takes: its build, or its Python sources.

setup.py compiles three groups of plain typed modules with mypyc into C extensions that
sit next to their sources: the solver (engine/solver/loading.py), the rules engine
(engine/compiled.py) and the training environment's hot path (clients/compiled.py).
Python's import system prefers an extension to a source of the same name, so left
alone an edited source would stay shadowed by the extension built from the old one
until the next build.  So each build also compiles ``build_stamp`` into each package
it spans (a module it writes, holding the hash of the sources it compiled), and each
such package's ``__init__`` asks ``choose_form`` before any of its modules loads:

* ``GLINTWICK_PURE_PYTHON=1`` in the environment: the source runs;
* no extension (no compiler, or never built): the source runs;
* the extension was built from other sources than the ones here: the source
  runs, the edit takes effect at once (slower, never wrong), and the group's build
  test (tests/unit/test_*_build.py) fails until ``make solver`` rebuilds it;
* otherwise the compiled build runs.

Running the source means the package's modules are read from their ``.py`` files
although extensions sit beside them (``_SourceFinder``).  This module imports nothing
of the engine and is never compiled itself: it decides which form the others take.
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

# written by setup.py when it compiles, compiled with the rest, never committed
STAMP_MODULE: Final = "build_stamp"
COMPILED: Final = "compiled"

# packages whose modules must come from source whatever is built (load_source_form)
_SOURCE_ONLY: set[str] = set()


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
        'sources it compiled (engine/loading.py compares it with the sources here)."""\n\n'
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


def choose_form(package: str, directory: Path, sources: Callable[[], str]) -> str:
    """Decide which form the package's modules (in ``directory``) take, before any of
    them loads, and make the import system follow it; returns the form (see
    ``decide_form``).  ``sources``: the hash of the compiled group's sources as they
    are now; the package's ``build_stamp`` holds the build's."""
    if package in _SOURCE_ONLY:
        form = "pure: loaded as source"
    else:
        pure = os.environ.get("GLINTWICK_PURE_PYTHON") == "1"
        try:
            current: str | None = sources()
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
        sys.modules.pop(name, None)  # read once: no module of the group imports it
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
