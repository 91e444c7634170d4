"""The house keeps its shape (docs/ARCHITECTURE.md): no import cycle among the
repository's modules, no hand-written Python file over 800 lines.  Each checker
(tests/support/structure.py) is also run on a planted tree, where it must find what
was planted."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.structure import (
    MAX_LINES,
    ROOT,
    import_cycles,
    import_graph,
    oversized_files,
)


def plant(root: Path, files: dict[str, str]) -> Path:
    """``files`` (relative path → source) written under ``root``."""
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


# --------------------------------------------------------------------------- cycles


def test_the_repository_s_modules_import_no_cycle() -> None:
    assert import_cycles(ROOT) == []


def test_the_import_graph_reads_the_repository() -> None:
    """(The cycle check above finds nothing if the graph is empty or misread.)"""
    graph = import_graph(ROOT)
    assert graph.has_edge("engine.game.state", "engine.game.transitions")
    assert graph.has_edge("glintwick_cli", "engine.solver")  # (a function-local import)
    assert graph.has_edge("services.usecases.play", "services.usecases.streams")  # (relative)


def test_a_planted_cycle_is_found_through_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle of four modules closed by four kinds of import: absolute, relative,
    ``from package import submodule`` and function-local; a module importing itself
    is a cycle too, and a module apart from them is in none."""
    plant(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/a.py": "from engine.b import thing\n",
            "engine/b.py": "from . import c\nthing = 1\n",
            "engine/c.py": "from engine import d\n",
            "engine/d.py": "def late() -> None:\n    import engine.a\n",
            "engine/alone.py": "import engine.a\n",
            "services/__init__.py": "",
            "services/itself.py": "from services.itself import x\nx = 1\n",
        },
    )
    assert import_cycles(tmp_path) == [
        ["engine.a", "engine.b", "engine.c", "engine.d"],
        ["services.itself"],
    ]


def test_an_import_under_type_checking_closes_no_cycle(tmp_path: Path) -> None:
    """An import under ``if TYPE_CHECKING:`` never runs, and is no edge; one in its
    ``else`` runs, and is."""
    plant(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/a.py": "import engine.b\n",
            "engine/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import engine.a\n"
            ),
            "services/__init__.py": "",
            "services/a.py": "import services.b\n",
            "services/b.py": (
                "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    import services.a\n"
            ),
        },
    )
    assert import_cycles(tmp_path) == [["services.a", "services.b"]]


def test_a_package_s_init_is_a_module_of_the_graph(tmp_path: Path) -> None:
    """``from package import name`` (no submodule) imports the package's ``__init__``,
    which may close a cycle; a submodule named through its package does not."""
    plant(
        tmp_path,
        {
            "engine/__init__.py": "from engine.rules import RULE\n",
            "engine/rules.py": "from engine import HELPER\nRULE = 1\n",
            "services/__init__.py": "",
            "services/store/__init__.py": "from services.store.memory import Store\n",
            "services/store/memory.py": "from services.store import base\nStore = 1\n",
            "services/store/base.py": "",
        },
    )
    assert import_cycles(tmp_path) == [["engine", "engine.rules"]]


# --------------------------------------------------------------------------- sizes


def test_no_hand_written_python_file_is_over_the_limit() -> None:
    assert oversized_files(ROOT) == {}


def test_the_size_check_reads_the_repository() -> None:
    """(The size check above passes if it reads no file: it reads every tracked one
    below the limit, and a generated one above it is set aside.)"""
    assert oversized_files(ROOT, limit=0).keys() >= {"engine/game/state.py", "glintwick_cli.py"}
    assert "glintwick/v1/game_pb2.pyi" not in oversized_files(ROOT, limit=0)


def test_a_planted_file_over_the_limit_is_found(tmp_path: Path) -> None:
    """An 801-line file git tracks is reported, with its length; one of 800 lines,
    an untracked one and a generated protobuf module are not."""
    plant(
        tmp_path,
        {
            "services/big.py": "x = 1\n" * (MAX_LINES + 1),
            "services/just.py": "x = 1\n" * MAX_LINES,
            "services/untracked.py": "x = 1\n" * (MAX_LINES + 1),
            "glintwick/v1/game_pb2.py": "x = 1\n" * (MAX_LINES + 1),
            "glintwick/v1/game_pb2.pyi": "x: int\n" * (MAX_LINES + 1),
            "glintwick/v1/game_pb2_grpc.py": "x = 1\n" * (MAX_LINES + 1),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "services", "glintwick"], cwd=tmp_path, check=True)
    subprocess.run(
        ["git", "rm", "-q", "--cached", "services/untracked.py"], cwd=tmp_path, check=True
    )
    assert oversized_files(tmp_path) == {"services/big.py": MAX_LINES + 1}
