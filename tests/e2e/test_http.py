"""The HTTP/JSON face: a short game over aiohttp, the OpenAPI document, SSE watches,
health and metrics."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import aiohttp
import openapi_spec_validator
from google.protobuf import json_format

from engine.cards import card, cards_from_codes
from engine.rulesets import PRESETS
from engine.solver import analyse
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from services.config import ServerOptions
from services.openapi import comments, http_rules
from tests.e2e.support import Env, Mirror, open_env, read_sse, sse_item, watching

PROTO = Path(__file__).resolve().parents[2] / "proto" / "glintwick" / "v1" / "game.proto"


def annotated_routes() -> dict[str, tuple[str, str, str]]:
    """RPC name → (verb, path, body) read from the proto's text (not from the server)."""
    text = PROTO.read_text()
    pattern = re.compile(
        r"rpc\s+(\w+)\s*\([^)]*\)\s*returns\s*\([^)]*\)\s*\{\s*"
        r'option\s*\(google\.api\.http\)\s*=\s*\{\s*(get|post|put|patch|delete)\s*:\s*"([^"]+)"'
        r'(?:\s*body\s*:\s*"([^"]*)")?'
    )
    return {m[1]: (m[2], m[3], m[4] or "") for m in pattern.finditer(text)}


class Http:
    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def __call__(
        self, verb: str, path: str, body: Any = None, token: str | None = None, **params: str
    ) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.request(
            verb, path, json=body, headers=headers, params=params or None
        ) as response:
            payload = await response.json()
            assert response.status == 200, (verb, path, response.status, payload)
            assert response.content_type == "application/json"
            return payload


async def test_a_short_game_over_http(server: Env) -> None:
    seed = b"over http"
    rules = PRESETS["whiskertrail"]
    mirror = Mirror(rules, 2, seed)
    async with aiohttp.ClientSession(server.http) as session:
        http = Http(session)
        presets = await http("GET", "/v1/rulesets")
        names = {r["name"]: r["hash"] for r in presets["ruleSets"]}
        assert names == {name: r.hash for name, r in PRESETS.items()}
        assert await http("GET", "/v1/ping") == {}

        created = await http(
            "POST",
            "/v1/games",
            {"ruleSetName": "whiskertrail", "seats": 2, "seed": seed.hex()},
        )
        game_id = created["gameId"]
        assert created["version"] == "0" and created["seats"] == 2
        assert created["ruleSet"]["hash"] == rules.hash
        first = await http("POST", f"/v1/games/{game_id}:join", {"seat": 0, "name": "ann"})
        second = await http("POST", f"/v1/games/{game_id}:join", {"name": "bob"})
        assert (first["seat"], second.get("seat", 0)) == (0, 1)
        tokens = [first["token"], second["token"]]
        game = await http("GET", f"/v1/games/{game_id}")
        assert [s["name"] for s in game["seatInfo"]] == ["ann", "bob"]
        assert all(s["joined"] for s in game["seatInfo"])

        spectator = await http("GET", f"/v1/games/{game_id}/view")
        assert "seat" not in spectator and spectator["hand"] == []
        views = [await http("GET", f"/v1/games/{game_id}/view", token=t) for t in tokens]
        for seat, view in enumerate(views):
            parsed = json_format.ParseDict(view, pb.View())
            assert parsed == mirror.expected_view(seat, 0, game_id)
        actor = views[0]["current"]

        # a watcher on SSE: a snapshot, then the events as they happen
        async def watch(token: str, wanted: int, **params: str) -> list[pb.WatchGameResponse]:
            got: list[pb.WatchGameResponse] = []
            headers = {"Authorization": f"Bearer {token}"}
            async with session.get(
                f"/v1/games/{game_id}:watch", headers=headers, params=params or None
            ) as response:
                assert response.status == 200
                assert response.headers["Content-Type"].startswith("text/event-stream")
                async for kind, _, data in read_sse(response):
                    got.append(sse_item(kind, data))
                    if sum(1 for g in got if g.HasField("event")) >= wanted:
                        break
            return got

        legal = await http("GET", f"/v1/games/{game_id}/legalActions", token=tokens[actor])
        assert legal["seat"] == actor and legal["version"] == "0"
        listed = [json_format.ParseDict(a, pb.Action()) for a in legal["actions"]]
        engine_legal = mirror.state.legal_actions(actor)
        assert [convert.action_from_pb(a) for a in listed] == engine_legal
        other = await http("GET", f"/v1/games/{game_id}/legalActions", token=tokens[1 - actor])
        assert other.get("actions", []) == []

        draw = {"draw": {"source": "DRAW_SOURCE_STOCK"}}
        checked = await http(
            "POST", f"/v1/games/{game_id}:validate", {"action": draw}, tokens[actor]
        )
        assert checked["legal"] and checked["version"] == "0"
        refused = await http(
            "POST", f"/v1/games/{game_id}:validate", {"action": draw}, tokens[1 - actor]
        )
        assert not refused["legal"] and refused["reason"] == "NOT_YOUR_TURN"

        # the deal (version 0: round_started, turn_started); drew; discarded,
        # turn_ended, turn_started
        watcher = asyncio.create_task(watch(tokens[actor], 6))
        await asyncio.sleep(0.2)
        submitted = await http(
            "POST",
            f"/v1/games/{game_id}:submit",
            {"expectedVersion": 0, "requestId": "http-1", "action": draw},
            tokens[actor],
        )
        assert submitted["version"] == "1"
        step = json_format.ParseDict(submitted, pb.SubmitActionResponse())
        mirror.apply(actor, convert.action_from_pb(json_format.ParseDict(draw, pb.Action())))
        assert list(step.events) == mirror.expected_events(actor, 1)
        # protobuf's JSON mapping: the payload under its type's case, camelCase, ints
        drew = submitted["events"][0]["drew"]
        assert drew["card"]["id"] == mirror.states[0].stock[0].id  # an integer in JSON
        assert drew["source"] == "DRAW_SOURCE_STOCK" and isinstance(drew["stockSize"], int)
        assert "data" not in submitted["events"][0]
        again = await http(
            "POST",
            f"/v1/games/{game_id}:submit",
            {"expectedVersion": 0, "requestId": "http-1", "action": draw},
            tokens[actor],
        )
        assert again == submitted  # the same request id: the first answer, nothing applied
        view = await http("GET", f"/v1/games/{game_id}/view", token=tokens[actor])
        last = view["hand"][-1]["id"]
        discard = {"discard": {"card": last}}
        await http(
            "POST",
            f"/v1/games/{game_id}:submit",
            {"expected_version": "1", "request_id": "http-2", "action": discard},
            tokens[actor],
        )
        mirror.apply(actor, convert.action_from_pb(json_format.ParseDict(discard, pb.Action())))
        items = await asyncio.wait_for(watcher, 10)
        assert items[0].HasField("snapshot") and items[0].snapshot.version == 0
        assert items[0].snapshot == mirror.expected_view(actor, 0, game_id)
        expected = [e for v in (0, 1, 2) for e in mirror.expected_events(actor, v)]
        assert [i.event for i in items[1:]] == expected
        assert items[1].event.type == pb.EVENT_TYPE_ROUND_STARTED
        assert items[1].event.round_started.commitment == items[0].snapshot.commitment
        # resuming: Last-Event-ID or from_version, no snapshot, only what came after
        resumed = await asyncio.wait_for(watch(tokens[1 - actor], 3, from_version="1"), 10)
        assert [i.event for i in resumed] == mirror.expected_events(1 - actor, 2)

        # the gRPC face sees the same game
        handle = server.client.seat(game_id, actor, tokens[actor])
        assert await handle.view() == mirror.expected_view(actor, 2, game_id)

        codes = ["7H", "7S", "7C", "9D", "9D", "9S", "2C", "KD", "QS", "4H"]
        analysis = await http(
            "POST", "/v1/analyse", {"ruleSetName": "whiskertrail", "round": 1, "hand": codes}
        )
        solved = analyse(cards_from_codes(codes, rules.decks, rules.jokers), rules, 1)
        assert solved.best is not None and solved.feasible
        assert analysis["feasible"] is True
        assert analysis["pointsLaid"] == solved.best.points
        assert [[c["code"] for c in m["cards"]] for m in analysis["melds"]] == [
            [c.code for c in m.cards] for m in solved.best.melds
        ]
        assert {m["kind"] for m in analysis["melds"]} == {"MELD_KIND_SET"}
        by_ids = await http(
            "POST", "/v1/analyse", {"ruleSetName": "whiskertrail", "round": 2, "handIds": [0, 1]}
        )
        short = analyse([card(0, 2), card(1, 2)], rules, 2)
        assert by_ids["feasible"] is False and not short.feasible
        assert by_ids["missing"] == short.missing
        assert sorted(by_ids["outs"]) == sorted(
            ("A23456789TJQK"[r - 1] + "CDHS"[u]) if r else "JK" for r, u in short.outs
        )

        health = await session.get("/healthz")
        assert health.status == 200 and (await health.json())["status"] == "SERVING"
        metrics = await session.get("/metrics")
        text = await metrics.text()
        assert 'glintwick_rpc_total{code="OK",face="http",method="SubmitAction"}' in text
        assert "glintwick_games_in_play" in text


async def test_openapi_document(server: Env) -> None:
    async with (
        aiohttp.ClientSession(server.http) as session,
        session.get("/openapi.json") as response,
    ):
        assert response.status == 200
        document = await response.json()
    assert str(document["openapi"]).startswith("3.")
    assert document["info"]["title"] and document["info"]["version"]
    routes = annotated_routes()
    assert len(routes) == 16  # every RPC but the stream
    for rpc, (verb, path, body) in routes.items():
        assert path in document["paths"], f"{rpc}: {path} missing"
        operation = document["paths"][path][verb]
        assert operation["operationId"] == rpc
        assert ("requestBody" in operation) == (body == "*"), rpc
        for name in re.findall(r"\{(\w+)\}", path):
            (parameter,) = [p for p in operation["parameters"] if p["name"] == name]
            assert parameter["in"] == "path" and parameter["required"] is True, rpc
            assert parameter["schema"]["type"] == "string", rpc
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert ok.startswith("#/components/schemas/glintwick.v1.")
    watch = document["paths"]["/v1/games/{game_id}:watch"]["get"]
    assert "text/event-stream" in watch["responses"]["200"]["content"]

    # every reference resolves inside the document
    refs: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                refs.append(item["$ref"])
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    walk(document)
    assert refs
    for ref in set(refs):
        assert ref.startswith("#/components/schemas/")
        assert ref.removeprefix("#/components/schemas/") in document["components"]["schemas"], ref
    view = document["components"]["schemas"]["glintwick.v1.View"]["properties"]
    assert {"gameId", "hand", "discardTop", "toAct"} <= set(view)


async def test_openapi_document_passes_the_validator(server: Env) -> None:
    async with (
        aiohttp.ClientSession(server.http) as session,
        session.get("/openapi.json") as response,
    ):
        document = await response.json()
    openapi_spec_validator.validate(document)


async def watchers_gauge(session: aiohttp.ClientSession) -> float:
    async with session.get("/metrics") as response:
        text = await response.text()
    found = re.search(r"^glintwick_watchers (\S+)$", text, re.MULTILINE)
    assert found, "the watchers gauge is exported"
    return float(found[1])


async def test_sse_watchers_end_with_their_client_and_with_the_server() -> None:
    """An idle SSE watch whose client went away is ended (it does not linger until the
    game moves), and a server with an SSE client attached still stops promptly."""
    env = await open_env(ServerOptions(store="memory"), "memory")
    stopped = False
    try:
        game, joined = await env.new_game("whiskertrail", 2, b"sse")
        path = f"/v1/games/{game.game_id}:watch"
        headers = {"Authorization": f"Bearer {joined[0].token}"}
        async with aiohttp.ClientSession(env.http) as session:
            idle = await watchers_gauge(session)
            async with session.get(path, headers=headers) as response:
                first = await anext(read_sse(response))
                assert first[0] == "snapshot"
                assert await watchers_gauge(session) == idle + 1
            # the client is gone: the server notices within a few seconds
            for _ in range(50):
                if await watchers_gauge(session) == idle:
                    break
                await asyncio.sleep(0.1)
            assert await watchers_gauge(session) == idle

            async with session.get(path, headers=headers) as response:
                items = read_sse(response)
                assert (await anext(items))[0] == "snapshot"
                async with watching(env.client.watch(game.game_id)) as grpc_watch:
                    assert (await anext(grpc_watch)).HasField("snapshot")
                    started = time.monotonic()
                    await env.running.stop(grace=0.5)
                    stopped = True
                assert time.monotonic() - started < 5, "stopping waited for the SSE watcher"
                rest = [item async for item in items]  # the stream ended
                # after the snapshot at version 0 came version 0's events, no more
                assert [data["type"] for _, _, data in rest] == [
                    "EVENT_TYPE_ROUND_STARTED",
                    "EVENT_TYPE_TURN_STARTED",
                ]
    finally:
        await env.client.close()
        if not stopped:
            await env.running.stop(grace=0.5)


async def test_openapi_document_carries_the_proto_s_comments_and_types(server: Env) -> None:
    """Issue 14: descriptions from the proto's comments, oneof as oneOf, integer formats
    and ranges, 64-bit integers as strings, enums by name, required output fields."""
    async with (
        aiohttp.ClientSession(server.http) as session,
        session.get("/openapi.json") as response,
    ):
        document = await response.json()
    schemas = document["components"]["schemas"]
    known = comments()
    assert len(known) > 50, "the descriptor set with source info is read"
    # every commented RPC, message and field of the document has its comment
    for verb, path, _, method in http_rules():
        operation = document["paths"][path][verb.lower()]
        if method.full_name in known:
            assert operation["description"].startswith(known[method.full_name]), method.name
    checked = 0
    for name, schema in schemas.items():
        full = name.removesuffix(".Input")
        if full not in known and not any(k.startswith(full + ".") for k in known):
            continue
        if full in known:
            assert schema["description"].startswith(known[full]), name
            checked += 1
        message = pb.DESCRIPTOR.message_types_by_name.get(full.removeprefix("glintwick.v1."))
        for field in message.fields if message else ():
            if field.full_name in known:
                text = schema["properties"][field.json_name]["description"]
                assert text.startswith(known[field.full_name]), field.full_name
                checked += 1
    assert checked > 30
    # a oneof: at most one member (both at once match two alternatives of oneOf)
    action = schemas["glintwick.v1.Action.Input"]
    members = {"draw", "discard", "layContract"}
    assert {m for a in action["oneOf"] for m in a.get("required", [])} >= members
    assert len(action["oneOf"]) == len(pb.Action.DESCRIPTOR.oneofs_by_name["kind"].fields) + 1
    # integers: ranges, and 64-bit ones as strings of digits
    event = schemas["glintwick.v1.Event"]["properties"]
    assert event["index"] == {
        "type": "integer",
        "format": "uint32",
        "minimum": 0,
        "maximum": 4294967295,
        "description": known["glintwick.v1.Event.index"],
    }
    assert event["version"]["type"] == "string" and event["version"]["pattern"] == "^[0-9]{1,20}$"
    scores = schemas["glintwick.v1.Replay"]["properties"]["scores"]["items"]
    assert (scores["minimum"], scores["maximum"]) == (-(2**31), 2**31 - 1)
    kind = schemas["glintwick.v1.MeldRequirement"]["properties"]["kind"]
    assert kind["enum"] == ["MELD_KIND_UNSPECIFIED", "MELD_KIND_SET", "MELD_KIND_RUN"]
    # what the server always writes is required in a response, never in a request
    assert {"version", "type", "index", "cursor"} <= set(schemas["glintwick.v1.Event"]["required"])
    assert "seat" not in schemas["glintwick.v1.Event"]["required"]  # optional: absent for none
    assert "required" not in schemas["glintwick.v1.RuleSet.Input"]
    assert schemas["glintwick.v1.Event"]["additionalProperties"] is False
    # the SSE watch: its events' shape
    watch = document["paths"]["/v1/games/{game_id}:watch"]["get"]
    sse = watch["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert [a["properties"]["event"]["enum"] for a in sse["oneOf"]] == [["snapshot"], ["event"]]
    # the documented string lengths (GetLimits' numbers)
    answer = await server.client.limits()
    join = schemas["glintwick.v1.JoinGameRequest"]["properties"]["name"]
    assert join["maxLength"] == answer.player_name_length
    game_id = document["paths"]["/v1/games/{game_id}"]["get"]["parameters"][0]["schema"]
    assert (game_id["minLength"], game_id["maxLength"]) == (1, answer.game_id_length.max)
    limits = document["paths"]["/v1/limits"]["get"]
    assert limits["operationId"] == "GetLimits" and "limit" in limits["description"]
