"""Closed sets are enums, seats are uint32 (API 0.3.0): a view's phase, an event's type,
why a round ended, a claim's answer and a rule set's stalemate read as the enums of
``proto/``, over gRPC (a client compiled from proto/ at test time:
tests/support/outsider.py) and over HTTP (their value names in JSON, as the OpenAPI
document types them); a meld's owner is a seat, absent when nobody laid it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from engine.game import arrange_deck
from engine.rulesets import CONTRACT, WHISKERTRAIL
from tests.support.outsider import OutsiderApi, OutsiderClient, Served

#: each closed set: the field that holds it, and its enum in proto/
ENUM_FIELDS = {
    "glintwick.v1.View.phase": "glintwick.v1.Phase",
    "glintwick.v1.Event.type": "glintwick.v1.EventType",
    "glintwick.v1.RoundEndedEvent.reason": "glintwick.v1.RoundEndReason",
    "glintwick.v1.ClaimAnswerInfo.answer": "glintwick.v1.ClaimAnswer",
    "glintwick.v1.RuleSet.stalemate": "glintwick.v1.Stalemate",
}


def _field(api: OutsiderApi, full_name: str) -> FieldDescriptor:
    message, _, name = full_name.rpartition(".")
    return api.descriptor(message).fields_by_name[name]


def test_each_closed_set_is_an_enum_of_the_proto(api: OutsiderApi) -> None:
    for name, enum in ENUM_FIELDS.items():
        field = _field(api, name)
        assert field.enum_type is not None, f"{name} is no enum"
        assert field.enum_type.full_name == enum
        assert field.enum_type.values[0].name.endswith("_UNSPECIFIED")
    owner = _field(api, "glintwick.v1.Meld.owner")
    assert owner.type == FieldDescriptor.TYPE_UINT32 and owner.has_presence


class Table:
    """A game of the outsider's, its seats joined: its tokens by seat."""

    def __init__(self, client: OutsiderClient, game: Mapping[str, Any], seats: int) -> None:
        self.client = client
        self.game_id = str(client.call("CreateGame", game).game_id)  # type: ignore[attr-defined]
        self.tokens: dict[int, str] = {}
        for _ in range(seats):
            joined = client.call("JoinGame", {"gameId": self.game_id})
            self.tokens[joined.seat] = joined.token  # type: ignore[attr-defined]

    def view(self, seat: int = 0) -> Any:
        return self.client.call("GetView", {"gameId": self.game_id}, token=self.tokens[seat])

    def act(self, seat: int, version: int, action: Mapping[str, Any]) -> Any:
        request = {"gameId": self.game_id, "expectedVersion": version, "action": action}
        return self.client.call("SubmitAction", request, token=self.tokens[seat])

    def name(self, enum: str, number: int) -> str:
        return self.client.api.value_name(enum, number)

    def types(self, response: Any) -> list[str]:
        """The response's events' types, each checked to name its payload's case."""
        names = [self.name("glintwick.v1.EventType", e.type) for e in response.events]
        for event, name in zip(response.events, names, strict=True):
            assert event.WhichOneof("payload") == name.removeprefix("EVENT_TYPE_").lower()
        return names


def test_a_view_s_phase_and_an_event_s_type(client: OutsiderClient) -> None:
    table = Table(client, {"ruleSetName": "whiskertrail", "seats": 2}, 2)
    view = table.view()
    assert table.name("glintwick.v1.Phase", view.phase) == "PHASE_DRAW"
    current = view.current
    drew = table.act(current, view.version, {"draw": {}})
    assert table.types(drew) == ["EVENT_TYPE_DREW"]
    assert table.name("glintwick.v1.Phase", table.view(current).phase) == "PHASE_PLAY"


def test_a_claim_window_s_answers(client: OutsiderClient) -> None:
    table = Table(client, {"ruleSetName": "contract", "seats": 4}, 4)
    view = table.view()
    seat = view.current
    drew = table.act(seat, view.version, {"draw": {}})
    hand = table.view(seat).hand
    discarded = table.act(seat, drew.version, {"discard": {"card": hand[0].id}})
    assert {"EVENT_TYPE_DISCARDED", "EVENT_TYPE_CLAIM_WINDOW_OPENED"} <= set(table.types(discarded))
    window = table.view(seat)
    assert table.name("glintwick.v1.Phase", window.phase) == "PHASE_CLAIM"
    answers = {
        a.seat: table.name("glintwick.v1.ClaimAnswer", a.answer) for a in window.claim.answers
    }
    assert set(answers.values()) == {"CLAIM_ANSWER_UNSPECIFIED"}, answers
    passing = window.to_act[-1]
    passed = table.act(passing, discarded.version, {"passClaim": {}})
    assert table.types(passed)[0] == "EVENT_TYPE_CLAIM_ANSWERED"
    after = table.view(seat)
    answers = {
        a.seat: table.name("glintwick.v1.ClaimAnswer", a.answer) for a in after.claim.answers
    }
    assert answers.pop(passing) == "CLAIM_ANSWER_PASS"
    assert set(answers.values()) == {"CLAIM_ANSWER_UNSPECIFIED"}, answers


def _short_rules(api: OutsiderApi, client: OutsiderClient) -> dict[str, Any]:
    """whiskertrail's first round alone, over after one completed turn (its turn cap)."""
    presets = client.call("ListRuleSets").rule_sets  # type: ignore[attr-defined]
    whiskertrail = api.plain(next(r for r in presets if r.name == "whiskertrail"))
    assert whiskertrail["stalemate"] == "STALEMATE_EXHAUSTIONS"
    del whiskertrail["hash"]
    return {
        **whiskertrail,
        "name": "one-turn",
        "contracts": whiskertrail["contracts"][:1],
        "turnCap": 1,
    }


def test_a_round_s_end_says_why_and_a_rule_set_its_stalemate(client: OutsiderClient) -> None:
    rules = _short_rules(client.api, client)
    table = Table(client, {"customRuleSet": rules, "seats": 2}, 2)
    game = client.call("GetGame", {"gameId": table.game_id})
    stalemate = game.rule_set.stalemate  # type: ignore[attr-defined]
    assert table.name("glintwick.v1.Stalemate", stalemate) == "STALEMATE_EXHAUSTIONS"
    view = table.view()
    seat = view.current
    drew = table.act(seat, view.version, {"draw": {}})
    card = table.view(seat).hand[0].id
    ended = table.act(seat, drew.version, {"discard": {"card": card}})
    types = table.types(ended)
    assert types[-2:] == ["EVENT_TYPE_ROUND_ENDED", "EVENT_TYPE_GAME_ENDED"], types
    reason = ended.events[-2].round_ended.reason
    assert table.name("glintwick.v1.RoundEndReason", reason) == "ROUND_END_REASON_TURN_CAP"
    assert table.name("glintwick.v1.Phase", table.view(seat).phase) == "PHASE_GAME_OVER"
    # a rule set says how its rounds end, or it is refused
    unsaid = {**rules, "stalemate": "STALEMATE_UNSPECIFIED"}
    refusal = client.refused("CreateGame", {"customRuleSet": unsaid, "seats": 2})
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_RULE_SET")


def test_a_meld_s_owner_is_a_seat(client: OutsiderClient, server: Served) -> None:
    # an analysed meld was laid by nobody: it has no owner
    analysed = client.call("AnalyseHand", {
        "ruleSetName": "whiskertrail", "round": 1,
        "hand": ["AC", "AD", "AH", "2C", "2D", "2H", "9S"],
    })  # fmt: skip
    assert analysed.feasible and len(analysed.melds) == 2  # type: ignore[attr-defined]
    assert not any(m.HasField("owner") for m in analysed.melds)  # type: ignore[attr-defined]
    # seat 0 dealt two sets lays them: the melds are its own (seat 0, present)
    hands = [
        ["AC", "AD", "AH", "2C", "2D", "2H", "3C", "4C", "5C", "6C"],
        ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"],
    ]
    order = arrange_deck(WHISKERTRAIL, 2, 1, hands, upcard="KD", stock=["QH"])
    created = client.call(
        "CreateGameFromDeck",
        {
            "game": {"ruleSetName": "whiskertrail", "seats": 2},
            "decks": [{"round": 1, "cards": order}],
        },
        token=server.operator_token,
    )
    game_id = created.game_id  # type: ignore[attr-defined]
    tokens = [client.call("JoinGame", {"gameId": game_id, "seat": s}).token for s in range(2)]  # type: ignore[attr-defined]
    act = {"gameId": game_id, "expectedVersion": 0, "action": {"draw": {}}}
    client.call("SubmitAction", act, token=tokens[0])
    laid = client.call(
        "SubmitAction",
        {**act, "expectedVersion": 1, "action": {"layContract": {}}},
        token=tokens[0],
    )
    melds = laid.events[0].laid_contract.melds  # type: ignore[attr-defined]
    assert len(melds) == 2 and all(m.HasField("owner") and m.owner == 0 for m in melds)
    table = client.call("GetView", {"gameId": game_id}, token=tokens[1]).table  # type: ignore[attr-defined]
    assert [(m.HasField("owner"), m.owner) for m in table] == [(True, 0), (True, 0)]


def test_a_dead_round_ends_at_once_and_says_so(client: OutsiderClient, server: Served) -> None:
    """contract round 1 dealt so that every seat lays two groups of four: when the last
    seat lays its contract, every seat is open and every meld full, and the round ends
    there, before that seat discards (ROUND_END_REASON_DEAD; docs/RULES.md, rule 6)."""
    groups = ["7", "8"], ["9", "T"], ["J", "Q"], ["K", "A"]
    loose = [["2C", "3D"], ["2D", "3H"], ["2H", "3S"], ["2S", "4C"]]
    hands = [
        [r + s for r in ranks for s in "CDHS"] + extra
        for ranks, extra in zip(groups, loose, strict=True)
    ]
    stock = ["5C", "5D", "5H", "5S"]
    order = arrange_deck(CONTRACT, 4, 1, hands, stock=stock)
    created = client.call(
        "CreateGameFromDeck",
        {"game": {"ruleSetName": "contract", "seats": 4}, "decks": [{"round": 1, "cards": order}]},
        token=server.operator_token,
    )
    game_id = created.game_id  # type: ignore[attr-defined]
    table = Table.__new__(Table)
    table.client, table.game_id = client, game_id
    table.tokens = {
        s: client.call("JoinGame", {"gameId": game_id, "seat": s}).token  # type: ignore[attr-defined]
        for s in range(4)
    }
    version = 0
    view = table.view(0)
    assert (view.turns_completed, view.turn_cap) == (0, 200) and view.HasField("turn_cap")
    for seat in range(4):
        version = table.act(seat, version, {"draw": {}}).version
        laid = table.act(seat, version, {"layContract": {}})
        version = laid.version
        if seat == 3:
            break
        drawn = stock[seat]
        card = next(c.id for c in table.view(seat).hand if c.code == drawn)
        version = table.act(seat, version, {"discard": {"card": card}}).version
        for other in [s for s in range(4) if s != seat]:
            version = table.act(other, version, {"passClaim": {}}).version
    types = table.types(laid)
    assert types[:2] == ["EVENT_TYPE_LAID_CONTRACT", "EVENT_TYPE_ROUND_ENDED"], types
    ended = laid.events[1].round_ended
    assert table.name("glintwick.v1.RoundEndReason", ended.reason) == "ROUND_END_REASON_DEAD"
    assert not laid.events[1].HasField("seat")  # nobody went out
    # every hand scored as it stands: seat 3 kept its three cards, no discard made
    assert list(ended.penalties) == [5, 5, 5, 2 + 4 + 5]
    after = table.view(0)
    assert (after.round, after.turns_completed, len(after.table)) == (2, 0, 0)


# ------------------------------------------------------------------ HTTP


def _http(server: Served, method: str, path: str, body: Any = None, token: str = "") -> Any:
    """A JSON call of the HTTP face: (status, body)."""
    request = urllib.request.Request(
        server.http + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_the_http_face_writes_the_value_names(api: OutsiderApi, server: Served) -> None:
    with OutsiderClient(api, server.grpc_target) as client:
        rules = _short_rules(api, client)
    status, game = _http(server, "POST", "/v1/games", {"customRuleSet": rules, "seats": 2})
    assert status == 200, game
    assert game["ruleSet"]["stalemate"] == "STALEMATE_EXHAUSTIONS"
    path = f"/v1/games/{game['gameId']}"
    tokens = {}
    for _ in range(2):
        status, joined = _http(server, "POST", f"{path}:join", {})
        tokens[joined["seat"]] = joined["token"]
    _, view = _http(server, "GET", f"{path}/view", token=tokens[0])
    assert view["phase"] == "PHASE_DRAW"
    seat = view["current"]
    submit = {"expectedVersion": view["version"], "action": {"draw": {}}}
    status, drew = _http(server, "POST", f"{path}:submit", submit, tokens[seat])
    assert status == 200 and [e["type"] for e in drew["events"]] == ["EVENT_TYPE_DREW"], drew
    _, view = _http(server, "GET", f"{path}/view", token=tokens[seat])
    assert view["phase"] == "PHASE_PLAY"
    discard = {
        "expectedVersion": drew["version"],
        "action": {"discard": {"card": view["hand"][0]["id"]}},
    }
    status, ended = _http(server, "POST", f"{path}:submit", discard, tokens[seat])
    assert status == 200, ended
    round_ended = next(e for e in ended["events"] if e["type"] == "EVENT_TYPE_ROUND_ENDED")
    assert round_ended["roundEnded"]["reason"] == "ROUND_END_REASON_TURN_CAP"
    _, presets = _http(server, "GET", "/v1/rulesets")
    assert {r["stalemate"] for r in presets["ruleSets"]} == {
        "STALEMATE_EXHAUSTIONS",
        "STALEMATE_DRY",
    }
    # an analysed meld has no owner; the engine's old names are no value of the enums
    hand = {"ruleSetName": "whiskertrail", "round": 1, "hand": ["AC", "AD", "AH", "2C", "2D", "2H"]}
    _, analysed = _http(server, "POST", "/v1/analyse", hand)
    assert analysed["melds"] and all("owner" not in m for m in analysed["melds"])
    status, refused = _http(
        server, "POST", "/v1/games", {"customRuleSet": {**rules, "stalemate": "dry"}, "seats": 2}
    )
    assert (status, refused["reason"]) == (400, "INVALID_ARGUMENT"), refused


def _scalar_fields(descriptor: Descriptor) -> Iterator[FieldDescriptor]:
    for field in descriptor.fields:
        if field.message_type is None:
            yield field


#: the format each integer type of proto3 is documented with
FORMATS = {
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_SINT32: "int32",
    FieldDescriptor.TYPE_UINT32: "uint32",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_UINT64: "uint64",
}


def test_the_openapi_document_types_them(api: OutsiderApi, server: Served) -> None:
    _, document = _http(server, "GET", "/openapi.json")
    schemas = document["components"]["schemas"]
    for name, enum in ENUM_FIELDS.items():
        message = name.rpartition(".")[0]
        prop = schemas[message]["properties"][_field(api, name).json_name]
        assert prop["enum"] == [v.name for v in api.enum(enum).values], name
    # an error's reason is one of errors.proto's, less the prefix
    reasons = [
        v.name.removeprefix("ERROR_REASON_") for v in api.enum("glintwick.v1.ErrorReason").values
    ]
    assert schemas["Error"]["properties"]["reason"]["enum"] == reasons[1:]
    assert "STALE_VERSION" in schemas["glintwick.v1.PlayError"]["properties"]["reason"]["enum"]
    # every integer of every message says its own type (a seat: uint32, never int64)
    checked = 0
    for schema_name, schema in schemas.items():
        if not schema_name.startswith("glintwick.v1."):
            continue
        descriptor = api.descriptor(schema_name.removesuffix(".Input"))
        for field in _scalar_fields(descriptor):
            if field.type not in FORMATS:
                continue
            prop = schema["properties"][field.json_name]
            prop = prop.get("items", prop) if field.is_repeated else prop
            assert prop["format"] == FORMATS[field.type], (schema_name, field.name, prop)
            checked += 1
    assert checked > 100
    assert "owner" not in schemas["glintwick.v1.Meld"]["required"]  # absent: laid by nobody
