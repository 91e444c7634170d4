"""axe-core in the browser table's tests: the vendored ``tests/data/axe/axe.min.js``
(see its README.md) evaluated in the page, its serious and critical violations."""

from __future__ import annotations

from typing import Any

from tests.e2e.web.support import ROOT, Tab

AXE = ROOT / "tests" / "data" / "axe" / "axe.min.js"


def axe_violations(tab: Tab) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now (the script
    is evaluated, not loaded: the page's policy allows only its own scripts)."""
    tab.page.evaluate(AXE.read_text())
    result: dict[str, Any] = tab.page.evaluate("axe.run(document)")
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["html"][:120] for n in v["nodes"][:3]]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
