"""The HTTP face is strict, in the API's own words (plain HTTP against ``glintwick
serve``): a body field that contradicts the path (``gameId``) is refused, 400
``PATH_MISMATCH``, and changes nothing; an unknown JSON field is refused with a short
message that names it by its path in the body, not protobuf's wording."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from tests.support.outsider import Served


def _call(server: Served, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.http + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _table(server: Served) -> tuple[str, dict[int, str], int]:
    status, game = _call(server, "/v1/games", {"ruleSetName": "whiskertrail", "seats": 2})
    assert status == 200, game
    game_id = game["gameId"]
    tokens = {}
    for name in ("ann", "bob"):
        _, joined = _call(server, f"/v1/games/{game_id}:join", {"name": name})
        tokens[joined["seat"]] = joined["token"]
    _, view = _call(server, f"/v1/games/{game_id}/view", token=tokens[0])
    return game_id, tokens, view.get("current", 0)


def test_a_body_game_id_that_contradicts_the_path_is_refused(server: Served) -> None:
    game_id, tokens, seat = _table(server)
    other_id, _, _ = _table(server)
    move = {"gameId": other_id, "expectedVersion": 0, "requestId": "m", "action": {"draw": {}}}
    for path, body, token in (
        (f"/v1/games/{game_id}:submit", move, tokens[seat]),
        (f"/v1/games/{game_id}:validate", {"gameId": other_id, "action": {}}, tokens[seat]),
        (f"/v1/games/{game_id}:play", move, tokens[seat]),
        (f"/v1/games/{game_id}:join", {"gameId": other_id, "name": "cy"}, None),
        (f"/v1/games/{game_id}:fillWithBots", {"gameId": other_id}, tokens[0]),
    ):
        status, answer = _call(server, path, body, token)
        assert (status, answer["code"], answer["reason"]) == (
            400,
            "INVALID_ARGUMENT",
            "PATH_MISMATCH",
        ), (path, answer)
        assert other_id in answer["message"] and "gameId" in answer["message"]
    for gid in (game_id, other_id):
        assert _call(server, f"/v1/games/{gid}")[1].get("version", "0") == "0"
    # the path's own id in the body is the same request
    same = {**move, "gameId": game_id}
    status, answer = _call(server, f"/v1/games/{game_id}:submit", same, tokens[seat])
    assert status == 200 and answer["version"] == "1", answer


def test_an_unknown_field_is_named_in_the_api_s_words(server: Served) -> None:
    game_id, tokens, seat = _table(server)
    cases = [
        ("/v1/games", {"ruleSetName": "whiskertrail", "seatz": 2}, None, "seatz"),
        (
            f"/v1/games/{game_id}:submit",
            {"expectedVersion": 0, "action": {"draw": {"sorce": "DRAW_SOURCE_STOCK"}}},
            tokens[seat],
            "action.draw.sorce",
        ),
        (
            "/v1/games",
            {"customRuleSet": {"name": "x", "contracts": [{"name": "c", "melds": [{"kindd": 1}]}]}},
            None,
            "customRuleSet.contracts[0].melds[0].kindd",
        ),
    ]
    for path, body, token, named in cases:
        status, answer = _call(server, path, body, token)
        assert (status, answer["code"], answer["reason"]) == (
            400,
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
        ), answer
        assert answer["message"] == f"unknown field {named!r} in the body", answer
    assert _call(server, f"/v1/games/{game_id}")[1].get("version", "0") == "0"
