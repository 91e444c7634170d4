"""Which form of the solver runs: its compiled build, or its Python source.

setup.py compiles the solver's modules (``COMPILED_MODULES``) with mypyc into C
extensions beside their sources, with a ``build_stamp`` holding the hash of the sources
it compiled; the package's ``__init__`` asks ``choose_form`` before any solver module
loads, and the machinery that decides (and makes the import system follow the decision)
is engine/loading.py's, shared with the other compiled groups.  This module is never
compiled itself.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Final

from engine.loading import (
    _SOURCE_ONLY,
    COMPILED,
    STAMP_MODULE,
    _SourceFinder,
    decide_form,
    group_hash,
    stamp_source,
)
from engine.loading import choose_form as _choose_form

__all__ = [
    "COMPILED",
    "COMPILED_MODULES",
    "DIRECTORY",
    "STAMP_MODULE",
    "choose_form",
    "decide_form",
    "group_hash",
    "load_source_form",
    "source_hash",
    "stamp_source",
    "unload_source_form",
]

# The modules mypyc compiles, as one group (setup.py), in the order they build on
# each other; their sources make the hash a build records.
COMPILED_MODULES: Final = (
    "values",
    "planes",
    "card_ids",
    "tables",
    "skeletons",
    "run_candidates",
    "best_so_far",
    "best_search",
    "meld_building",
    "cost_leaves",
    "cost_search",
    "answers",
)
DIRECTORY: Final = Path(__file__).resolve().parent


def source_hash(directory: Path = DIRECTORY) -> str:
    """SHA-256 over the compiled modules' sources, names included."""
    return group_hash(directory, COMPILED_MODULES)


def choose_form(
    package: str, directory: Path = DIRECTORY, sources: Callable[[], str] | None = None
) -> str:
    """engine/loading.py's ``choose_form``; ``sources`` defaults to the hash of the
    solver's sources in ``directory``."""
    return _choose_form(package, directory, sources or (lambda: source_hash(directory)))


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
