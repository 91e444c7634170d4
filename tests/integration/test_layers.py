"""The layers' imports point inward (docs/ARCHITECTURE.md): every import statement of
every module, function-local ones too, read from the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

# each layer, and the layers it must never import
FORBIDDEN = {
    "engine": {"glintwick", "services", "clients"},
    "glintwick": {"services", "clients"},
    "services": {"clients"},
    "clients": {"services"},
}


def imported_packages(path: Path) -> set[str]:
    """The top-level packages a module imports (relative imports stay in its layer)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_no_outer_layer(layer: str) -> None:
    modules = sorted((ROOT / layer).rglob("*.py"))
    assert modules, f"no modules in {layer}/"
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[layer])
        for path in modules
    }
    assert {path: names for path, names in wrong.items() if names} == {}
