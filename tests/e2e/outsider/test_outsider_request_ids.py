"""A request id names one request (AIP-155, as Stripe's idempotency keys): the same
request again gets the first answer and is applied once; another request under the
same id is refused, ``INVALID_ARGUMENT`` ``REQUEST_ID_REUSED`` (a value of proto/'s
ErrorReason), and changes nothing.  As an outsider meets it: a client compiled from
``proto/`` at test time (tests/support/outsider.py) and plain HTTP, against
``glintwick serve`` on each store (the embedded one, and Redis)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from loadtests.processes.redis import RedisProcess
from tests.support.outsider import OutsiderApi, OutsiderClient, Served, served


@pytest.fixture(scope="module", params=["memory", "redis"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    logs = tmp_path_factory.mktemp(f"server-{request.param}")
    if request.param == "memory":
        with served(logs, "--no-bots") as running:
            yield running
        return
    redis = RedisProcess(Path(logs) / "redis")
    redis.start()
    try:
        with served(logs, "--no-bots", store=redis.url) as running:
            yield running
    finally:
        redis.stop()


def _table(client: OutsiderClient) -> tuple[str, dict[int, str], int]:
    """A whiskertrail table of two, both seats joined: its id, tokens, the seat to act."""
    game = client.call("CreateGame", {"ruleSetName": "whiskertrail", "seats": 2})
    game_id = str(game.game_id)  # type: ignore[attr-defined]
    tokens = {}
    for name in ("ann", "bob"):
        joined = client.call("JoinGame", {"gameId": game_id, "name": name})
        tokens[int(joined.seat)] = str(joined.token)  # type: ignore[attr-defined]
    current = int(client.call("GetView", {"gameId": game_id}, token=tokens[0]).current)  # type: ignore[attr-defined]
    return game_id, tokens, current


def test_the_reason_is_proto_s(api: OutsiderApi) -> None:
    names = {v.name for v in api.enum("glintwick.v1.ErrorReason").values}
    assert "ERROR_REASON_REQUEST_ID_REUSED" in names


def test_a_request_id_reused_with_another_action_is_refused(client: OutsiderClient) -> None:
    game_id, tokens, seat = _table(client)
    draw = {"gameId": game_id, "expectedVersion": 0, "requestId": "once", "action": {"draw": {}}}
    first = client.call("SubmitAction", draw, token=tokens[seat])
    assert first.version == 1  # type: ignore[attr-defined]
    # the same request again: the first answer, nothing applied twice
    again = client.call("SubmitAction", draw, token=tokens[seat])
    assert again == first
    # another action (or another expected version) under the same id: refused
    hand = client.call("GetView", {"gameId": game_id}, token=tokens[seat]).hand  # type: ignore[attr-defined]
    others = [
        {**draw, "action": {"discard": {"card": hand[0].id}}},
        {**draw, "action": {"draw": {"source": "DRAW_SOURCE_DISCARD"}}},
        {**draw, "expectedVersion": 1, "action": {"discard": {"card": hand[0].id}}},
    ]
    for other in others:
        refusal = client.refused("SubmitAction", other, token=tokens[seat])
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        ), (other, refusal)
        assert "once" in refusal.message
    assert client.call("GetGame", {"gameId": game_id}).version == 1  # type: ignore[attr-defined]
    # a new id for the new request is applied
    discard = {**others[2], "requestId": "twice"}
    assert client.call("SubmitAction", discard, token=tokens[seat]).version == 2  # type: ignore[attr-defined]


def _post(served_at: Served, path: str, body: Any, token: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        served_at.http + path, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_over_http_and_the_play_act_alike(client: OutsiderClient, server: Served) -> None:
    game_id, tokens, seat = _table(client)
    draw = {"expectedVersion": 0, "requestId": "h", "action": {"draw": {}}}
    status, first = _post(server, f"/v1/games/{game_id}:submit", draw, tokens[seat])
    assert status == 200 and first["version"] == "1"
    assert _post(server, f"/v1/games/{game_id}:submit", draw, tokens[seat]) == (200, first)
    other = {**draw, "action": {"draw": {"source": "DRAW_SOURCE_DISCARD"}}}
    for path in (f"/v1/games/{game_id}:submit", f"/v1/games/{game_id}:play"):
        status, body = _post(server, path, other, tokens[seat])
        assert (status, body["reason"]) == (400, "REQUEST_ID_REUSED"), (path, body)
