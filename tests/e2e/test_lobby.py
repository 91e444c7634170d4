"""The lobby (ListOpenGames) through the real gRPC and HTTP faces, on both stores:
the games waiting for players, by rule set, paged, and never a token."""

from __future__ import annotations

import json

import aiohttp
import pytest
from google.protobuf import json_format

from clients.sdk import CallError, actions
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.support import Env


async def _lobby_http(
    session: aiohttp.ClientSession, **params: str
) -> tuple[int, dict[str, object], str]:
    async with session.get("/v1/lobby", params=params or None) as response:
        text = await response.text()
        return response.status, json.loads(text), text


@pytest.mark.parametrize("server", ["memory", "redis", "cluster"], indirect=True)
async def test_the_lobby_lists_open_games_by_rule_set_and_pages(server: Env) -> None:
    client = server.client
    full = await client.create_game("whiskertrail", seats=2)
    half = await client.create_game("whiskertrail", seats=3)
    empty = await client.create_game("whiskertrail", seats=2)
    table = await client.create_game("contract", seats=4)
    botted = await client.create_game("contract", seats=4)
    seats = [await client.join(full.game_id, name=f"f{i}") for i in range(2)]
    seats.append(await client.join(half.game_id, seat=1, name="hal"))
    seats.append(await client.join(table.game_id, name="tab"))
    host = await client.join(botted.game_id, name="host")
    await host.fill_with_bots("greedy")  # its last seats taken by house bots
    seats.append(host)
    tokens = [seat.token for seat in seats]

    everything = await client.list_open_games()
    assert [g.game_id for g in everything] == [half.game_id, empty.game_id, table.game_id]
    first = everything[0]
    assert (first.rule_set_name, first.rule_set_hash) == (
        "whiskertrail",
        PRESETS["whiskertrail"].hash,
    )
    assert (first.seats, first.seats_free) == (3, 2)
    assert [(s.joined, s.name) for s in first.seat_info] == [
        (False, ""),
        (True, "hal"),
        (False, ""),
    ]
    created = [g.created_unix for g in everything]
    assert created == sorted(created) and created[0] > 1.7e9
    whiskertrail = await client.list_open_games("whiskertrail")
    assert [g.game_id for g in whiskertrail] == [half.game_id, empty.game_id]
    contract = await client.list_open_games(rule_set_hash=PRESETS["contract"].hash)
    assert [g.game_id for g in contract] == [table.game_id]
    # pages of one: every game once, in order, with a token between pages only
    assert [g.game_id for g in await client.list_open_games(page_size=1)] == [
        g.game_id for g in everything
    ]
    page = await client.stub.ListOpenGames(pb.ListOpenGamesRequest(page_size=2))
    assert len(page.games) == 2 and page.next_page_token
    rest = await client.stub.ListOpenGames(
        pb.ListOpenGamesRequest(page_size=2, page_token=page.next_page_token)
    )
    assert [g.game_id for g in rest.games] == [table.game_id] and not rest.next_page_token

    # the last seat taken: gone from the lobby
    await client.join(empty.game_id, name="e0")
    last = await client.join(empty.game_id, name="e1")
    tokens.append(last.token)
    assert [g.game_id for g in await client.list_open_games("whiskertrail")] == [half.game_id]

    async with aiohttp.ClientSession(server.http) as session:
        status, body, text = await _lobby_http(session, ruleSetName="whiskertrail", pageSize="1")
        assert status == 200, body
        parsed = json_format.ParseDict(body, pb.ListOpenGamesResponse())
        assert [g.game_id for g in parsed.games] == [half.game_id]
        status, body, text = await _lobby_http(session)
        assert status == 200
        assert [g["gameId"] for g in body["games"]] == [half.game_id, table.game_id]  # type: ignore[attr-defined]
        for token in tokens:
            assert token not in text
        async with session.get("/openapi.json") as response:
            document = await response.json()
        assert document["paths"]["/v1/lobby"]["get"]["operationId"] == "ListOpenGames"
        status, body, _ = await _lobby_http(session, pageToken="bm90IGEgdG9rZW4")
        assert (status, body["reason"]) == (400, "INVALID_PAGE_TOKEN")
        status, body, _ = await _lobby_http(session, pageSize="-1")
        assert (status, body["reason"]) == (400, "INVALID_PAGE_SIZE")
    for token in tokens:
        assert token not in str(await client.stub.ListOpenGames(pb.ListOpenGamesRequest()))


async def test_the_lobby_refuses_bad_requests_with_typed_reasons(server: Env) -> None:
    client = server.client
    for _ in range(3):
        await client.create_game("whiskertrail", seats=2)
    page = await client.stub.ListOpenGames(
        pb.ListOpenGamesRequest(rule_set_name="whiskertrail", page_size=1)
    )
    cases = [
        (pb.ListOpenGamesRequest(page_size=-5), "INVALID_PAGE_SIZE"),
        (pb.ListOpenGamesRequest(page_token="%%%"), "INVALID_PAGE_TOKEN"),
        (pb.ListOpenGamesRequest(page_token="x" * 5000), "INVALID_PAGE_TOKEN"),
        # a token is tied to its filter (AIP-158)
        (pb.ListOpenGamesRequest(page_token=page.next_page_token), "INVALID_PAGE_TOKEN"),
        (pb.ListOpenGamesRequest(rule_set_name="nope"), "UNKNOWN_RULE_SET"),
        (pb.ListOpenGamesRequest(rule_set_hash="zz"), "INVALID_ARGUMENT"),
        (
            pb.ListOpenGamesRequest(
                rule_set_name="contract", rule_set_hash=PRESETS["contract"].hash
            ),
            "INVALID_ARGUMENT",
        ),
    ]
    for request, reason in cases:
        with pytest.raises(CallError) as refused:
            await client.call(client.stub.ListOpenGames, request)
        assert (refused.value.code.name, refused.value.reason) == ("INVALID_ARGUMENT", reason)
    # past the maximum page size: read as the maximum (AIP-158), not refused
    big = await client.stub.ListOpenGames(pb.ListOpenGamesRequest(page_size=100_000))
    assert len(big.games) == 3 and not big.next_page_token


def _one_turn_rules() -> pb.RuleSet:
    """A custom rule set whose game ends after its first turn: one contract (one
    round) and a turn cap of 1."""
    rules = convert.rules_to_pb(PRESETS["whiskertrail"])
    rules.name = "one turn"
    rules.turn_cap = 1
    del rules.contracts[1:]
    rules.hash = ""
    return rules


async def test_a_lone_seat_cannot_start_the_game_and_it_stays_in_the_lobby(server: Env) -> None:
    """A game starts when every seat is taken (docs/RULES.md): a lone player's move is
    refused TABLE_NOT_FULL, and the game stays listed, waiting for players.  (A table
    that never fills ends abandoned and leaves the lobby: test_abandoned_games.py.)"""
    client = server.client
    game = await client.create_game(_one_turn_rules(), seats=3)
    other = await client.create_game(_one_turn_rules(), seats=3)
    custom = game.rule_set.hash
    listed = await client.list_open_games(rule_set_hash=custom)
    assert [g.game_id for g in listed] == [game.game_id, other.game_id]
    assert listed[0].rule_set_name == "one turn"
    first = (await client.spectate(game.game_id)).current
    seat = await client.join(game.game_id, seat=first, name="solo")
    assert await seat.legal_actions() == []
    with pytest.raises(CallError) as refused:
        await seat.act(actions.draw(), expected_version=0)
    assert refused.value.reason == "TABLE_NOT_FULL"
    assert not (await client.game(game.game_id)).finished
    assert [g.game_id for g in await client.list_open_games(rule_set_hash=custom)] == [
        game.game_id,
        other.game_id,
    ]
