"""The whiskertrail variants of ``clients/bots/feed.py`` (docs/BOT_STUDIES.md): the cards
the opponent took that a discard goes with, the race's end read from an open
opponent's hand size; legal, reproducible games."""

from __future__ import annotations

import dataclasses
import random

import pytest

from clients.bots.base import Situation
from clients.bots.closer import AnyDangerBot, CloserBot
from clients.bots.expert import ExpertBot
from clients.bots.feed import (
    ClaimDangerOffBot,
    FeedBot,
    FeedOpenBot,
    FeedTieBot,
    HoldBot,
    NextDangerBot,
    RaceNextBot,
    RushBot,
    feeds,
    near_out,
)
from clients.turn import engine_turn
from engine.actions import Discard, Draw, DrawSource
from engine.cards import Card, cards_from_codes
from engine.game import GameState
from engine.melds import build_meld
from engine.rulesets import CONTRACT, WHISKERTRAIL, MeldKind
from tests.support.playouts import bot_moves


def _cards(codes: list[str]) -> tuple[Card, ...]:
    return tuple(sorted(cards_from_codes(codes), key=lambda c: c.id))


def _situation(
    sizes: tuple[int, int], opened: tuple[bool, bool], rules: object = WHISKERTRAIL
) -> Situation:
    hand = _cards(["KS", "QD", "9C", "7H", "5S", "JD", "4C", "8S", "TD", "2H"])
    return Situation(
        rules, 2, 0, "play", hand, False, (), None, None,  # type: ignore[arg-type]
        2, 0, sizes, opened, (0, 0), 4, 40, False, 0, 20,
    )  # fmt: skip


def test_feeds_counts_the_same_rank_and_the_suit_within_two() -> None:
    taken = cards_from_codes(["7H", "KS"])
    by_code = {c.code: c for c in cards_from_codes(["7C", "9H", "TH", "QS", "2D", "JK"])}
    assert feeds(by_code["7C"], taken) == 1  # a group with 7H
    assert feeds(by_code["9H"], taken) == 1  # a run with 7H
    assert feeds(by_code["TH"], taken) == 0  # three ranks away
    assert feeds(by_code["QS"], taken) == 1  # a run with KS
    assert feeds(by_code["2D"], taken) == 0
    assert feeds(by_code["JK"], taken) == 2  # a joker goes with anything


def test_near_out_needs_an_open_opponent_with_few_cards_and_a_free_pile() -> None:
    assert near_out(_situation((10, 3), (False, True)), 3)
    assert not near_out(_situation((10, 4), (False, True)), 3)
    assert not near_out(_situation((10, 3), (False, False)), 3)
    assert not near_out(_situation((3, 10), (True, False)), 3)  # its own hand does not count
    assert not near_out(_situation((10, 3), (False, True), CONTRACT), 3)


def test_rush_sheds_the_costlier_card_once_the_opponent_is_near_out() -> None:
    king, two = (c for c in cards_from_codes(["KS", "2H"]))
    # discarding the king leaves 5 live outs, the two leaves 8: expert keeps the outs
    near = _situation((10, 2), (False, True))
    far = _situation((10, 6), (False, True))
    for bot, sit, first in [
        (CloserBot(1), near, two),
        (RushBot(1), far, two),
        (RushBot(1), near, king),
    ]:
        rank = bot._closed_rank(sit)
        keys = {king: rank(king, 2, 5), two: rank(two, 2, 8)}
        assert min(keys, key=keys.__getitem__) is first


@pytest.mark.parametrize(
    "bot",
    [
        FeedBot,
        FeedTieBot,
        FeedOpenBot,
        RushBot,
        HoldBot,
        NextDangerBot,
        RaceNextBot,
        ClaimDangerOffBot,
    ],
)
@pytest.mark.parametrize("seats", [2, 4])
def test_the_variants_play_reproducible_games(bot: type[CloserBot], seats: int) -> None:
    short = dataclasses.replace(WHISKERTRAIL, contracts=WHISKERTRAIL.contracts[:3])
    seed = f"feed:{seats}".encode()
    assert bot_moves(short, seats, bot, seed) == bot_moves(short, seats, bot, seed)


def test_feed_knows_which_of_its_discards_the_opponent_took() -> None:
    """Along a whole two-seat game: after each of the opponent's draws, the cards the bot
    lists as taken are exactly its discards the opponent drew from the pile this deal."""
    feeder, other = FeedBot(0), ExpertBot(1)
    feeder.setup(WHISKERTRAIL, 0)
    other.setup(WHISKERTRAIL, 1)
    state = GameState.new_game(WHISKERTRAIL, 2, b"feed:taken")
    rng = random.Random(0)
    truth: list[int] = []
    mine: int | None = None
    deal = (state.round_number, state.exhaustions)
    checked = taken = 0
    while not state.is_terminal():
        seat = state.to_act[0]
        if (state.round_number, state.exhaustions) != deal:
            deal, truth, mine = (state.round_number, state.exhaustions), [], None
        top = state.discards[-1].id if state.discards else None
        state, action, _ = engine_turn(state, seat, feeder if seat == 0 else other, rng)
        if seat == 0 and isinstance(action, Discard):
            mine = action.card
        if seat == 1 and action == Draw(DrawSource.DISCARD) and top is not None and top == mine:
            truth.append(top)
            taken += 1
        if seat == 0 and isinstance(action, Draw):
            assert [c.id for c in feeder._taken] == truth
            checked += 1
    assert checked > 50 and taken > 3


def test_closer_keeps_a_card_that_fits_the_table_only_when_the_next_seat_is_open() -> None:
    nine = cards_from_codes(["9C"])[0]
    table = (build_meld(MeldKind.SET, list(cards_from_codes(["9D", "9H", "9S"])), WHISKERTRAIL),)
    for opened, danger in [((False, True), 1), ((False, False), 0)]:
        sit = _situation((10, 8), opened)._replace(table=table)
        assert AnyDangerBot(1)._closed_rank(sit)(nine, 2, 5)[1] == 1
        assert CloserBot(1)._closed_rank(sit)(nine, 2, 5)[1] == danger
        assert NextDangerBot(1)._closed_rank(sit)(nine, 2, 5)[1] == danger


def test_claim_danger_off_plays_legal_reproducible_contract_games() -> None:
    short = dataclasses.replace(CONTRACT, contracts=CONTRACT.contracts[1:3])
    moves = bot_moves(short, 4, ClaimDangerOffBot, b"feed:c")
    assert moves == bot_moves(short, 4, ClaimDangerOffBot, b"feed:c")
