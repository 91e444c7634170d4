"""bench.valve_rounds tells why a contract round reached the 200-turn valve."""

from __future__ import annotations

from bench.valve_rounds import play, run


def test_a_round_dead_in_fact_but_not_by_the_rule_is_told() -> None:
    # (round_lengths' match 1, greedy at every seat: round 4 runs to the valve with every
    # seat open and no card off the table that fits a meld)
    found = play(1, "greedy", None)
    assert [(r["round"], r["kind"]) for r in found] == [(4, "no_card_fits")], found
    assert found[0]["seats_open"] == 4
    assert found[0]["fitting_cards_in_hands"] == found[0]["fitting_cards_in_stock_or_discards"] == 0


def test_a_match_with_no_round_at_the_valve() -> None:
    summary = run(1, "greedy", None)  # (match 0)
    assert summary["rounds_at_valve"] == 0 and summary["why"] == {}, summary
