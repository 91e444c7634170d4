"""GetLimits through the real server: the same answer on gRPC and HTTP, the numbers the
server enforces (a value at a limit passes, one past it is refused), and docs/API.md's
"Limits" table names each field with its numbers (issue 14: limits readable from the
server)."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from pathlib import Path

import aiohttp
import grpc
import pytest
from google.protobuf import json_format

from engine.cards import RANK_CODES, SUITS
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.conftest import StartServer
from tests.e2e.support import Env
from tests.e2e.test_errors import expect

Code = grpc.StatusCode
API_MD = Path(__file__).parents[2] / "docs" / "API.md"


async def test_the_limits_are_the_same_on_both_faces_and_need_no_credential(server: Env) -> None:
    limits = await server.client.limits()
    async with (
        aiohttp.ClientSession(server.http) as session,
        session.get("/v1/limits") as response,
    ):
        assert response.status == 200
        body = await response.json()
    assert json_format.ParseDict(body, pb.GetLimitsResponse()) == limits
    # every field is answered (a Range's max, a number): none left at its zero
    for field in pb.GetLimitsResponse.DESCRIPTOR.fields:
        value = getattr(limits, field.name)
        assert (value.max if field.message_type else value) > 0, field.name
    # the server's configuration, not a constant: the default --rate and --burst
    assert (limits.rate_per_second, limits.rate_burst) == (500.0, 1000)


async def test_a_configured_rate_is_what_get_limits_answers(start_server: StartServer) -> None:
    env = await start_server("memory", rate_per_second=7.5, rate_burst=3)
    limits = await env.client.limits()
    assert (limits.rate_per_second, limits.rate_burst) == (7.5, 3)


def _rules(**change: int) -> pb.RuleSet:
    rules = convert.rules_to_pb(PRESETS["whiskertrail"])
    rules.hash = ""
    for name, value in change.items():
        setattr(rules, name, value)
    return rules


async def test_each_limit_passes_at_its_value_and_is_refused_past_it(server: Env) -> None:
    limits = await server.client.limits()
    client = server.client
    # rule-set bounds: decks, jokers, turn_cap, claim_penalty_cards
    for name, top in (
        ("decks", limits.decks.max),
        ("jokers", limits.jokers.max),
        ("turn_cap", limits.turn_cap.max),
        ("claim_penalty_cards", limits.claim_penalty_cards.max),
    ):
        game = await client.create_game(_rules(**{name: top}), seats=2)
        assert getattr(game.rule_set, name) == top, name
        error = await expect(
            client.create_game(_rules(**{name: top + 1}), seats=2),
            Code.INVALID_ARGUMENT,
            "INVALID_RULE_SET",
        )
        assert name in error.message, error.message
    # seats: the most a rule set may seat
    many = _rules(max_players=limits.seats.max)
    assert len((await client.create_game(many, seats=limits.seats.max)).seat_info) == 8
    await expect(
        client.create_game(_rules(max_players=limits.seats.max + 1), seats=2),
        Code.INVALID_ARGUMENT,
        "INVALID_RULE_SET",
    )
    # a rule set's name
    await client.create_game(convert_named("n" * limits.rule_set_name_length.max), seats=2)
    await expect(
        client.create_game(convert_named("n" * (limits.rule_set_name_length.max + 1)), seats=2),
        Code.INVALID_ARGUMENT,
        "INVALID_RULE_SET",
    )
    # the seed
    await client.create_game(seats=2, seed=b"s" * limits.seed_bytes)
    await expect(
        client.create_game(seats=2, seed=b"s" * (limits.seed_bytes + 1)), Code.INVALID_ARGUMENT
    )
    # a player's name
    game = await client.create_game(seats=2)
    await client.join(game.game_id, name="p" * limits.player_name_length)
    await expect(
        client.join(game.game_id, name="p" * (limits.player_name_length + 1)),
        Code.INVALID_ARGUMENT,
    )
    # AnalyseHand's cards
    codes = [rank + suit for suit in SUITS for rank in RANK_CODES]
    hand = codes[: limits.analyse_hand_cards]

    def analyse(cards: list[str]) -> Awaitable[pb.AnalyseHandResponse]:
        request = pb.AnalyseHandRequest(
            rule_set_name="whiskertrail", round=1, hand=cards, best_only=True
        )
        return client.call(client.stub.AnalyseHand, request)

    assert (await analyse(hand)).feasible
    await expect(analyse(codes[: limits.analyse_hand_cards + 1]), Code.INVALID_ARGUMENT)
    # a game_id: one at the limit is only unknown, one past it is refused
    await expect(client.game("g" * limits.game_id_length.max), Code.NOT_FOUND, "GAME_NOT_FOUND")
    await expect(client.game("g" * (limits.game_id_length.max + 1)), Code.INVALID_ARGUMENT)


def convert_named(name: str) -> pb.RuleSet:
    rules = _rules()
    rules.name = name
    return rules


async def test_the_http_body_limit_is_the_one_get_limits_answers(server: Env) -> None:
    limits = await server.client.limits()
    head = b'{"ruleSetName": "whiskertrail", "seats": 2'
    at_limit = head + b" " * (limits.http_body_bytes - len(head) - 1) + b"}"
    assert len(at_limit) == limits.http_body_bytes
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(server.http) as session:
        async with session.post("/v1/games", data=at_limit, headers=headers) as response:
            assert response.status == 200, await response.text()
        past = at_limit[:-1] + b" }"
        async with session.post("/v1/games", data=past, headers=headers) as response:
            assert response.status == 413
            assert (await response.json())["reason"] == "BODY_TOO_LARGE"


def _limits_table() -> list[tuple[str, str, list[str]]]:
    """(what, limit, GetLimits fields) of each row of API.md's "Limits" table."""
    text = API_MD.read_text()
    section = text[text.index("\n## Limits\n") :]
    section = section[: section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("what", "---"):
            continue
        rows.append((cells[0], cells[1], re.findall(r"`(\w+)`", cells[2])))
    return rows


async def test_api_md_s_limits_table_and_get_limits_agree(server: Env) -> None:
    limits = await server.client.limits()
    rows = _limits_table()
    assert len(rows) > 20, "the Limits table is read"
    named = [field for _, _, fields in rows for field in fields]
    every = sorted(f.name for f in pb.GetLimitsResponse.DESCRIPTOR.fields)
    assert sorted(named) == every, "each GetLimits field is named once in the table"
    for what, limit, fields in rows:
        numbers = re.findall(r"\d+(?:\.\d+)?", limit)
        for name in fields:
            value = getattr(limits, name)
            if isinstance(value, pb.Range):
                assert f"{value.min}..{value.max}" in limit, (what, name, value)
            else:
                shown = f"{value:g}" if isinstance(value, float) else str(value)
                assert shown in numbers, (what, name, value, limit)


async def test_the_grpc_message_limit_is_the_one_get_limits_answers(server: Env) -> None:
    """A request of exactly grpc_message_bytes reaches the service (which refuses its
    over-long name); one byte more is refused by gRPC itself."""
    limits = await server.client.limits()
    request = pb.JoinGameRequest(game_id="g", name="")
    overhead = len(request.SerializeToString())
    # (the name's tag is 1 byte, its length a 4-byte varint)
    request.name = "n" * (limits.grpc_message_bytes - overhead - 5)
    assert len(request.SerializeToString()) == limits.grpc_message_bytes
    with pytest.raises(grpc.aio.AioRpcError) as at_limit:
        await server.client.stub.JoinGame(request, timeout=10)
    # the service's own answer (the unknown game or the over-long name), not gRPC's
    assert at_limit.value.code() in (Code.INVALID_ARGUMENT, Code.NOT_FOUND), at_limit.value
    request.name += "n"
    with pytest.raises(grpc.aio.AioRpcError) as past:
        await server.client.stub.JoinGame(request, timeout=10)
    assert past.value.code() is Code.RESOURCE_EXHAUSTED, past.value
