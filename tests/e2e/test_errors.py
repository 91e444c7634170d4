"""Every kind of bad request gets its status and reason, on gRPC and on HTTP, and never
UNKNOWN or INTERNAL; a refused request changes nothing."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import aiohttp
import grpc
import pytest

from clients.sdk import CallError, Seat, actions
from engine.rulesets import PRESETS
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from tests.e2e.conftest import StartServer
from tests.e2e.support import OPERATOR_TOKEN, Env

Code = grpc.StatusCode
HTTP = {
    Code.INVALID_ARGUMENT: 400,
    Code.FAILED_PRECONDITION: 409,
    Code.ABORTED: 409,
    Code.NOT_FOUND: 404,
    Code.UNAUTHENTICATED: 401,
    Code.PERMISSION_DENIED: 403,
    Code.RESOURCE_EXHAUSTED: 429,
}


async def refused(call: Awaitable[Any]) -> CallError:
    with pytest.raises(CallError) as caught:
        await call
    error = caught.value
    assert error.code not in (Code.UNKNOWN, Code.INTERNAL), error
    return error


async def expect(call: Awaitable[Any], code: Code, reason: str | None = None) -> CallError:
    error = await refused(call)
    assert error.code is code, error
    assert error.reason, "every refusal carries an ErrorInfo reason"
    if reason is not None:
        assert error.reason == reason, error
    return error


@dataclass
class Table:
    """A 2-seat whiskertrail game at its first draw."""

    game: pb.Game
    seats: list[Seat]
    actor: Seat
    idle: Seat

    @property
    def game_id(self) -> str:
        return self.game.game_id


async def table(env: Env, seed: bytes = b"errors") -> Table:
    game, seats = await env.new_game("whiskertrail", 2, seed)
    current = (await seats[0].view()).current
    return Table(game, seats, seats[current], seats[1 - current])


def submit(seat: Seat, action: pb.Action, version: int, request_id: str = "") -> Any:
    request = pb.SubmitActionRequest(
        game_id=seat.game_id, expected_version=version, request_id=request_id, action=action
    )
    return seat.client.call(seat.client.stub.SubmitAction, request, seat.token, retry_on=())


def meld(kind: int, cards: list[int], start: int | None = None) -> pb.MeldSpec:
    spec = pb.MeldSpec(kind=kind, cards=cards)  # type: ignore[arg-type]
    if start is not None:
        spec.start = start
    return spec


async def snapshot(t: Table) -> list[pb.View]:
    return [await s.view() for s in t.seats]


# --------------------------------------------------------------------------- gRPC


async def test_malformed_actions_are_invalid_argument(server: Env) -> None:
    t = await table(server)
    await t.actor.act(actions.draw(), expected_version=0)
    before = await snapshot(t)
    hand = [c.id for c in before[t.actor.seat].hand]
    set_ = pb.MELD_KIND_SET
    malformed = {
        "empty oneof": pb.Action(),
        "unknown card id": actions.discard(9999),
        "unknown card id in a lay-off": actions.lay_off(1 << 20, 0),
        "meld with no cards": pb.Action(extra_meld=pb.ExtraMeld(meld=meld(set_, []))),
        "extra meld without its meld": pb.Action(extra_meld=pb.ExtraMeld()),
        "duplicate card in a meld": pb.Action(
            extra_meld=pb.ExtraMeld(meld=meld(set_, [hand[0], hand[0], hand[1]]))
        ),
        "meld without a kind": pb.Action(
            lay_contract=pb.LayContract(melds=[meld(pb.MELD_KIND_UNSPECIFIED, hand[:3])])
        ),
        "run start out of range": pb.Action(
            extra_meld=pb.ExtraMeld(meld=meld(pb.MELD_KIND_RUN, hand[:4], start=15))
        ),
        "unknown draw source": pb.Action(draw=pb.Draw(source=7)),  # type: ignore[arg-type]
        "unknown run end": pb.Action(
            lay_off=pb.LayOff(card=hand[0], meld=0, end=9)  # type: ignore[arg-type]
        ),
    }
    for what, action in malformed.items():
        error = await expect(submit(t.actor, action, 1), Code.INVALID_ARGUMENT)
        assert error.message, what
        validated = await refused(t.actor.validate(action))
        assert validated.code is Code.INVALID_ARGUMENT, what
    assert await snapshot(t) == before


async def test_bad_games_and_analyses_are_invalid_argument(server: Env) -> None:
    client = server.client
    await expect(client.create_game("no-such-rules"), Code.INVALID_ARGUMENT, "UNKNOWN_RULE_SET")
    for rules, seats in (("whiskertrail", 1), ("whiskertrail", 5), ("contract", 3)):
        await expect(
            client.create_game(rules, seats=seats), Code.INVALID_ARGUMENT, "BAD_SEAT_COUNT"
        )
    custom = convert.rules_to_pb(PRESETS["whiskertrail"])
    broken = {
        "no contracts": pb.RuleSet(name="empty"),
        "more min than max players": _edit(custom, min_players=5),
        "no decks": _edit(custom, decks=0),
        "a contract meld without a kind": _edit(
            custom,
            contracts=[
                pb.Contract(name="c", deal=10, melds=[pb.MeldRequirement(size=3)], discards=True)
            ],
        ),
    }
    for what, custom_rules in broken.items():
        error = await expect(client.create_game(custom_rules, seats=2), Code.INVALID_ARGUMENT)
        assert error.reason == "INVALID_RULE_SET", what
    # a valid custom rule set is accepted (so the refusals above are about the fields)
    assert (await client.create_game(custom, seats=2)).rule_set.hash == custom.hash
    # a seed is lowercase hex of at most 64 bytes (docs/API.md, "Seeds")
    for seed in ("ab" * 65, "abc", "ABCD", "0x12", "zz", "ab cd"):
        error = await expect(client.create_game(seed=seed), Code.INVALID_ARGUMENT)
        assert error.reason == "INVALID_SEED", seed
    await expect(client.create_game(seed=b"x" * 65), Code.INVALID_ARGUMENT)
    # the SDK sends bytes as their hex: the same seed either way deals the same game
    by_bytes = await client.create_game(seed=b"\x00\xff", seats=2)
    by_hex = await client.create_game(seed="00ff", seats=2)
    dealt = [(await client.spectate(g.game_id)).commitment for g in (by_bytes, by_hex)]
    assert dealt[0] == dealt[1] != ""
    await expect(client.create_game(seats=2, bots={7: "random"}), Code.INVALID_ARGUMENT)

    too_long = [rank + suit for rank in "A23456789TJQK" for suit in "CDHS"][:31]
    await expect(client.analyse("whiskertrail", 1, too_long), Code.INVALID_ARGUMENT)
    await expect(client.analyse("whiskertrail", 1, list(range(31))), Code.INVALID_ARGUMENT)
    await expect(client.analyse("whiskertrail", 1, ["ZZ", "AC"]), Code.INVALID_ARGUMENT)
    await expect(client.analyse("whiskertrail", 1, [5000]), Code.INVALID_ARGUMENT)
    await expect(client.analyse("whiskertrail", 1, [3, 3]), Code.INVALID_ARGUMENT)
    await expect(client.analyse("whiskertrail", 0, ["AC"]), Code.INVALID_ARGUMENT)
    await expect(client.analyse("whiskertrail", 9, ["AC"]), Code.INVALID_ARGUMENT)
    await expect(client.analyse("nope", 1, ["AC"]), Code.INVALID_ARGUMENT, "UNKNOWN_RULE_SET")
    both = pb.AnalyseHandRequest(rule_set_name="whiskertrail", round=1, hand=["AC"], hand_ids=[1])
    await expect(client.call(client.stub.AnalyseHand, both), Code.INVALID_ARGUMENT)
    answer = await client.analyse("whiskertrail", 1, too_long[:30])
    assert answer.feasible


def _edit(rules: pb.RuleSet, **fields: Any) -> pb.RuleSet:
    edited = pb.RuleSet()
    edited.CopyFrom(rules)
    for name, value in fields.items():
        if isinstance(value, list):
            edited.ClearField(name)  # type: ignore[arg-type]
            getattr(edited, name).extend(value)
        else:
            setattr(edited, name, value)
    edited.hash = ""
    return edited


async def test_rule_refusals_are_failed_precondition_and_change_nothing(server: Env) -> None:
    t = await table(server)
    before = await snapshot(t)
    spectator = await server.client.spectate(t.game_id)
    idle_card = before[t.idle.seat].hand[0].id
    actor_card = before[t.actor.seat].hand[0].id
    cases: list[tuple[Seat, pb.Action, str]] = [
        (t.idle, actions.draw(), "NOT_YOUR_TURN"),
        (t.idle, actions.discard(idle_card), "NOT_YOUR_TURN"),
        (t.actor, actions.discard(actor_card), "MUST_DRAW_FIRST"),
        (t.actor, actions.lay_contract(), "MUST_DRAW_FIRST"),
        (t.actor, actions.claim(), "NO_CLAIM_WINDOW"),
        (t.actor, actions.end_turn(), "MUST_DRAW_FIRST"),
    ]
    for seat, action, reason in cases:
        await expect(submit(seat, action, 0), Code.FAILED_PRECONDITION, reason)
        check = await seat.validate(action)
        assert not check.legal and check.reason == reason and check.version == 0
    assert await snapshot(t) == before
    assert await server.client.spectate(t.game_id) == spectator
    await t.actor.act(actions.draw(), expected_version=0)
    middle = await snapshot(t)
    cases = [
        (t.actor, actions.draw(), "ALREADY_DREW"),
        (t.actor, actions.discard(idle_card), "CARD_NOT_IN_HAND"),
        (t.actor, actions.lay_off(actor_card, 0), "NOT_OPEN"),
        (t.actor, actions.end_turn(), "END_TURN_NOT_ALLOWED"),
        (t.actor, actions.swap_joker(actor_card, 0), "SWAP_NOT_ALLOWED"),
    ]
    for seat, action, reason in cases:
        await expect(submit(seat, action, 1), Code.FAILED_PRECONDITION, reason)
        assert (await seat.validate(action)).reason == reason
    assert await snapshot(t) == middle
    assert [v.version for v in middle] == [1, 1]
    assert (await server.client.spectate(t.game_id)).version == spectator.version + 1
    assert (await t.actor.validate(actions.discard(actor_card))).legal
    await expect(server.client.replay(t.game_id), Code.FAILED_PRECONDITION, "GAME_NOT_FINISHED")
    await expect(server.client.join(t.game_id, seat=0), Code.FAILED_PRECONDITION, "SEAT_TAKEN")
    await expect(server.client.join(t.game_id), Code.FAILED_PRECONDITION, "GAME_FULL")
    await expect(server.client.join(t.game_id, seat=2), Code.INVALID_ARGUMENT, "NO_SUCH_SEAT")


async def test_stale_version_is_aborted(server: Env) -> None:
    t = await table(server)
    await t.actor.act(actions.draw(), expected_version=0)
    hand = (await t.actor.view()).hand
    for version in (0, 2, 1000):
        error = await expect(
            submit(t.actor, actions.discard(hand[0].id), version), Code.ABORTED, "STALE_VERSION"
        )
        assert "version 1" in error.message
    assert (await t.actor.view()).version == 1
    # the SDK retries a stale version it chose itself (and then it lands)
    t.actor.version = 0
    response = await t.actor.act(actions.discard(hand[0].id))
    assert response.version == 2


async def test_unknown_game_is_not_found(server: Env) -> None:
    client = server.client
    missing = "0123456789abcdef"
    seat = client.seat(missing, 0, "some-token")
    calls: list[Awaitable[Any]] = [
        client.game(missing),
        client.join(missing),
        client.spectate(missing),
        client.replay(missing),
        seat.view(),
        seat.legal_actions(),
        seat.validate(actions.draw()),
        submit(seat, actions.draw(), 0),
    ]
    for call in calls:
        await expect(call, Code.NOT_FOUND, "GAME_NOT_FOUND")
    with pytest.raises(CallError) as watched:
        async with asyncio.timeout(10):
            async for _ in client.watch(missing):
                pass
    assert watched.value.code is Code.NOT_FOUND
    await expect(client.game("x" * 65), Code.INVALID_ARGUMENT)
    await expect(client.game(""), Code.INVALID_ARGUMENT)


async def test_missing_or_bad_tokens_are_unauthenticated(server: Env) -> None:
    t = await table(server)
    other_game, other_seats = await server.new_game("whiskertrail", 2, b"other")
    client = server.client
    before = await snapshot(t)
    for token in ("", "not-a-token", other_seats[0].token):
        stranger = client.seat(t.game_id, t.actor.seat, token)
        for call in (
            stranger.legal_actions(),
            stranger.validate(actions.draw()),
            submit(stranger, actions.draw(), 0),
        ):
            await expect(call, Code.UNAUTHENTICATED, "BAD_TOKEN")
    for token in ("not-a-token", other_seats[0].token):
        await expect(client.seat(t.game_id, 0, token).view(), Code.UNAUTHENTICATED, "BAD_TOKEN")
    # without a token a view is a spectator's
    assert not (await client.spectate(t.game_id)).HasField("seat")
    assert await snapshot(t) == before
    assert other_game.game_id != t.game_id


async def test_explicit_decks_need_the_operator(start_server: StartServer) -> None:
    with_operator = await start_server("memory")
    without = await start_server("memory", operator_token="")
    order = list(range(PRESETS["whiskertrail"].deck_size))
    for token in ("", "wrong"):
        await expect(
            with_operator.client.create_game_from_deck({1: order}, token, seats=2),
            Code.UNAUTHENTICATED,
        )
    await expect(
        without.client.create_game_from_deck({1: order}, OPERATOR_TOKEN, seats=2),
        Code.PERMISSION_DENIED,
        "OPERATOR_DISABLED",
    )
    await expect(
        with_operator.client.create_game_from_deck({}, OPERATOR_TOKEN, seats=2),
        Code.INVALID_ARGUMENT,
    )
    await expect(
        with_operator.client.create_game_from_deck({1: order[:-1]}, OPERATOR_TOKEN, seats=2),
        Code.INVALID_ARGUMENT,
        "INVALID_DECK",
    )
    game = await with_operator.client.create_game_from_deck({1: order}, OPERATOR_TOKEN, seats=2)
    assert game.arranged


async def test_rate_limit_is_resource_exhausted(start_server: StartServer) -> None:
    env = await start_server("memory", rate_per_second=0.01, rate_burst=3)
    t = await table(env)
    await t.actor.act(actions.draw(), expected_version=0)
    hand = (await t.actor.view()).hand
    await expect(submit(t.actor, actions.draw(), 1), Code.FAILED_PRECONDITION, "ALREADY_DREW")
    await t.actor.act(actions.discard(hand[0].id), expected_version=1)
    error = await expect(submit(t.actor, actions.draw(), 2), Code.RESOURCE_EXHAUSTED)
    assert error.reason == "RATE_LIMITED"
    assert (await t.actor.view()).version == 2
    # per seat: the other seat still has its burst
    response = await t.idle.act(actions.draw(), expected_version=2)
    assert response.version == 3


async def test_random_junk_actions_never_fail_unexpectedly(server: Env) -> None:
    """Random, mostly nonsensical actions: each is refused as malformed or by a rule (or is
    legal), never with another status; ValidateAction and SubmitAction agree."""
    t = await table(server)
    rng = random.Random(7)
    await t.actor.act(actions.draw(), expected_version=0)
    hand = [c.id for c in (await t.actor.view()).hand]
    pool = [*hand, 0, 1, 107, 108, 200, 1 << 31, (1 << 32) - 1]

    def junk() -> pb.Action:
        kind = rng.randrange(9)
        cards = [rng.choice(pool) for _ in range(rng.randrange(0, 5))]
        number = rng.choice([0, 1, 3, 13, 14, 15, 99, (1 << 32) - 1])
        spec = meld(rng.randrange(4), cards, rng.choice([None, number]))
        options: list[pb.Action] = [
            pb.Action(draw=pb.Draw(source=rng.randrange(5))),  # type: ignore[arg-type]
            pb.Action(lay_contract=pb.LayContract(melds=[spec] * rng.randrange(3))),
            pb.Action(lay_off=pb.LayOff(card=rng.choice(pool), meld=number, end=rng.randrange(4))),  # type: ignore[arg-type]
            pb.Action(extra_meld=pb.ExtraMeld(meld=spec)),
            pb.Action(swap_joker=pb.SwapJoker(card=rng.choice(pool), meld=number)),
            actions.discard(rng.choice(pool)),
            actions.end_turn(),
            actions.claim(),
            actions.pass_claim(),
        ]
        return options[kind]

    seen: set[Code] = set()
    for _ in range(120):
        action = junk()
        seat = rng.choice(t.seats)
        version = (await seat.view()).version
        try:
            check = await seat.validate(action)
        except CallError as exc:
            assert exc.code is Code.INVALID_ARGUMENT, (action, exc)
            await expect(submit(seat, action, version), Code.INVALID_ARGUMENT)
            seen.add(exc.code)
            continue
        if check.legal:
            response = await submit(seat, action, version)
            assert response.version == version + 1
            seen.add(Code.OK)
        else:
            error = await expect(submit(seat, action, version), Code.FAILED_PRECONDITION)
            assert error.reason == check.reason
            seen.add(error.code)
    assert {Code.INVALID_ARGUMENT, Code.FAILED_PRECONDITION} <= seen


async def test_undecodable_requests_are_invalid_argument(server: Env) -> None:
    channel = grpc.aio.insecure_channel(server.target)

    def raw(data: bytes) -> bytes:
        return data

    try:
        for method in ("SubmitAction", "CreateGame", "AnalyseHand", "GetView"):
            call = channel.unary_unary(
                f"/glintwick.v1.GameService/{method}",
                request_serializer=raw,
                response_deserializer=raw,
            )
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call(b"\xff\xff\xff\x07not protobuf", timeout=5)
            assert caught.value.code() is Code.INVALID_ARGUMENT, (method, caught.value)
        stream = channel.unary_stream(
            "/glintwick.v1.GameService/WatchGame", request_serializer=raw, response_deserializer=raw
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in stream(b"\xff\xff\xff\x07not protobuf", timeout=5):
                pass
        assert caught.value.code() is Code.INVALID_ARGUMENT
    finally:
        await channel.close()


# --------------------------------------------------------------------------- HTTP


async def http_call(
    http: aiohttp.ClientSession,
    verb: str,
    path: str,
    status: int,
    reason: str | None = None,
    body: Any = None,
    token: str | None = None,
    raw: bytes | None = None,
) -> dict[str, Any]:
    """One HTTP call that must fail with ``status`` (and ``reason``) in the JSON error body."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.request(
        verb, path, json=body if raw is None else None, data=raw, headers=headers
    ) as response:
        payload: dict[str, Any] = await response.json()
        assert response.status == status, (path, response.status, payload)
        assert set(payload) == {"code", "reason", "message"}, payload
        assert payload["reason"] and payload["message"], payload
        assert payload["code"] not in ("UNKNOWN", "INTERNAL")
        assert response.status == HTTP[grpc.StatusCode[payload["code"]]]
        if reason is not None:
            assert payload["reason"] == reason, payload
        return payload


async def test_http_errors_map_to_statuses(server: Env, start_server: StartServer) -> None:
    bare = await start_server("memory", operator_token="")
    t = await table(server)
    game_id = t.game_id
    hand = (await t.actor.view()).hand
    before = await snapshot(t)
    actor, idle = t.actor.token, t.idle.token
    submit_path = f"/v1/games/{game_id}:submit"
    draw: dict[str, Any] = {"action": {"draw": {}}}
    analyse = "/v1/analyse"
    async with aiohttp.ClientSession(server.http) as http:
        await http_call(http, "POST", submit_path, 400, "MALFORMED_ACTION", {"action": {}}, actor)
        await http_call(
            http, "POST", submit_path, 400, None, {"action": {"discard": {"card": 9999}}}, actor
        )
        await http_call(http, "POST", submit_path, 400, None, raw=b"{not json", token=actor)
        await http_call(http, "POST", submit_path, 400, None, {"noSuchField": 1}, actor)
        await http_call(http, "POST", submit_path, 400, None, [1, 2], actor)
        await http_call(http, "POST", "/v1/games", 400, "UNKNOWN_RULE_SET", {"ruleSetName": "x"})
        await http_call(http, "POST", "/v1/games", 400, "BAD_SEAT_COUNT", {"seats": 9})
        long_hand = {"ruleSetName": "whiskertrail", "round": 1, "hand": ["AC"] * 31}
        await http_call(http, "POST", analyse, 400, None, long_hand)
        await http_call(http, "POST", analyse, 400, None, {**long_hand, "hand": ["ZZ"]})
        await http_call(http, "GET", f"/v1/games/{game_id}/view?bogus=1", 400)
        await http_call(http, "GET", f"/v1/games/{game_id}:watch?from_version=x", 400)
        await http_call(http, "GET", f"/v1/games/{game_id}:watch?from_version=99", 400)
        discard = {"action": {"discard": {"card": hand[0].id}}}
        await http_call(http, "POST", submit_path, 409, "MUST_DRAW_FIRST", discard, actor)
        await http_call(http, "POST", submit_path, 409, "NOT_YOUR_TURN", draw, idle)
        stale = {"expectedVersion": "5", **draw}
        await http_call(http, "POST", submit_path, 409, "STALE_VERSION", stale, actor)
        await http_call(http, "GET", f"/v1/games/{game_id}/replay", 409, "GAME_NOT_FINISHED")
        missing = "0123456789abcdef"
        await http_call(http, "GET", f"/v1/games/{missing}", 404, "GAME_NOT_FOUND")
        await http_call(http, "GET", f"/v1/games/{missing}/view", 404, "GAME_NOT_FOUND")
        await http_call(http, "GET", f"/v1/games/{missing}:watch", 404, "GAME_NOT_FOUND")
        await http_call(http, "POST", f"/v1/games/{missing}:submit", 404, None, draw, actor)
        legal = f"/v1/games/{game_id}/legalActions"
        await http_call(http, "GET", legal, 401, "BAD_TOKEN")
        await http_call(http, "GET", legal, 401, "BAD_TOKEN", token="nope")
        await http_call(http, "POST", submit_path, 401, "BAD_TOKEN", draw)
        deck = {"decks": [{"round": 1, "cards": list(range(108))}]}
        await http_call(http, "POST", "/v1/games:fromDeck", 401, None, deck)
        await http_call(http, "POST", "/v1/games:fromDeck", 401, None, deck, "wrong")
    async with aiohttp.ClientSession(bare.http) as http:
        await http_call(
            http, "POST", "/v1/games:fromDeck", 403, "OPERATOR_DISABLED", deck, OPERATOR_TOKEN
        )
    assert await snapshot(t) == before


async def test_http_rate_limit_is_429(start_server: StartServer) -> None:
    env = await start_server("memory", rate_per_second=0.01, rate_burst=2)
    t = await table(env)
    path = f"/v1/games/{t.game_id}:submit"
    async with aiohttp.ClientSession(env.http) as http:
        headers = {"Authorization": f"Bearer {t.actor.token}"}
        async with http.post(path, json={"action": {"draw": {}}}, headers=headers) as response:
            assert response.status == 200
            assert (await response.json())["version"] == "1"
        await http_call(http, "POST", path, 409, "ALREADY_DREW", {"expectedVersion": 1,
                        "action": {"draw": {}}}, t.actor.token)  # fmt: skip
        await http_call(http, "POST", path, 429, "RATE_LIMITED", {"expectedVersion": 1,
                        "action": {"draw": {}}}, t.actor.token)  # fmt: skip
    assert (await t.actor.view()).version == 1
