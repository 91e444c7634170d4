"""Screens of the browser table in its tests: axe-core (the vendored
``tests/data/axe/axe.min.js``, see its README.md) evaluated in the page, its serious and
critical violations; a game played to its first round summary."""

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


def play_to_the_summary(tab: Tab) -> None:
    """Draw, discard and pass May I? until a round's summary shows (support.play_through's
    ``until`` may miss it: it clicks "Next round" when the summary comes between its
    checks)."""
    for _ in range(1500):
        if tab.visible("#round-end"):
            return
        if tab.visible("#pass-claim"):
            tab.click("#pass-claim")
        elif tab.visible("#draw-stock"):
            tab.click("#draw-stock")
        elif tab.visible(".hand [data-moves~=discard]"):
            if tab.click(".hand [data-moves~=discard] >> nth=-1"):
                tab.click("#discard")
        else:
            tab.page.wait_for_timeout(30)
    raise AssertionError("no round summary")
