"""docs/API.md's default rate limits and quotas, written from the constants the server
runs with (:data:`services.config.DEFAULT_RATES`, :data:`~services.config.DEFAULT_ACT_RATE`,
:class:`~services.config.Quotas`), so the document cannot drift from ``serve --help``.

The tables' rows are the document's (a class's calls, a quota's notes are prose); only
the numbers are written here.  ``python -m services.limits_doc`` (``make docs-limits``)
rewrites docs/API.md; ``tests/integration/test_limits_doc.py`` fails while it differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from services.config import DEFAULT_ACT_RATE, DEFAULT_RATES, QUOTA_NAMES, Quotas

API_MD = Path(__file__).resolve().parents[1] / "docs" / "API.md"
RATE_HEADER = "| class | calls | default rate/s | default burst |"
QUOTA_HEADER = "| quota | default | reason | notes |"


def rate_cells(call_class: str) -> tuple[str, str]:
    """The default rate and burst cells of a call class's row."""
    if call_class == "act":
        rate = DEFAULT_ACT_RATE
        return f"{rate.per_second:g} (`--rate`)", f"{rate.burst} (`--burst`)"
    rate = DEFAULT_RATES[call_class]
    return f"{rate.per_second:g}", str(rate.burst)


def _rows(lines: list[str], header: str) -> range:
    """The indexes of the table's rows under ``header`` (its separator line aside)."""
    start = lines.index(header) + 2
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return range(start, end)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _line(cells: list[str]) -> str:
    return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


def rendered(text: str) -> str:
    """``text`` (docs/API.md) with the tables' numbers the server's defaults;
    ValueError if a table lacks a class or a quota, or names another."""
    lines = text.split("\n")
    classes = set()
    for index in _rows(lines, RATE_HEADER):
        cells = _cells(lines[index])
        call_class = cells[0]
        if call_class != "act" and call_class not in DEFAULT_RATES:
            raise ValueError(f"the rate table names no call class: {call_class!r}")
        cells[2], cells[3] = rate_cells(call_class)
        lines[index] = _line(cells)
        classes.add(call_class)
    if classes != {*DEFAULT_RATES, "act"}:
        raise ValueError(f"the rate table's classes {sorted(classes)} are not the server's")
    quotas = set()
    for index in _rows(lines, QUOTA_HEADER):
        cells = _cells(lines[index])
        name = cells[0].split("`")[1]
        if name not in QUOTA_NAMES:
            raise ValueError(f"the quota table names no quota: {name!r}")
        cells[1] = str(getattr(Quotas(), name))
        lines[index] = _line(cells)
        quotas.add(name)
    if quotas != set(QUOTA_NAMES):
        raise ValueError(f"the quota table's quotas {sorted(quotas)} are not the server's")
    return "\n".join(lines)


def main() -> int:
    text = API_MD.read_text()
    new = rendered(text)
    if new != text:
        API_MD.write_text(new)
        print(f"{API_MD}: the default limits rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
