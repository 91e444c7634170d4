"""The client modules mypyc compiles: the training environment's hot path, as one group.

Like the solver and the rules engine (engine/loading.py), these modules are plain typed Python and
stay the one source: setup.py compiles them, as the group ``clients.native``, into C
extensions beside their sources, which Python then imports instead.  The group spans
two packages; each holds a ``build_stamp`` compiled with the group (the hash of the
group's sources), and each package's ``__init__`` asks :func:`choose_form` before any
of its modules loads, so the group runs compiled, or from source, as a whole:

* ``GLINTWICK_PURE_PYTHON=1``, no build, or a build of other sources than the ones
  here (an edited module): every module of the group runs from its source (slower,
  never different: tests/unit/test_clients_build.py);
* otherwise the compiled build runs.

Nothing here imports the packages it names: setup.py reads this file on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

# the group's modules, dotted, in the order they build on each other
COMPILED_MODULES: Final = (
    "clients.bots.tracking",
    "clients.training.actions",
    "clients.training.observation",
)
# the packages holding them: each gets a build_stamp module compiled with the group
PACKAGES: Final = ("clients.bots", "clients.training")
GROUP: Final = "clients.native"
ROOT: Final = Path(__file__).resolve().parents[1]


def source_hash(root: Path = ROOT) -> str:
    """The hash of the group's sources as they are now."""
    from engine.loading import group_hash

    return group_hash(root, COMPILED_MODULES)


def choose_form(package: str) -> str:
    """The form ``package``'s modules take ("compiled", or "pure: " and why): asked by
    the package's ``__init__`` before any of its modules loads."""
    from engine.loading import choose_form as choose

    return choose(package, ROOT / package.replace(".", "/"), sources=source_hash)
