"""The limits of docs/API.md through the real server: rule sets whose scores could
overflow or whose contracts no deal satisfies, strings past their length, error
messages that stay small, and the reasons API.md promises (issue 14, defects 2, 4, 7)."""

from __future__ import annotations

import aiohttp
import grpc
import pytest

from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.support import OPERATOR_TOKEN, Env
from tests.e2e.test_errors import expect

Code = grpc.StatusCode


def overflowing_rules() -> pb.RuleSet:
    """Issue 14's rule set: penalties of 2**32-1, turn_cap 1, one contract of one set of 3
    with a deal of 3 (accepted before: the first Draw left the game stuck on INTERNAL)."""
    rules = convert.rules_to_pb(PRESETS["whiskertrail"])
    rules.name = "overflow"
    rules.joker_penalty = rules.ace_penalty = rules.face_penalty = 4294967295
    rules.turn_cap = 1
    del rules.contracts[:]
    rules.contracts.append(
        pb.Contract(
            name="one set",
            deal=3,
            discards=True,
            melds=[pb.MeldRequirement(kind=pb.MELD_KIND_SET, size=3)],
        )
    )
    rules.hash = ""
    return rules


async def test_a_rule_set_whose_scores_overflow_is_refused(server: Env) -> None:
    error = await expect(
        server.client.create_game(overflowing_rules(), seats=2),
        Code.INVALID_ARGUMENT,
        "INVALID_RULE_SET",
    )
    assert "penalty" in error.message and "0..1000" in error.message
    # the same rule set with bounded penalties plays
    fair = overflowing_rules()
    fair.joker_penalty, fair.ace_penalty, fair.face_penalty = 25, 15, 10
    game = await server.client.create_game(fair, seats=2)
    assert game.rule_set.turn_cap == 1


async def test_contracts_no_deal_satisfies_are_refused(server: Env) -> None:
    base = convert.rules_to_pb(PRESETS["whiskertrail"])
    cases: dict[str, tuple[dict[str, int], str]] = {
        "a deal smaller than the contract": ({"deal": 5}, "smaller than"),
        "naturals above the meld size": ({"min_naturals_per_meld": 4}, "min_naturals_per_meld"),
        "a set larger than the deck's cards of a rank": ({"set": 12}, "set size limits"),
        "too many seats": ({"max_players": 9}, "max_players"),
        "too many decks": ({"decks": 5}, "decks"),
        "too many jokers": ({"jokers": 17}, "jokers"),
        "a huge turn cap": ({"turn_cap": 10**6}, "turn_cap"),
    }
    for what, (change, words) in cases.items():
        rules = pb.RuleSet()
        rules.CopyFrom(base)
        rules.hash = ""
        for field, value in change.items():
            if field == "deal":
                rules.contracts[0].deal = value
            elif field == "set":
                rules.contracts[0].melds[0].size = value
            else:
                setattr(rules, field, value)
        error = await expect(
            server.client.create_game(rules, seats=2), Code.INVALID_ARGUMENT, "INVALID_RULE_SET"
        )
        assert words in error.message, (what, error.message)


async def test_a_huge_rule_set_name_gets_a_small_error(server: Env) -> None:
    error = await expect(
        server.client.create_game("x" * 20000), Code.INVALID_ARGUMENT, "UNKNOWN_RULE_SET"
    )
    assert len(error.message) < 300 and "20002 characters" in error.message
    custom = convert.rules_to_pb(PRESETS["whiskertrail"])
    custom.name = "y" * 20000
    custom.hash = ""
    error = await expect(
        server.client.create_game(custom, seats=2), Code.INVALID_ARGUMENT, "INVALID_RULE_SET"
    )
    assert len(error.message) < 300 and "1..64 characters" in error.message
    error = await expect(
        server.client.analyse("whiskertrail", 1, ["Q" * 20000]), Code.INVALID_ARGUMENT
    )
    assert len(error.message) < 300


async def test_strings_past_their_limit_are_refused(server: Env) -> None:
    game = await server.client.create_game(seats=2)
    error = await expect(
        server.client.join(game.game_id, name="n" * 65), Code.INVALID_ARGUMENT, "INVALID_ARGUMENT"
    )
    assert "64 characters" in error.message
    seat = await server.client.join(game.game_id, name="n" * 64)
    assert (await server.client.game(game.game_id)).seat_info[seat.seat].name == "n" * 64
    await expect(server.client.create_game(seats=2, bots={0: "b" * 65}), Code.INVALID_ARGUMENT)


async def test_bots_for_a_seat_the_game_lacks_are_no_such_seat(server: Env) -> None:
    await expect(
        server.client.create_game(seats=2, bots={99: "random"}),
        Code.INVALID_ARGUMENT,
        "NO_SUCH_SEAT",
    )


async def test_bad_deck_orders_are_invalid_deck_in_the_api_s_words(server: Env) -> None:
    order = list(range(PRESETS["whiskertrail"].deck_size))
    request = pb.CreateGameFromDeckRequest(
        game=pb.CreateGameRequest(rule_set_name="whiskertrail", seats=2),
        decks=[pb.DeckOrder(round=1, cards=order), pb.DeckOrder(round=1, cards=order)],
    )
    client = server.client
    call = client.call(client.stub.CreateGameFromDeck, request, OPERATOR_TOKEN, retry_on=())
    error = await expect(call, Code.INVALID_ARGUMENT, "INVALID_DECK")
    assert "decks[1]" in error.message
    request.decks[1].round = 2
    request.decks[1].cards[0] = 1
    call = client.call(client.stub.CreateGameFromDeck, request, OPERATOR_TOKEN, retry_on=())
    error = await expect(call, Code.INVALID_ARGUMENT, "INVALID_DECK")
    assert "decks[1].cards" in error.message and "stock_orders" not in error.message
    request.decks[1].round = 9
    call = client.call(client.stub.CreateGameFromDeck, request, OPERATOR_TOKEN, retry_on=())
    await expect(call, Code.INVALID_ARGUMENT, "INVALID_DECK")


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "some-token", "Bearer"])
async def test_an_authorization_header_that_is_not_bearer_is_refused(
    server: Env, header: str
) -> None:
    game = await server.client.create_game(seats=2)
    request = pb.GetViewRequest(game_id=game.game_id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await server.client.stub.GetView(request, metadata=[("authorization", header)])
    assert caught.value.code() is Code.UNAUTHENTICATED
    assert "Bearer <token>" in (caught.value.details() or "")
    async with aiohttp.ClientSession() as http:
        url = f"{server.http}/v1/games/{game.game_id}/view"
        async with http.get(url, headers={"Authorization": header}) as response:
            assert response.status == 401
            body = await response.json()
            assert body["reason"] == "BAD_TOKEN" and "Bearer <token>" in body["message"]
        async with http.get(url) as response:  # no header at all: a spectator
            assert response.status == 200
