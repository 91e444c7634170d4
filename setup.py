"""Compiles the contract solver with mypyc, when it can.

The solver (``engine/solver.py``) is plain typed Python and stays the one
source: mypyc turns the same file into a C extension that runs it several times
faster, and Python imports the extension in place of the source.  The
extension is optional: with no C compiler (or ``GLINTWICK_PURE_PYTHON=1``) the
install goes on and the engine runs the source as it is, with identical
results.  Everything else about the package lives in pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED_MODULES = ["engine/solver.py"]


def extensions() -> list[object]:
    if os.environ.get("GLINTWICK_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build environment without mypy: run the source
        return []
    modules = mypycify(COMPILED_MODULES, opt_level="3")
    for module in modules:
        module.optional = True  # no compiler: a warning, and the pure-Python engine
    return list(modules)


setup(ext_modules=extensions())
