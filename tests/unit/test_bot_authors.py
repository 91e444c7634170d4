"""What a bot author outside the repository relies on: docs/BOTS.md's example type-checks
there with ``mypy --strict`` against the installed package (the packages ship
``py.typed``, and the install is one a type checker can follow), and a bot is one bot in
the results whichever spec loaded it."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from clients.bots import BotSpecError, bot_name, bot_names, resolve
from clients.tournament.tournament import Config, run
from engine.rulesets import WHISKERTRAIL

ROOT = Path(__file__).resolve().parents[2]
BOTS_MD = ROOT / "docs" / "BOTS.md"
EXAMPLE = ROOT / "docs" / "examples" / "lowball_bot.py"
SHORT = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:1])
#: the packages a bot imports (its base class, the engine's types, the API's messages)
TYPED_PACKAGES = ("clients", "engine", "glintwick")


def documented_example() -> str:
    """The first Python block of BOTS.md's section on a bot in a file of its own."""
    text = BOTS_MD.read_text()
    section = text[text.index("\n## A new bot: a class in a file of your own\n") :]
    section = section[: section.index("\n## ", 1)]
    block = re.search(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert block, "BOTS.md's section has no python block"
    return block.group(1)


def mypy_strict(folder: Path, *files: str) -> subprocess.CompletedProcess[str]:
    """The venv's mypy --strict on ``files``, run in ``folder`` as a bot author would:
    no configuration of this repository, no path of it in the environment (its cache
    in ``folder``: a fresh one per test)."""
    mypy = Path(sys.executable).with_name("mypy")
    assert mypy.is_file(), mypy
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run(
        [str(mypy), "--strict", *files],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_documented_bot_passes_mypy_strict_in_a_folder_outside_the_repository(
    tmp_path: Path,
) -> None:
    example = documented_example()
    assert example == EXAMPLE.read_text()  # the file the other tests play is the doc's
    assert not tmp_path.resolve().is_relative_to(ROOT)
    (tmp_path / "lowball_bot.py").write_text(example)
    # a planted mistake only the package's own types reveal: greedy_action takes the
    # situation, not the hand (if the imports were unknown, mypy would take it)
    planted = example.replace(
        "return greedy_action(situation, legal)", "return greedy_action(situation.hand, legal)"
    )
    assert planted != example
    (tmp_path / "planted.py").write_text(planted)
    checked = mypy_strict(tmp_path, "lowball_bot.py", "planted.py")
    output = checked.stdout + checked.stderr
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert errors and all(line.startswith("planted.py:") for line in errors), output
    assert any('"greedy_action"' in line and "Situation" in line for line in errors), output
    alone = mypy_strict(tmp_path, "lowball_bot.py")
    assert alone.returncode == 0, alone.stdout + alone.stderr


def test_the_wheel_ships_py_typed_for_every_package_a_bot_imports(tmp_path: Path) -> None:
    """setuptools packages the markers (package-data): a wheel built from the sources
    (without the compiled solver, which changes nothing here) holds each one."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "glintwick_cli.py"):
        shutil.copy(ROOT / name, source / name)
    skipped = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "build")
    for package in (*TYPED_PACKAGES, "services"):
        assert (ROOT / package / "py.typed").is_file() or package == "services"
        shutil.copytree(ROOT / package, source / package, ignore=skipped)
    built = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"),
            *("--no-build-isolation", "--wheel-dir", str(tmp_path / "dist"), str(source)),
        ],
        env={**os.environ, "GLINTWICK_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("glintwick-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in TYPED_PACKAGES:
        assert f"{package}/py.typed" in names, package
    assert "glintwick/v1/game_pb2.pyi" in names  # the messages' types with them


# --------------------------------------------------------------------------- one bot, one name


def test_a_bot_is_named_by_its_class_whichever_spec_loaded_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bot_name("greedy") == bot_name("clients.bots.greedy:GreedyBot") == "greedy"
    module = f"lowball_{tmp_path.name}"  # resolve() caches by spec: a name per test
    shutil.copy(EXAMPLE, tmp_path / f"{module}.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    by_module, by_file = f"{module}:LowballBot", f"{tmp_path / f'{module}.py'}:LowballBot"
    assert resolve(by_module) is not resolve(by_file)  # two loads of one class...
    assert bot_names([by_module, by_file, "greedy"]) == {  # ...which is one bot
        by_module: "lowball",
        by_file: "lowball",
        "greedy": "greedy",
    }
    nameless = tmp_path / "nameless.py"
    nameless.write_text(
        "from clients.bots.random_bot import RandomBot\n\n\n"
        "class Nameless(RandomBot):\n    name = ''\n"
    )
    assert bot_name(f"{nameless}:Nameless") == "Nameless"  # no name: the class's own


async def test_results_count_one_class_as_one_bot_whichever_spec_loaded_it() -> None:
    """The registered name and ``module:Class`` of one class: the same games, and the
    results name the bot alike (not as two bots)."""
    by_name, _ = await run(Config(SHORT, ["greedy", "random"], deals=2, seed=3))
    by_module, results = await run(
        Config(SHORT, ["clients.bots.greedy:GreedyBot", "random"], deals=2, seed=3)
    )
    assert by_module["bots"] == ["greedy", "random"]
    assert {row["bot"] for row in by_module["stats"]} == {"greedy", "random"}
    assert by_module["stats"] == by_name["stats"]
    assert by_module["pairs"] == by_name["pairs"] and by_module["pairs"]
    assert all(set(r.spec.seats) == {"greedy", "random"} for r in results)
    # both specs in one tournament name one bot (as "greedy,greedy" would)
    both, _ = await run(
        Config(SHORT, ["greedy", "clients.bots.greedy:GreedyBot", "random"], deals=1, seed=3)
    )
    assert {row["bot"] for row in both["stats"]} == {"greedy", "random"}


async def test_two_classes_of_one_name_are_refused_before_any_game(tmp_path: Path) -> None:
    impostor = tmp_path / "impostor.py"
    impostor.write_text(
        "from clients.bots.random_bot import RandomBot\n\n\n"
        "class Impostor(RandomBot):\n    name = 'greedy'\n"
    )
    spec = f"{impostor}:Impostor"
    with pytest.raises(BotSpecError, match="both named 'greedy'"):
        bot_names(["greedy", spec])
    with pytest.raises(BotSpecError, match="both named 'greedy'"):
        await run(Config(SHORT, ["greedy", spec], deals=1, seed=3))
