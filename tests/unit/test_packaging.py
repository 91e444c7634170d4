"""Honest packaging: the floors are what the generated code checks, and serving needs
none of the tournament side's packages (the ``[tournament]`` extra)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _floor(requirements: list[str], name: str) -> tuple[int, ...]:
    for req in requirements:
        found = re.fullmatch(rf"{re.escape(name)}(?:\[[^]]*\])?>=([\d.]+).*", req)
        if found:
            return _version(found.group(1))
    raise AssertionError(f"no floor for {name} in {requirements}")


def _generated() -> list[Path]:
    return [
        p for p in ROOT.glob("**/*_pb2*.py") if ".venv" not in p.parts and "build" not in p.parts
    ]


def test_the_dependency_floors_are_what_the_generated_code_needs() -> None:
    runtime = PROJECT["dependencies"]
    grpc_needs: set[tuple[int, ...]] = set()
    protobuf_needs: set[tuple[int, ...]] = set()
    for path in _generated():
        text = path.read_text()
        grpc_needs.update(
            _version(v) for v in re.findall(r"GRPC_GENERATED_VERSION = '([\d.]+)'", text)
        )
        guard = re.search(
            r"ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,"
            r"\s*(\d+),\s*(\d+),\s*(\d+),",
            text,
        )
        if guard:
            protobuf_needs.add(tuple(int(x) for x in guard.groups()))
    assert grpc_needs and protobuf_needs
    assert _floor(runtime, "grpcio") == max(grpc_needs)
    assert _floor(runtime, "protobuf") == max(protobuf_needs)
    for companion in ("grpcio-health-checking", "grpcio-reflection", "grpcio-status"):
        assert _floor(runtime, companion) >= max(grpc_needs)


def test_build_tools_and_the_tournament_side_are_extras() -> None:
    runtime = " ".join(PROJECT["dependencies"])
    extras = PROJECT["optional-dependencies"]
    for tool in ("grpcio-tools", "matplotlib", "tqdm", "openskill"):
        assert tool not in runtime
    assert {"matplotlib", "tqdm", "openskill"} <= {
        re.split(r"[<>=]", r)[0] for r in extras["tournament"]
    }
    assert "glintwick[tournament]" in extras["dev"]
    assert any(r.startswith("grpcio-tools") for r in extras["dev"])


BLOCKED_SERVER = textwrap.dedent(
    """
    import asyncio, importlib.abc, sys

    BLOCKED = {"matplotlib", "tqdm", "openskill", "grpc_tools"}

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ImportError(f"{name} is not installed with the server")
            return None

    sys.meta_path.insert(0, Blocker())

    import glintwick_cli
    from clients.bots import known_bots, make_bot
    from services.config import ServerOptions
    from services.server import start

    glintwick_cli.build_parser()
    for name in known_bots():
        make_bot(name)

    async def main():
        running = await start(
            ServerOptions(grpc_address="127.0.0.1:0", http_address="127.0.0.1:0", store="memory")
        )
        await running.stop(grace=0.1)

    asyncio.run(main())
    loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
    assert not loaded, loaded
    print("served without", sorted(BLOCKED))
    """
)


def test_the_server_starts_without_the_tournament_packages() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_SERVER],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "served without" in done.stdout
