"""`glintwick solve`: JSON lines in, one answer line per query, errors on their own line."""

from __future__ import annotations

import io
import json

import pytest

from engine.cards import cards_from_codes
from engine.melds import build_meld
from engine.rulesets import MeldKind, ruleset
from glintwick_cli import main, solve


def _run(lines: list[str]) -> list[dict[str, object]]:
    out = io.StringIO()
    assert solve(io.StringIO("\n".join(lines) + "\n"), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_answers_in_order_and_bad_lines_do_not_stop_the_rest() -> None:
    trap = ["3H", "4H", "5H", "6H", "7H", "8H", "8S", "8D", "8C", "KC", "2D"]
    answers = _run(
        [
            json.dumps({"ruleset": "whiskertrail", "round": 7, "hand": trap}),
            "not json",
            json.dumps({"ruleset": "gin", "round": 1, "hand": []}),
            json.dumps({"ruleset": "contract", "round": 9, "hand": ["7H"]}),
            json.dumps({"ruleset": "contract", "round": 1, "hand": ["7H", "XX"]}),
            json.dumps({"ruleset": "contract", "round": 1}),
            json.dumps({"ruleset": "contract", "round": 3, "hand": ["2C", "9D", "KS"]}),
        ]
    )
    assert len(answers) == 7
    first = answers[0]
    assert first["feasible"] is True and first["points_laid"] == 57 and first["missing"] == 0
    assert first["jokers"] == 0
    melds = first["melds"]
    assert isinstance(melds, list)
    rules = ruleset("whiskertrail")
    used: list[str] = []
    for meld in melds:
        cards = cards_from_codes(meld["cards"], rules.decks, rules.jokers)
        build_meld(MeldKind(meld["kind"]), cards, rules)  # raises if not a valid meld
        used += meld["cards"]
    assert sorted(used) == sorted(["3H", "4H", "5H", "6H", "7H", "8H", "8S", "8D", "8C"])
    for bad in answers[1:6]:
        assert set(bad) == {"error"} and bad["error"]
    last = answers[6]
    assert last["feasible"] is False and last["points_laid"] is None and last["melds"] == []
    assert last["missing"] is None  # at least 5 cards short: beyond the search limit


def test_simulate_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--ruleset", "whiskertrail", "--games", "2", "--seats", "2"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games"] == 2 and summary["seats"] == 2
    assert abs(sum(summary["win_share_per_seat"]) - 1.0) < 1e-9


def test_serve_refuses_a_house_bot_it_cannot_load_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--house-bots", "random,nobody", "--grpc", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("glintwick serve: unknown bot 'nobody'") and err.count("\n") == 1
