"""What the docs name, checked against the repository: paths and dotted names.

A newcomer follows a path the docs give (`engine/game/moves.py`, `services/usecases/`)
or a name (`engine.solver.SOLVER_FORM`) in one step only if it is there.
:func:`stale_references` reads every inline code span (text between single
backticks, fenced blocks aside) of the docs it is given and returns those that
name nothing:

* a **path**: a span of path characters only whose first part is one of the
  repository's top-level folders or files (``engine/…``, ``tests/…``, ``Makefile``);
  a ``::test`` (pytest's node id) or ``:Name`` (a bot spec) after a ``.py`` file is
  looked for in the file's text; a path with a glob (``native__mypyc*.so``, a build
  product) needs only its folder; a ``.proto`` file may be named as the API names it,
  below ``proto/`` (``glintwick/v1/errors.proto``); an elided one (``tests/...``) is
  skipped;
* a **dotted name** that starts with a top-level package or module of the
  repository (``clients.botpool.BotPool``, ``glintwick_cli.start_server``, with or
  without a call's parentheses): the longest prefix that imports, then attributes;
  else a full name of the API's or the store's protobuf (``glintwick.v1.GameService``);
  else a string the code says (``"glintwick.liveness"``, a health service's name).

The names a migration note gives as gone (:data:`GONE`) must resolve to nothing.

Spans with spaces (commands), and names not rooted in the repository (``Event.for_seat``,
``redis/`` beside the folder it is in), are left to the reader.

:func:`session_mentions` finds any line of the repository that cites a development
session (the word and its number): the docs speak of the project, history goes by date and commit.

    python -m tests.support.doc_references     # prints every stale reference and mention
"""

from __future__ import annotations

import importlib
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import descriptor_pool

ROOT = Path(__file__).parents[2]

#: the docs whose references are checked
DOCS = ("README.md", "BENCHMARKS.md", "docs/*.md", "clients/examples/*/README.md")
#: paths the docs give that a run writes (not in a fresh clone)
WRITTEN = frozenset({"bench/results/latest.json"})

#: what a path may start with: the repository's top-level folders and files
TOP_FOLDERS = (
    ".ci",
    "bench",
    "clients",
    "docs",
    "engine",
    "glintwick",
    "k8s",
    "loadtests",
    "proto",
    "services",
    "tests",
)
TOP_FILES = (
    "BENCHMARKS.md",
    "Dockerfile",
    "Makefile",
    "README.md",
    "buf.yaml",
    "glintwick_cli.py",
    "pyproject.toml",
    "setup.py",
)
#: what a dotted name may start with: the repository's importable top level
TOP_MODULES = (
    "bench",
    "clients",
    "engine",
    "glintwick",
    "glintwick_cli",
    "loadtests",
    "services",
    "tests",
)

#: what docs/BOTS.md's migration note names as removed: each must stay gone
GONE = frozenset({"glintwick.convert.view_from_pb", "clients.bots.base.meld_from_json"})

_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_PATH = re.compile(r"[A-Za-z0-9_./*-]+(?:(?:::|:)[A-Za-z_][A-Za-z0-9_]*)?")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*\))?")


@dataclass(frozen=True)
class Reference:
    """A code span of a doc that names something of the repository."""

    doc: str  # the doc's path, relative to the root
    line: int
    text: str  # the span's text
    why: str = ""  # what is wrong with it (empty: nothing found yet)

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: `{self.text}` {self.why}".rstrip()


def code_spans(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every inline code span, fenced blocks aside."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            for match in _SPAN.finditer(line):
                yield number, match.group(1).strip()


def is_path(span: str) -> bool:
    if "..." in span or "…" in span or not _PATH.fullmatch(span):
        return False
    first = span.split("/", 1)[0].split(":", 1)[0]
    return first in TOP_FILES if "/" not in span else first in TOP_FOLDERS


def is_dotted_name(span: str) -> bool:
    return bool(_DOTTED.fullmatch(span)) and span.split(".", 1)[0] in TOP_MODULES


def path_problem(root: Path, span: str) -> str:
    """Why ``span`` (a path) names nothing under ``root`` ("": it names something)."""
    path, _, name = span.partition("::") if "::" in span else span.partition(":")
    if path in WRITTEN:
        return ""
    if "*" in path:
        folder = root / path.rsplit("/", 1)[0] if "/" in path else root
        return "" if folder.is_dir() else "names no folder"
    target = root / path.rstrip("/")
    if path.endswith(".proto") and not target.exists():
        target = root / "proto" / path  # (the name an import or reflection gives it)
    if not target.exists():
        return "names nothing"
    if path.endswith("/") and not target.is_dir():
        return "is no folder"
    if name and not re.search(rf"\b(def|class)\s+{re.escape(name)}\b", target.read_text()):
        return f"has no {name}"
    return ""


def name_problem(span: str, root: Path = ROOT) -> str:
    """Why ``span`` (a dotted name) resolves to nothing ("": it resolves)."""
    name = span.split("(", 1)[0]
    problem = _python_problem(name)
    if name in GONE:
        return "" if problem else "is there, yet the docs say it is gone"
    if problem and (_is_proto_name(name) or _is_said_in_code(root, name)):
        return ""
    return problem


def _python_problem(name: str) -> str:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return f"has no {attribute}"
            found = getattr(found, attribute)
        return ""
    return "imports nothing"


def _is_proto_name(name: str) -> bool:
    # (importing the generated modules registers their files in the default pool)
    importlib.import_module("glintwick.v1.game_pb2")
    importlib.import_module("glintwick.v1.errors_pb2")
    importlib.import_module("glintwick.storage.v1.storage_pb2")
    try:
        descriptor_pool.Default().FindFileContainingSymbol(name)
    except KeyError:
        return False
    return True


def _is_said_in_code(root: Path, name: str) -> bool:
    quoted = (f'"{name}"', f"'{name}'")
    for folder in TOP_MODULES:
        if folder == "tests":
            continue  # (what the code says, not what its tests say)
        for source in [root / f"{folder}.py", *(root / folder).rglob("*.py")]:
            if source.is_file() and any(q in source.read_text() for q in quoted):
                return True
    return False


def references(root: Path, docs: Iterable[Path]) -> Iterator[Reference]:
    """Every path and dotted name the docs name, with what is wrong with each."""
    for doc in docs:
        relative = doc.relative_to(root).as_posix() if doc.is_relative_to(root) else str(doc)
        for line, span in code_spans(doc.read_text()):
            if is_path(span):
                yield Reference(relative, line, span, path_problem(root, span))
            elif is_dotted_name(span):
                yield Reference(relative, line, span, name_problem(span, root))


def docs_of(root: Path) -> list[Path]:
    return sorted(doc for pattern in DOCS for doc in root.glob(pattern))


def stale_references(root: Path = ROOT, docs: Iterable[Path] | None = None) -> list[Reference]:
    """The references of ``docs`` (default: :data:`DOCS`) that name nothing."""
    return [ref for ref in references(root, docs or docs_of(root)) if ref.why]


#: how the project's history was once cited (the word "session" and a number after it):
#: the docs and comments speak of the project, not of how it was developed (a date and a commit do)
SESSION = re.compile(r"\bsessions? ?(?:#|no\.? ?)?(?:\d+|N)\b", re.IGNORECASE)


def session_mentions(root: Path = ROOT, paths: Iterable[Path] | None = None) -> list[str]:
    """``path:line: text`` of every line that cites a development session (default: every
    text file git tracks)."""
    if paths is None:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split("\0")
        # (this checker and its test write such citations down, to find them)
        own = {"tests/support/doc_references.py", "tests/integration/test_docs_paths.py"}
        paths = [root / name for name in listed if name and name not in own]
    found = []
    for path in paths:
        try:
            text = path.read_text()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue  # (binary files, a submodule, a file deleted but not yet staged)
        for number, line in enumerate(text.splitlines(), start=1):
            if SESSION.search(line):
                found.append(f"{path}:{number}: {line.strip()}")
    return found


if __name__ == "__main__":
    for stale in stale_references():
        print(stale)
    for mention in session_mentions():
        print(mention)
