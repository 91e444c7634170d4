"""A game starts when every seat is taken (docs/RULES.md, "When a game starts"): until
then no seat may act, over any face, and the refusal is typed ``FAILED_PRECONDITION``
``TABLE_NOT_FULL`` (a value of proto/'s ErrorReason).  Checked as an outsider meets it:
a client compiled from ``proto/`` at test time (tests/support/outsider.py) and plain
HTTP, against ``glintwick serve``."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import grpc

from tests.support.outsider import OutsiderApi, OutsiderClient, Served

DRAW: dict[str, Any] = {"draw": {}}


def _half_table(client: OutsiderClient, **game: Any) -> tuple[str, str]:
    """A whiskertrail table of two with one seat taken: its id and seat 0's token."""
    created = client.call("CreateGame", {"ruleSetName": "whiskertrail", "seats": 2, **game})
    game_id = str(created.game_id)  # type: ignore[attr-defined]
    joined = client.call("JoinGame", {"gameId": game_id, "seat": 0, "name": "ann"})
    return game_id, str(joined.token)  # type: ignore[attr-defined]


def test_the_reason_is_proto_s(api: OutsiderApi) -> None:
    names = {v.name for v in api.enum("glintwick.v1.ErrorReason").values}
    assert "ERROR_REASON_TABLE_NOT_FULL" in names


def test_no_unary_act_before_the_table_is_full(client: OutsiderClient) -> None:
    game_id, token = _half_table(client)
    # (refused whichever seat the deal lets move first: nobody may act yet)
    move = {"gameId": game_id, "expectedVersion": 0, "requestId": "r1", "action": DRAW}
    refusal = client.refused("SubmitAction", move, token=token)
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_NOT_FULL",
    ), refusal
    verdict = client.call("ValidateAction", {"gameId": game_id, "action": DRAW}, token=token)
    assert not verdict.legal and verdict.reason == "TABLE_NOT_FULL"  # type: ignore[attr-defined]
    legal = client.call("ListLegalActions", {"gameId": game_id}, token=token)
    assert list(legal.actions) == []  # type: ignore[attr-defined]
    game = client.call("GetGame", {"gameId": game_id})
    assert game.version == 0  # type: ignore[attr-defined]

    # the second seat taken, the game starts: the seat to act acts
    bob = client.call("JoinGame", {"gameId": game_id, "seat": 1, "name": "bob"})
    tokens = {0: token, 1: str(bob.token)}  # type: ignore[attr-defined]
    current = int(client.call("GetView", {"gameId": game_id}, token=token).current)  # type: ignore[attr-defined]
    move = {"gameId": game_id, "expectedVersion": 0, "requestId": "r2", "action": DRAW}
    assert client.call("SubmitAction", move, token=tokens[current]).version == 1  # type: ignore[attr-defined]


def _http(served_at: Served, path: str, body: Any, token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        served_at.http + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_no_http_act_before_the_table_is_full(client: OutsiderClient, server: Served) -> None:
    game_id, token = _half_table(client)
    move = {"expectedVersion": 0, "requestId": "h1", "action": DRAW}
    for path in (f"/v1/games/{game_id}:submit", f"/v1/games/{game_id}:play"):
        status, body = _http(server, path, move, token)
        assert (status, body["code"], body["reason"]) == (
            409,
            "FAILED_PRECONDITION",
            "TABLE_NOT_FULL",
        ), (path, body)


async def test_a_play_session_is_prompted_once_the_table_is_full(client: OutsiderClient) -> None:
    game_id, token = _half_table(client)
    async with client.play() as play:
        await play.send({"subscribe": {"gameId": game_id, "seat": 0, "token": token}})
        await play.receive_until("snapshot")
        act = {"gameId": game_id, "seat": 0, "expectedVersion": 0, "requestId": "p1",
               "action": DRAW}  # fmt: skip
        await play.send({"act": act})
        kinds = [m.WhichOneof("kind") for m in await play.receive_until("result")]
        assert "prompt" not in kinds, kinds  # no prompt while a seat is free
        # the second seat taken (a join on another connection): the seat to act is prompted
        bob = client.call("JoinGame", {"gameId": game_id, "seat": 1, "name": "bob"})
        await play.send(
            {"subscribe": {"gameId": game_id, "seat": 1, "token": bob.token, "promptsOnly": True}}  # type: ignore[attr-defined]
        )
        prompt = (await play.receive_until("prompt"))[-1]
        current = int(client.call("GetView", {"gameId": game_id}, token=token).current)  # type: ignore[attr-defined]
        assert prompt.seat == current  # type: ignore[attr-defined]
        assert prompt.prompt.version == 0  # type: ignore[attr-defined]


async def test_a_refused_play_act_names_the_reason(client: OutsiderClient) -> None:
    game_id, token = _half_table(client)
    async with client.play() as play:
        await play.send({"subscribe": {"gameId": game_id, "seat": 0, "token": token}})
        act = {"gameId": game_id, "seat": 0, "expectedVersion": 0, "requestId": "p2",
               "action": DRAW}  # fmt: skip
        await play.send({"act": act})
        answer = (await play.receive_until("result"))[-1].result  # type: ignore[attr-defined]
        assert (answer.error.code, answer.error.reason) == ("FAILED_PRECONDITION", "TABLE_NOT_FULL")


def test_no_deadline_runs_before_the_table_is_full(client: OutsiderClient) -> None:
    """A table with a one-second turn deadline and a seat free: no default move is
    made for the seat to act (the first turn's clock starts with the last join)."""
    game_id, token = _half_table(client, deadlines={"turnSeconds": 1})
    time.sleep(2.5)
    assert client.call("GetGame", {"gameId": game_id}).version == 0  # type: ignore[attr-defined]
    view = client.call("GetView", {"gameId": game_id}, token=token)
    assert view.deadline_unix == 0  # type: ignore[attr-defined]
