"""Screens of the browser table in its tests: axe-core (the vendored
``tests/data/axe/axe.min.js``, see its README.md) evaluated in the page, its serious and
critical violations; a game played to its first round summary."""

from __future__ import annotations

from typing import Any

from tests.e2e.web.support import ROOT, Tab, draw_or_discard

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


def play_to_the_summary(tab: Tab) -> None:
    """Draw, discard and pass May I? until a round's summary shows: nothing more (no
    contract laid, no lay-off), the path the seeded summary games were written for."""
    for _ in range(1500):
        if tab.visible("#round-end"):
            return
        if tab.visible("#pass-claim"):
            tab.click("#pass-claim")
        else:
            draw_or_discard(tab)
    raise AssertionError("no round summary")
