"""docs/API.md's default rate limits and quotas are the server's: the tables' numbers
are written from the constants it runs with (services/limits_doc.py, ``make
docs-limits``), and this fails while the document differs from what that writes."""

from __future__ import annotations

import dataclasses

import pytest

from services import config, limits_doc


def test_api_md_s_default_limits_are_the_server_s() -> None:
    text = limits_doc.API_MD.read_text()
    assert limits_doc.rendered(text) == text, (
        "docs/API.md's default limits drifted: make docs-limits"
    )


def test_the_tables_follow_the_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    """(The check can fail: another default is another table.)"""
    text = limits_doc.API_MD.read_text()
    rates = {**config.DEFAULT_RATES, "create": config.Rate(7.0, 70)}
    monkeypatch.setattr(limits_doc, "DEFAULT_RATES", rates)
    monkeypatch.setattr(limits_doc, "DEFAULT_ACT_RATE", config.Rate(9.0, 90))
    fewer = dataclasses.replace(config.Quotas(), open_games=3)
    monkeypatch.setattr(limits_doc, "Quotas", lambda: fewer)
    changed = limits_doc.rendered(text)
    assert "| create | CreateGame, CreateGameFromDeck | 7 | 70 |" in changed
    assert "| 9 (`--rate`) | 90 (`--burst`) |" in changed
    assert "| `open_games`: the unfinished games one client created | 3 |" in changed
    assert changed != text


def test_a_table_that_lacks_a_class_is_refused() -> None:
    text = limits_doc.API_MD.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| analyse |"))
    with pytest.raises(ValueError, match="classes"):
        limits_doc.rendered(text.replace(row + "\n", ""))
