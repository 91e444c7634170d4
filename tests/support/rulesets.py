"""Custom rule sets the tests play besides the two presets."""

from __future__ import annotations

from engine.rulesets import Contract, MeldKind, MeldRequirement, RuleSet, Stalemate

# --------------------------------------------------------------------------- rule sets

_S3 = MeldRequirement(MeldKind.SET, 3)
_S4 = MeldRequirement(MeldKind.SET, 4)
_R4 = MeldRequirement(MeldKind.RUN, 4)
_R5 = MeldRequirement(MeldKind.RUN, 5)

#: A custom rule set mixing features of both presets: one deck and two jokers,
#: three contracts, contract sizes as minimums, distinct-suit sets of 3-4, ace
#: high or low, two jokers per meld, joker lay-offs and swaps, extra melds,
#: drawing from the discard pile, a two-exhaustion stalemate and a 120-turn cap.
CUSTOM_MIX = RuleSet(
    name="custom-mix",
    contracts=(
        Contract("set and run", (_S3, _R4), deal=9),
        Contract("two runs", (_R4, _R4), deal=10),
        Contract("set of four and run of five", (_S4, _R5), deal=11),
    ),
    jokers=2,
    decks=1,
    min_players=2,
    max_players=4,
    exact_contract_sizes=False,
    set_min=3,
    set_max=4,
    set_distinct_suits=True,
    run_min=4,
    ace_high=True,
    max_jokers_per_meld=2,
    min_naturals_per_meld=2,
    joker_penalty=20,
    draw_from_discard=True,
    initial_upcard=True,
    explicit_contract=False,
    layoff_jokers=True,
    layoff_on_opening_turn=True,
    extra_melds=True,
    joker_swap=True,
    may_i=False,
    stalemate=Stalemate.EXHAUSTIONS,
    max_exhaustions=2,
    turn_cap=120,
)

#: A custom "May I?" rule set for three seats: one deck and a joker, exact-size
#: contracts, no upcard, claims with two penalty cards, explicit contracts, a
#: last round without discards and a dry-stock stalemate with a 60-turn cap.
CUSTOM_MAYI = RuleSet(
    name="custom-mayi",
    contracts=(
        Contract("two sets", (_S3, _S3), deal=8),
        Contract("set and run", (_S3, _R4), deal=9),
        Contract("two runs, no discards", (_R4, _R4), deal=9, discards=False),
    ),
    jokers=1,
    decks=1,
    min_players=3,
    max_players=3,
    exact_contract_sizes=True,
    set_max=None,
    set_distinct_suits=False,
    ace_high=False,
    max_jokers_per_meld=1,
    joker_penalty=30,
    draw_from_discard=False,
    initial_upcard=False,
    explicit_contract=True,
    layoff_jokers=False,
    layoff_on_opening_turn=False,
    extra_melds=False,
    joker_swap=False,
    may_i=True,
    claim_penalty_cards=2,
    stalemate=Stalemate.DRY,
    # without a cap a DRY round can cycle forever: once every card but two is held or on
    # the table and nobody can lay off, the same card goes round and round
    turn_cap=60,
)
