"""The rules engine's modules mypyc compiles, as one group (the third, beside the
solver's and clients/compiled.py's).

Like the solver, these modules are plain typed Python and stay the one source:
setup.py compiles them, as the group ``engine.game_native``, into C extensions beside their
sources, which Python then imports instead.  The group spans two packages, ``engine``
and ``engine.game``; each holds a ``build_stamp`` compiled with the group (the hash of
the group's sources), and each package's ``__init__`` asks :func:`choose_form` before
any of its modules loads, so the group runs compiled, or from source, as a whole
(engine/loading.py): ``GLINTWICK_PURE_PYTHON=1``, no build, or a build of other
sources than the ones here run every module of the group from its source (slower,
never different: tests/unit/test_engine_build.py).

Left out, and why (they run from source in both forms):

* ``engine.rulesets`` and ``engine.actions``: their classes are built from anyone's
  values and refused by the engine's own checks with typed errors
  (``InvalidActionError``); a compiled class checks each field's type when it is
  set, so a wrong one would raise a bare TypeError first.  (Nor can mypyc keep a
  dataclass's ``ClassVar``, which the actions' ``KIND`` is.)
* ``engine.loading`` and this module: they decide the form, before it is known.

Nothing here imports the modules it names: setup.py reads this file on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

# the group's modules, dotted, in the order they build on each other
COMPILED_MODULES: Final = (
    "engine.errors",
    "engine.cards",
    "engine.melds",
    "engine.events",
    "engine.shuffle",
    "engine.game.phase",
    "engine.game.hands",
    "engine.game.claims",
    "engine.game.dealing",
    "engine.game.moves",
    "engine.game.transitions",
    "engine.game.codec",
    "engine.game.state",
    "engine.views",
)
# the packages holding them: each gets a build_stamp module compiled with the group
PACKAGES: Final = ("engine", "engine.game")
GROUP: Final = "engine.game_native"  # its shared library sits in engine/, beside the stamp
ROOT: Final = Path(__file__).resolve().parents[1]


def source_hash(root: Path = ROOT) -> str:
    """The hash of the group's sources as they are now."""
    from engine.loading import group_hash

    return group_hash(root, COMPILED_MODULES)


def choose_form(package: str) -> str:
    """The form ``package``'s modules take ("compiled", or "pure: " and why): asked by
    the package's ``__init__`` before any of its modules loads."""
    from engine.loading import choose_form as choose

    return choose(package, ROOT / package.replace(".", "/"), source_hash)
