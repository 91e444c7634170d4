"""The table core (clients/table.py) alone, fed by hand: which seat answers (in turn
order), what a refusal counts as and when a seat is given up, the versions and request
ids of its acts, and each seat's final view.  No server, no event loop."""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Sequence

import pytest

from clients.bots import make_bot
from clients.bots.base import Bot
from clients.table import (
    Act,
    ListActions,
    Outcome,
    Over,
    ReadView,
    Table,
    Wait,
    outcome_of,
)
from glintwick.v1 import game_pb2 as pb

GAME = "g1"
DRAW = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))
PASS = pb.Action(pass_claim=pb.PassClaim())


@pytest.fixture(autouse=True)
def first_legal(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Bot, pb.View]]:
    """The bot's decision stands in for itself: the first legal action (what each turn
    asked is recorded)."""
    asked: list[tuple[Bot, pb.View]] = []

    def choose(
        bot: Bot, view: pb.View, legal: Sequence[pb.Action], rng: random.Random
    ) -> pb.Action:
        asked.append((bot, view))
        return legal[0]

    monkeypatch.setattr("clients.table.wire_choice", choose)
    return asked


def view(
    version: int,
    to_act: Sequence[int],
    *,
    seat: int,
    seats: int = 3,
    over: bool = False,
) -> pb.View:
    return pb.View(
        game_id=GAME,
        version=version,
        seat=seat,
        seats=seats,
        to_act=list(to_act),
        may_act=seat in to_act,
        game_over=over,
    )


def seated(seats: Sequence[int], **options: object) -> Table:
    ids = (f"r{n}" for n in itertools.count(1))
    table = Table(request_ids=lambda: next(ids), **options)  # type: ignore[arg-type]
    for seat in seats:
        table.sit(GAME, seat, make_bot("random", seed=seat), random.Random(seat))
    return table


def act(seat: int = 0, version: int = 5, request_id: str = "r") -> Act:
    return Act(GAME, seat, DRAW, version, request_id)


# --------------------------------------------------------------------------- in turn order


def test_with_every_seat_here_only_the_first_to_act_answers_a_prompt() -> None:
    table = seated([0, 1, 2])
    window = [2, 0]  # a claim window: seat 2 first, then seat 0
    assert table.prompted(GAME, 0, 7, view(7, window, seat=0), [PASS]) is None
    turn = table.prompted(GAME, 2, 7, view(7, window, seat=2), [PASS])
    assert turn is not None and turn.seat == 2


def test_with_a_seat_played_elsewhere_every_prompted_seat_answers() -> None:
    table = seated([0, 1])  # seat 2 is someone else's
    assert table.prompted(GAME, 0, 7, view(7, [2, 0], seat=0), [PASS]) is not None


def test_out_of_turn_order_every_prompted_seat_answers() -> None:
    table = seated([0, 1, 2], in_turn_order=False)
    assert table.prompted(GAME, 0, 7, view(7, [2, 0], seat=0), [PASS]) is not None


def test_a_prompt_without_a_legal_action_is_not_answered() -> None:
    assert seated([0]).prompted(GAME, 0, 3, view(3, [0], seat=0), []) is None


def test_unary_calls_follow_the_turn_to_the_seat_to_act_first() -> None:
    table = seated([0, 1, 2])
    # not its turn: the view of the seat to act is read next
    assert table.viewed(GAME, 0, view(4, [1], seat=0)) == ReadView(1)
    # its turn: its legal actions at the view's version
    assert table.viewed(GAME, 1, view(4, [1], seat=1)) == ListActions(1, 4)
    # it may act, but another seat played here answers first
    assert table.viewed(GAME, 0, view(5, [2, 0], seat=0)) == ReadView(2)
    # nobody here to act: wait for the game to move
    lone = seated([0])
    assert lone.viewed(GAME, 0, view(4, [1], seat=0)) == Wait(0)
    assert lone.viewed(GAME, 0, view(5, [1, 0], seat=0)) == ListActions(0, 5)


# --------------------------------------------------------------------------- refusals


def test_refusals_are_counted_by_kind() -> None:
    table = seated([0], max_failures=None)
    assert table.refused(act(), "FAILED_PRECONDITION") is Outcome.ILLEGAL
    assert table.refused(act(), "INVALID_ARGUMENT") is Outcome.ILLEGAL
    assert table.refused(act(), "DEADLINE_EXCEEDED") is Outcome.TIMEOUT
    assert table.refused(act(), "UNAVAILABLE", "no store") is Outcome.ERROR
    assert table.refused(act(), "NOT_FOUND") is Outcome.GONE
    result = table.result(GAME, 0)
    assert (result.illegal, result.timeouts, result.errors, result.races) == (2, 1, 2, 0)
    assert result.refusal == "NOT_FOUND" and not result.gave_up and result.moves == 0


def test_a_seat_is_given_up_after_max_failures_in_a_row() -> None:
    table = seated([0], max_failures=3)
    table.refused(act(), "UNAVAILABLE")
    table.refused(act(), "UNAVAILABLE")
    table.applied(act(), 6, 0.01)  # a move ends the run of failures
    table.refused(act(), "INVALID_ARGUMENT", "no such card")
    table.refused(act(), "INVALID_ARGUMENT")
    assert table.playing(GAME, 0)
    table.refused(act(), "DEADLINE_EXCEEDED", "slow")
    result = table.result(GAME, 0)
    assert result.gave_up and not table.playing(GAME, 0)
    assert result.refusal == "DEADLINE_EXCEEDED: slow"
    # a seat given up answers nothing more, by either transport
    assert table.prompted(GAME, 0, 9, view(9, [0], seat=0), [DRAW]) is None
    assert table.viewed(GAME, 0, view(9, [0], seat=0)) == Over()


def test_aborted_is_a_race_not_a_failure() -> None:
    table = seated([0], max_failures=2)
    assert table.refused(act(), "ABORTED") is Outcome.RACE
    assert table.refused(act(), "ABORTED") is Outcome.RACE
    result = table.result(GAME, 0)
    assert result.races == 2 and result.errors == result.illegal == 0
    assert not result.gave_up
    # nor does a race break a run of failures
    table.refused(act(), "UNAVAILABLE")
    table.refused(act(), "ABORTED")
    table.refused(act(), "UNAVAILABLE")
    assert table.result(GAME, 0).gave_up


def test_an_act_that_finds_its_session_over_is_no_failure() -> None:
    assert outcome_of("INVALID_ARGUMENT", session_open=False) is Outcome.ENDED
    assert outcome_of("CANCELLED", session_open=False) is Outcome.ENDED
    assert outcome_of("CANCELLED", session_open=True) is Outcome.ERROR
    assert outcome_of("UNAVAILABLE", session_open=False) is Outcome.ERROR
    table = seated([0], max_failures=1)
    outcome = table.refused(act(), "INVALID_ARGUMENT", session_open=False)
    assert outcome is Outcome.ENDED and not outcome.failed
    result = table.result(GAME, 0)
    assert result.races == 1 and result.illegal == 0 and not result.gave_up


# --------------------------------------------------------------------------- versions, ids


def test_an_act_expects_its_prompt_s_version_and_has_a_fresh_request_id() -> None:
    table = seated([0])
    first = table.prompted(GAME, 0, 11, view(11, [0], seat=0), [DRAW, PASS])
    second = table.prompted(GAME, 0, 12, view(12, [0], seat=0), [PASS])
    assert first is not None and second is not None
    sent = first.choose()
    assert sent == Act(GAME, 0, DRAW, 11, "r1")
    assert second.choose() == Act(GAME, 0, PASS, 12, "r2")
    assert first.act(PASS) == Act(GAME, 0, PASS, 11, "r1")  # (a resend keeps its id)
    assert table.version(GAME, 0) == 12
    table.applied(sent, 13, 0.004)
    assert table.version(GAME, 0) == 13


def test_default_request_ids_are_unique() -> None:
    table = Table()
    table.sit(GAME, 0, make_bot("random", seed=0), random.Random(0))
    ids = set()
    for version in range(50):
        turn = table.prompted(GAME, 0, version, view(version, [0], seat=0), [DRAW])
        assert turn is not None
        ids.add(turn.request_id)
    assert len(ids) == 50


def test_legal_actions_of_another_version_than_the_view_are_not_acted_on() -> None:
    table = seated([0])
    assert table.viewed(GAME, 0, view(20, [0], seat=0)) == ListActions(0, 20)
    assert table.listed(GAME, 0, 21, [DRAW]) is None  # the game moved between the calls
    assert table.listed(GAME, 0, 20, []) is None
    turn = table.listed(GAME, 0, 20, [DRAW])
    assert turn is not None and turn.choose().expected_version == 20


def test_a_seat_s_randomness_may_be_made_from_each_move_s_version() -> None:
    made: list[int] = []

    def per_move(seed: str, version: int) -> random.Random:
        made.append(version)
        return random.Random(f"{seed}:{version}")

    table = Table()
    table.sit(GAME, 0, make_bot("random", seed=0), functools.partial(per_move, "pool"))
    turn = table.prompted(GAME, 0, 8, view(8, [0], seat=0), [DRAW])
    assert turn is not None and made == [8]
    assert turn.rng.random() == random.Random("pool:8").random()


def test_the_bot_decides_on_the_turn_s_view(first_legal: list[tuple[Bot, pb.View]]) -> None:
    table = seated([0, 1])
    shown = view(3, [1], seat=1)
    turn = table.prompted(GAME, 1, 3, shown, [PASS])
    assert turn is not None
    turn.choose()
    ((bot, seen),) = first_legal
    assert bot is turn.bot and seen is shown and bot.name == "random"


# --------------------------------------------------------------------------- results


def test_moves_and_latencies_are_each_seat_s() -> None:
    table = seated([0, 1])
    table.applied(act(0), 6, 0.002)
    table.applied(act(1), 7, 0.003)
    table.applied(act(0), 8, 0.004)
    zero, one = table.results
    assert (zero.seat, zero.moves, zero.latencies) == (0, 2, [0.002, 0.004])
    assert (one.seat, one.moves, one.latencies) == (1, 1, [0.003])
    assert zero.mean_latency_ms == pytest.approx(3.0)
    assert table.moves(GAME) == 3


def test_the_final_view_comes_with_a_session_s_end_or_a_view_of_the_game_over() -> None:
    table = seated([0, 1])
    final = view(40, [], seat=0, over=True)
    final.players.add(seat=0, score=12)
    table.closed(GAME, 0, final)
    table.closed(GAME, 1, None)  # (a session that ended without one)
    assert table.result(GAME, 0).final_view is final
    assert table.result(GAME, 1).final_view is None
    assert table.view(GAME) is final
    assert table.viewed(GAME, 1, view(40, [], seat=1, over=True)) == Over()
    assert table.result(GAME, 1).final_view is not None


def test_the_newest_view_of_a_game_not_over_is_its_last_seen() -> None:
    table = seated([0, 1])
    table.saw(GAME, 0, view(3, [0], seat=0))
    table.prompted(GAME, 1, 5, view(5, [1], seat=1), [DRAW])
    table.saw(GAME, 0, view(4, [1], seat=0))
    newest = table.view(GAME)
    assert newest is not None and newest.version == 5 and newest.seat == 1
