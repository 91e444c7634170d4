"""Golden screenshots of the browser table: fixed seeds at desktop (1280×800) and phone
(375×667) sizes compared with the committed images in tests/data/web-goldens/, a few
pixels' tolerance, so a layout regression fails the suite (what changes from run to run,
the game's id in the spectator link, is masked).

Re-record after a deliberate change of the page (then look at the images):
``GLINTWICK_RECORD_GOLDENS=1 .venv/bin/pytest tests/e2e/web/test_web_goldens.py``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from tests.e2e.web.support import NEEDS_CHROMIUM, ROOT, SIZES, Tab, start_game

pytestmark = NEEDS_CHROMIUM

GOLDENS = ROOT / "tests" / "data" / "web-goldens"
RECORD = bool(os.environ.get("GLINTWICK_RECORD_GOLDENS"))
#: a pixel differs when a channel differs by more than this (anti-aliasing noise)
CHANNEL_TOLERANCE = 48
#: the share of pixels that may differ
PIXEL_TOLERANCE = 0.004


def differing(golden: Image.Image, shot: Image.Image) -> float:
    """The share of pixels whose colour differs beyond the channel tolerance."""
    if golden.size != shot.size:
        return 1.0
    diff = ImageChops.difference(golden.convert("RGB"), shot.convert("RGB")).convert("L")
    changed = sum(diff.point(lambda v: 255 if v > CHANNEL_TOLERANCE else 0).histogram()[255:])
    return changed / (golden.size[0] * golden.size[1])


def compare(tab: Tab, name: str) -> None:
    tab.page.wait_for_timeout(400)  # (the last animation ends)
    png = tab.page.screenshot(mask=[tab.page.locator(".links")], animations="disabled")
    (tab.shots / f"{name}.png").write_bytes(png)
    golden = GOLDENS / f"{name}.png"
    if RECORD:
        golden.write_bytes(png)
        return
    assert golden.exists(), f"no golden {golden}: record it (see the module's docstring)"
    share = differing(Image.open(golden), Image.open(io.BytesIO(png)))
    assert share <= PIXEL_TOLERANCE, (
        f"{name}: {share:.2%} of the pixels differ from {golden} (see {tab.shots})"
    )


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_contract_table(tab: Tab, size: str) -> None:
    tab.page.set_viewport_size(SIZES[size])
    start_game(tab, "contract", 4, extra="&seed=676f6c64656e", mayi="ask")
    tab.page.wait_for_selector("#contract-progress")
    compare(tab, f"contract-{size}")
    tab.page.click("#draw-stock")
    tab.page.wait_for_selector(".hand [data-moves~=discard]")
    tab.page.click(".hand [data-moves~=discard] >> nth=0")
    compare(tab, f"contract-selected-{size}")


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_whiskertrail_table(tab: Tab, size: str) -> None:
    tab.page.set_viewport_size(SIZES[size])
    start_game(tab, "whiskertrail", 3, extra="&seed=676f6c64656e32")
    tab.page.wait_for_selector("#contract-progress")
    compare(tab, f"whiskertrail-{size}")


def test_goldens_fail_on_a_changed_layout() -> None:
    """The comparison itself: an image against itself passes, one with a panel moved fails."""
    golden = Image.new("RGB", (200, 100), "white")
    golden.paste((20, 90, 60), (10, 10, 110, 60))
    moved = Image.new("RGB", (200, 100), "white")
    moved.paste((20, 90, 60), (30, 10, 130, 60))
    assert differing(golden, golden) == 0
    assert differing(golden, moved) > PIXEL_TOLERANCE


def test_every_golden_is_tested() -> None:
    names = {f"{kind}-{size}" for kind in ("contract", "contract-selected") for size in SIZES}
    names |= {f"whiskertrail-{size}" for size in SIZES}
    on_disk = {p.stem for p in Path(GOLDENS).glob("*.png")}
    assert on_disk <= names, on_disk - names
