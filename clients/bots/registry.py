"""Finding a bot by its spec: a registered name, ``module:Class`` or ``path/to/file.py:Class``.

Bots are plugins.  A distribution registers its bots in the ``glintwick.bots``
entry-point group (name = ``module:Class``), as this package does for the built-in
ones (pyproject.toml), so ``glintwick tournament --bots mine,greedy`` finds them once
installed.  A bot nobody registered is named by where it lives: ``package.module:Class``
(importable from ``sys.path``, the working directory included) or ``some/file.py:Class``.

A spec says where a bot is found, not who it is: results name a bot by its class's
``name`` (:func:`bot_name`), so ``greedy`` and ``clients.bots.greedy:GreedyBot`` are one
bot, ``greedy``.

Every failure (unknown name, import error, missing class, not a :class:`Bot`, two bots
of one name) is a :class:`BotSpecError` with a one-line message, which the ``glintwick``
command prints as such.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from clients.bots.base import Bot

__all__ = [
    "BOTS",
    "ENTRY_POINT_GROUP",
    "BotFactory",
    "BotSpecError",
    "bot_name",
    "bot_names",
    "known_bots",
    "make_bot",
    "resolve",
    "resolve_specs",
]

ENTRY_POINT_GROUP = "glintwick.bots"

BotFactory = Callable[[int], Bot]
"""Makes a fresh bot from its seed (a :class:`Bot` subclass is one)."""


class BotSpecError(ValueError):
    """A bot spec that names no usable bot; the message is one line."""


@functools.cache
def _registered() -> dict[str, EntryPoint]:
    # read once: what is installed does not change under a running process
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_bots() -> list[str]:
    """The names registered in the ``glintwick.bots`` entry-point group, sorted."""
    return sorted(_registered())


@functools.cache
def resolve(spec: str) -> type[Bot]:
    """The bot class ``spec`` names; :class:`BotSpecError` when there is none."""
    spec = spec.strip()
    if ":" not in spec:
        entry = _registered().get(spec)
        if entry is None:
            raise BotSpecError(
                f"unknown bot {spec!r}; known: {', '.join(known_bots())}"
                " (or name one as module:Class or path/to/file.py:Class)"
            )
        try:
            found = entry.load()
        except Exception as exc:
            raise BotSpecError(f"bot {spec!r} ({entry.value}) does not load: {_why(exc)}") from exc
        return _checked(spec, found)
    where, _, name = spec.rpartition(":")
    if not where or not name.isidentifier():
        raise BotSpecError(f"bot {spec!r}: expected module:Class or path/to/file.py:Class")
    try:
        module = _load_file(where) if where.endswith(".py") else importlib.import_module(where)
    except BotSpecError:
        raise
    except Exception as exc:
        raise BotSpecError(f"bot {spec!r}: cannot import {where}: {_why(exc)}") from exc
    found = getattr(module, name, None)
    if found is None:
        raise BotSpecError(f"bot {spec!r}: {where} has no {name}")
    return _checked(spec, found)


def make_bot(spec: str, seed: int = 0) -> Bot:
    """A fresh bot of the kind ``spec`` names, seeded with ``seed``."""
    return resolve(spec)(seed)


def bot_name(spec: str) -> str:
    """The name results give the bot ``spec`` loads: its class's ``name`` (the class's
    own name if it has none), whichever spec loaded it."""
    found = resolve(spec)
    return found.name or found.__name__


def bot_names(specs: Iterable[str]) -> dict[str, str]:
    """Each spec's :func:`bot_name`; :class:`BotSpecError` when two different classes
    go by one name (their results would be counted as one bot's).  A class is the same
    whether its file was loaded by path or imported as a module."""
    names: dict[str, str] = {}
    origins: dict[str, tuple[str, tuple[str, str]]] = {}
    for spec in specs:
        name = names[spec] = bot_name(spec)
        origin = _origin(resolve(spec))
        first, seen = origins.setdefault(name, (spec, origin))
        if seen != origin:
            raise BotSpecError(
                f"bots {first!r} and {spec!r} are both named {name!r}: give each class"
                " a name of its own"
            )
    return names


def _origin(found: type[Bot]) -> tuple[str, str]:
    """Where a class is defined: its module's file (resolved) and its qualified name
    (a file loaded by path and imported as a module gives two class objects of one
    class)."""
    module = sys.modules.get(found.__module__)
    file = getattr(module, "__file__", None)
    where = str(Path(file).resolve()) if file else found.__module__
    return where, found.__qualname__


def _checked(spec: str, found: object) -> type[Bot]:
    if not (isinstance(found, type) and issubclass(found, Bot)):
        raise BotSpecError(f"bot {spec!r}: {found!r} is not a Bot subclass")
    if getattr(found, "__abstractmethods__", None):
        missing = ", ".join(sorted(found.__abstractmethods__))
        raise BotSpecError(f"bot {spec!r}: {found.__name__} does not implement {missing}")
    return found


def _load_file(where: str) -> object:
    path = Path(where).expanduser().resolve()
    if not path.is_file():
        raise BotSpecError(f"bot file {where} does not exist")
    # a name of its own per file, so that two files both called bot.py do not collide
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    module_name = f"glintwick_bot_{path.stem}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise BotSpecError(f"bot file {where} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


class _Registered(Mapping[str, type[Bot]]):
    """The registered bots by name, loaded on access (``clients.bots.BOTS``)."""

    def __getitem__(self, name: str) -> type[Bot]:
        if name not in _registered():
            raise KeyError(name)
        return resolve(name)

    def __iter__(self) -> Iterator[str]:
        return iter(known_bots())

    def __len__(self) -> int:
        return len(_registered())


BOTS: Mapping[str, type[Bot]] = _Registered()


def resolve_specs(text: str) -> list[str]:
    """The specs of a comma-separated list (``--bots``, ``--house-bots``), each checked
    to name a usable bot (else :class:`BotSpecError`), in order, blanks dropped."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    for spec in specs:
        resolve(spec)
    return specs
