"""The play session's HTTP face: GET :play streams a seat's session as Server-Sent
Events, POST :play acts, and a session resumed with Last-Event-ID misses nothing.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import aiohttp
from google.protobuf import json_format

from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.play_support import choose
from tests.e2e.support import Env, Mirror, read_sse


async def test_http_play_session_sse_down_post_up(server: Env) -> None:
    """The HTTP face: GET :play streams the seat's session as SSE (snapshot, events with
    their cursors as ids, prompts), POST :play acts (its PlayResult, or the usual
    error body), and a session resumed with Last-Event-ID misses nothing."""
    game, joined = await server.new_game("whiskertrail", 2, b"play http")
    mirror = Mirror(PRESETS["whiskertrail"], 2, b"play http")
    seat = joined[mirror.state.current]
    auth = {"Authorization": f"Bearer {seat.token}"}
    path = f"/v1/games/{game.game_id}:play"
    seen: list[tuple[str, str, dict[str, object]]] = []
    async with aiohttp.ClientSession(server.http) as http:
        async with http.get(path, params={"after": "x"}, headers=auth) as refused:
            assert refused.status == 400
            assert set(await refused.json()) == {"code", "reason", "message"}
        async with http.get(path) as refused:
            assert refused.status == 401
        other = 1 - seat.seat
        async with http.get(path, params={"seat": str(other)}, headers=auth) as refused:
            assert refused.status == 403
            assert (await refused.json())["reason"] == "NOT_YOUR_SEAT"
        async with asyncio.timeout(20), http.get(path, headers=auth) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/event-stream")
            async for kind, ident, data in read_sse(response):
                seen.append((kind, ident, data))
                if kind != "prompt":
                    continue
                prompt = data["prompt"]
                assert isinstance(prompt, dict)
                version = int(prompt["version"])
                if version >= 2:
                    break
                legal = [convert.action_from_pb(pbify(a)) for a in prompt["legalActions"]]
                assert legal == mirror.state.legal_actions(seat.seat)
                view = json_format.ParseDict(prompt["view"], pb.View())
                legal_pb = [pbify(a) for a in prompt["legalActions"]]
                choice = choose(view, legal_pb, random.Random(1))
                body = {
                    "expectedVersion": str(version),
                    "requestId": f"http-{version}",
                    "action": json.loads(json_text(choice)),
                }
                async with http.post(path, json=body, headers=auth) as answer:
                    assert answer.status == 200, await answer.text()
                    result = await answer.json()
                    assert result["requestId"] == f"http-{version}"
                    assert int(result["version"]) == version + 1
                mirror.apply(seat.seat, convert.action_from_pb(choice))
                async with http.post(path, json=body | {"requestId": "late"}, headers=auth) as late:
                    assert late.status == 409
                    assert (await late.json())["reason"] == "STALE_VERSION"
        kinds = [k for k, _, _ in seen]
        assert kinds[0] == "snapshot" and seen[0][1] == "0"
        events = [(ident, data) for kind, ident, data in seen if kind == "event"]
        expected = [e for v in range(3) for e in mirror.expected_events(seat.seat, v)]
        assert [ident for ident, _ in events] == [e.cursor for e in expected]
        # resumed after the first event: the rest again, exactly
        got: list[str] = []
        async with (
            asyncio.timeout(10),
            http.get(path, headers={**auth, "Last-Event-ID": expected[0].cursor}) as again,
        ):
            async for kind, ident, _ in read_sse(again):
                if kind == "event":
                    got.append(ident)
                if len(got) == len(expected) - 1:
                    break
        assert got == [e.cursor for e in expected[1:]]


def pbify(data: Any) -> pb.Action:
    return json_format.ParseDict(data, pb.Action())


def json_text(action: pb.Action) -> str:
    return json_format.MessageToJson(action)
