"""engine/solver.py run by the interpreter, even where its compiled form is installed.

Python imports the mypyc extension (setup.py) in place of the source; the build
test and the solver bench load the source itself, under another module name, to
compare the two forms.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SOURCE = Path(__file__).resolve().parents[1] / "engine" / "solver.py"


def load_solver_source(name: str = "engine._solver_source") -> ModuleType:
    """The source as a fresh module, registered as ``name`` in sys.modules (the
    dataclasses look their module up while it executes)."""
    spec = importlib.util.spec_from_file_location(name, SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
