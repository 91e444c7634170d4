"""Shared machinery of the end-to-end tests.

* :class:`Env`: a running in-process server and an SDK client on its gRPC port.
* :class:`Mirror`: the same game replayed by the engine beside the server (the test
  chose the seed, so it knows everything), with what each viewer may legitimately
  know at every version, worked out from the states alone (not from the events
  the engine publishes, which are under test):

  - *known*: within the current round, every card the viewer ever held and every
    card that was ever public (in the discard pile — each card there was its top
    once — or on the table);
  - *secret*: the stock, and every card in another seat's hand that did not get
    there in public view (drawn from the discard pile, won by a claim, a joker
    taken back from the table).

  A payload is clean when every card it shows is known and none is secret; its
  text must not contain the game seed or the seed of a round not yet over.
* :func:`play_game`: random-legal clients (a seeded ``random.Random`` choosing from
  the server's ``ListLegalActions``) play a game through the SDK, every response
  compared with the mirror.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, cast

import aiohttp
import grpc
from google.protobuf import json_format
from google.protobuf import message as pb_message
from grpc_health.v1 import health_pb2

from clients.sdk import CallError, GlintwickClient, Seat
from engine.actions import Action, Discard, ExtraMeld, LayContract, LayOff, SwapJoker
from engine.cards import Card, card
from engine.events import Event
from engine.game import GameState
from engine.rulesets import RuleSet
from engine.shuffle import round_seed
from engine.views import seat_view, spectator_view
from glintwick import convert
from glintwick.v1 import game_pb2 as pb
from glintwick_cli import start_server as start
from services.config import ServerOptions
from services.server import RunningServer
from tests.support import eager_policy
from tests.support.wire import payload_plain, unfloat, view_message

OPERATOR_TOKEN = "operator-e2e-credential"
_HASH_ID = re.compile(r"#(\d+)")

Policy = Callable[[GameState, int, list[Action], random.Random], Action]


# --------------------------------------------------------------------------- servers


@dataclass
class Env:
    running: RunningServer
    client: GlintwickClient
    store: str  # "memory" | "redis"

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.running.grpc_port}"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.running.http_port}"

    async def close(self) -> None:
        await self.client.close()
        await self.running.stop(grace=0.5)

    async def new_game(
        self,
        rules: str = "whiskertrail",
        seats: int = 2,
        seed: bytes = b"e2e",
        *,
        turn_seconds: int = 0,
        claim_seconds: int = 0,
    ) -> tuple[pb.Game, list[Seat]]:
        game = await self.client.create_game(
            rules,
            seats=seats,
            seed=seed,
            turn_seconds=turn_seconds,
            claim_seconds=claim_seconds,
        )
        joined = [await self.client.join(game.game_id, seat=s, name=f"p{s}") for s in range(seats)]
        return game, joined


async def open_env(options: ServerOptions, store: str) -> Env:
    """Start a server on free ports (127.0.0.1) with the test operator credential."""
    defaults = ServerOptions()
    if options.grpc_address == defaults.grpc_address:
        options.grpc_address = "127.0.0.1:0"
    if options.http_address == defaults.http_address:
        options.http_address = "127.0.0.1:0"
    if options.operator_token is None:
        options.operator_token = OPERATOR_TOKEN
    if options.sweep_seconds == defaults.sweep_seconds:
        options.sweep_seconds = 0.1
    running = await start(options)
    client = GlintwickClient(f"127.0.0.1:{running.grpc_port}")
    return Env(running, client, store)


async def health_status(channel: grpc.aio.Channel, service: str = "") -> int:
    """grpc.health.v1.Health/Check (the stubs' HealthStub is untyped)."""
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    answer: health_pb2.HealthCheckResponse = await check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    return answer.status


def watching(stream: AsyncIterator[pb.WatchGameResponse]) -> contextlib.aclosing[Any]:
    """``contextlib.aclosing`` for the SDK's watch (an async generator typed as an iterator)."""
    return contextlib.aclosing(cast(AsyncGenerator[pb.WatchGameResponse, None], stream))


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds (polled), failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s in vain for {what}"
        await asyncio.sleep(0.01)


def event_data(event: pb.Event) -> dict[str, Any]:
    """An event's typed payload (its ``type``'s case) as plain data."""
    assert event.WhichOneof("payload") == event.type, event
    return payload_plain(getattr(event, event.type))


# --------------------------------------------------------------------------- plain forms


def plain(message: pb_message.Message) -> Any:
    """A message as JSON-able data, every field printed (a card id 0 too), ints as ints."""
    return unfloat(
        json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
    )


def shown_cards(value: Any) -> list[tuple[int, str]]:
    """Every card rendered as ``{"id", "code"}`` anywhere in plain data."""
    found: list[tuple[int, str]] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            if "id" in item and "code" in item:
                found.append((int(item["id"]), str(item["code"])))
            for inner in item.values():
                walk(inner)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)

    walk(value)
    return found


def action_cards(action: pb.Action) -> list[int]:
    """The card ids an action message names."""
    kind = action.WhichOneof("kind")
    if kind == "discard":
        return [action.discard.card]
    if kind == "lay_off":
        return [action.lay_off.card]
    if kind == "swap_joker":
        return [action.swap_joker.card]
    if kind == "extra_meld":
        return list(action.extra_meld.meld.cards)
    if kind == "lay_contract":
        return [c for m in action.lay_contract.melds for c in m.cards]
    return []


def engine_action_cards(action: Action) -> set[int]:
    match action:
        case Discard(card=c) | LayOff(card=c) | SwapJoker(card=c):
            return {c}
        case ExtraMeld(meld=spec):
            return set(spec.cards)
        case LayContract(melds=melds):
            return {c for m in melds or () for c in m.cards}
    return set()


def ids(cards: Iterable[Card]) -> set[int]:
    return {c.id for c in cards}


# --------------------------------------------------------------------------- the mirror


@dataclass(frozen=True)
class Rules:
    """What one viewer may see in one payload."""

    known: frozenset[int]
    secret: frozenset[int]
    forbidden: tuple[str, ...]  # seeds, in hex


@dataclass
class _Point:
    """Knowledge at one version: per viewer (seats, then the spectator at index seats)."""

    known: list[frozenset[int]]
    secret: list[frozenset[int]]
    forbidden: tuple[str, ...]


class Mirror:
    """The game replayed by the engine beside the server, and what each viewer may know."""

    def __init__(
        self,
        rules: RuleSet,
        seats: int,
        seed: bytes,
        stock_orders: dict[int, list[int]] | None = None,
    ) -> None:
        self.rules = rules
        self.seats = seats
        self.seed = seed
        state, events = GameState.new_game_with_events(rules, seats, seed, stock_orders)
        self.states: list[GameState] = [state]
        self.events: list[list[Event]] = [events]
        self.actions: list[tuple[int, Action]] = []
        # per-version bookkeeping for redaction checks of the events of action v
        self._boundary: list[int] = [0]  # index of round_started in events[v] (len: none)
        self._revealed: list[frozenset[int]] = [frozenset()]
        self._known: list[set[int]] = [set() for _ in range(seats + 1)]
        self._taken: list[set[int]] = [set() for _ in range(seats)]
        self._new_round(state)
        self.points: list[_Point] = [self._point(state)]

    # ------------------------------------------------------------------ queries

    @property
    def state(self) -> GameState:
        return self.states[-1]

    @property
    def version(self) -> int:
        return len(self.states) - 1

    def viewer_index(self, viewer: int | None) -> int:
        return self.seats if viewer is None else viewer

    def view_rules(self, viewer: int | None, version: int) -> Rules:
        point = self.points[version]
        i = self.viewer_index(viewer)
        return Rules(point.known[i], point.secret[i], point.forbidden)

    def event_rules(self, viewer: int | None, version: int, index: int) -> Rules:
        """The rules for event ``index`` of action ``version`` (before a new deal in the
        same action: the old round's knowledge plus what the action made public)."""
        if index < self._boundary[version]:
            before = self.points[version - 1]
            i = self.viewer_index(viewer)
            revealed = self._revealed[version]
            return Rules(
                before.known[i] | revealed,
                before.secret[i] - revealed,
                self.points[version].forbidden,
            )
        return self.view_rules(viewer, version)

    def expected_events(self, viewer: int | None, version: int) -> list[pb.Event]:
        return [
            convert.place_event(convert.event_to_pb(e, viewer, version), index)
            for index, e in enumerate(self.events[version])
        ]

    def expected_view(
        self, viewer: int | None, version: int, game_id: str, deadline: float = 0.0
    ) -> pb.View:
        state = self.states[version]
        data = seat_view(state, viewer) if viewer is not None else spectator_view(state)
        return view_message(data, game_id, version, deadline)

    # ------------------------------------------------------------------ moves

    def apply(self, seat: int, action: Action) -> list[Event]:
        before = self.state
        after, events = before.apply_action(seat, action)
        self.states.append(after)
        self.events.append(events)
        self.actions.append((seat, action))
        new_round = after.round_number != before.round_number
        boundary = next((i for i, e in enumerate(events) if e.type == "round_started"), len(events))
        self._boundary.append(boundary if new_round else 0)
        revealed: set[int] = set()
        if new_round:
            went_out = any(e.type == "round_ended" and e.seat == seat for e in events)
            own = ids(before.hands[seat])
            revealed = own if went_out else own & engine_action_cards(action)
            self._new_round(after)
        else:
            for t in range(self.seats):
                gained = ids(after.hands[t]) - ids(before.hands[t])
                public_before = ids(before.discards) | {c.id for m in before.table for c in m.cards}
                self._taken[t] = (self._taken[t] & ids(after.hands[t])) | (gained & public_before)
            self._learn(after)
        self._revealed.append(frozenset(revealed))
        self.points.append(self._point(after))
        return events

    def _new_round(self, state: GameState) -> None:
        self._known = [set() for _ in range(self.seats + 1)]
        self._taken = [set() for _ in range(self.seats)]
        self._learn(state)

    def _learn(self, state: GameState) -> None:
        public = ids(state.discards) | {c.id for m in state.table for c in m.cards}
        for i in range(self.seats + 1):
            self._known[i] |= public
            if i < self.seats:
                self._known[i] |= ids(state.hands[i])

    def _point(self, state: GameState) -> _Point:
        secret: list[frozenset[int]] = []
        hidden = [ids(state.hands[t]) - self._taken[t] for t in range(self.seats)]
        for i in range(self.seats + 1):
            mine = ids(state.stock)
            for t in range(self.seats):
                if t != i:
                    mine |= hidden[t]
            secret.append(frozenset(mine))
        forbidden: tuple[str, ...] = ()
        if not state.is_terminal():
            later = range(state.round_number, self.rules.rounds + 1)
            forbidden = (self.seed.hex(), *(round_seed(self.seed, r).hex() for r in later))
        return _Point([frozenset(k) for k in self._known], secret, forbidden)


# --------------------------------------------------------------------------- secrecy checks


def check_clean(
    rules: RuleSet,
    payload: Any,
    allowed: Rules,
    what: str,
    named: AbstractSet[int] = frozenset(),
) -> None:
    """``payload`` (plain data or a message) shows only what the viewer may know.

    ``named``: card ids the viewer itself put in the request (an error may repeat them).
    """
    data = plain(payload) if isinstance(payload, pb_message.Message) else payload
    text = repr(data)
    shown = shown_cards(data)
    for cid, code in shown:
        assert 0 <= cid < rules.deck_size, f"{what}: card id {cid} is not in the deck"
        assert card(cid, rules.decks).code == code, f"{what}: card {cid} rendered as {code}"
    found = {cid for cid, _ in shown} | {int(m) for m in _HASH_ID.findall(text)}
    found -= set(named)
    unknown = sorted(found - allowed.known)
    assert not unknown, f"{what} shows card ids {unknown} the viewer may not know"
    leaked = sorted(found & allowed.secret)
    assert not leaked, f"{what} shows secret card ids {leaked} (another hand or the stock)"
    for secret in allowed.forbidden:
        assert secret not in text, f"{what} reveals a seed before its time"


def check_events(mirror: Mirror, viewer: int | None, events: Sequence[pb.Event], what: str) -> None:
    """Redaction of watched or returned events: each against the knowledge of its version."""
    position: dict[int, int] = {}
    for event in events:
        index = position.get(event.version, 0)
        position[event.version] = index + 1
        rules = mirror.event_rules(viewer, event.version, index)
        check_clean(mirror.rules, event, rules, f"{what}: v{event.version} {event.type}")


# --------------------------------------------------------------------------- playing


@dataclass
class Played:
    game_id: str
    mirror: Mirror
    submitted: list[tuple[int, pb.Action]] = field(default_factory=list)
    responses: list[pb.SubmitActionResponse] = field(default_factory=list)
    legal: list[tuple[int, int, list[pb.Action]]] = field(default_factory=list)  # seat, version
    calls: int = 0


StepHook = Callable[[Played, int], Awaitable[None]]


async def play_game(
    game_id: str,
    handles: Sequence[Sequence[Seat]],
    mirror: Mirror,
    rng: random.Random,
    *,
    policy: Policy = eager_policy,
    max_steps: int | None = None,
    after_step: StepHook | None = None,
    into: Played | None = None,
) -> Played:
    """Random-legal clients play until the game is over (or ``max_steps`` actions).

    ``handles[k][seat]`` is seat ``seat`` on connection ``k``; calls rotate through the
    connections (one server: one connection).  Each step: the acting seat (any of
    those that may act, at random) lists its legal actions, the policy picks one of
    them with ``rng`` and the seat submits it at the version it saw.  The legal list,
    the response's version and events must be the engine's (the mirror's).
    """
    played = Played(game_id, mirror) if into is None else into

    def handle(seat: int) -> Seat:
        chosen = handles[played.calls % len(handles)][seat]
        played.calls += 1
        return chosen

    while not mirror.state.is_terminal() and (max_steps is None or mirror.version < max_steps):
        state = mirror.state
        actor = rng.choice(state.to_act)
        listed = await handle(actor).legal_actions()
        played.legal.append((actor, mirror.version, listed))
        engine_legal = [convert.action_from_pb(a) for a in listed]
        assert engine_legal == state.legal_actions(actor), (
            f"v{mirror.version}: the server lists other legal actions than the engine"
        )
        choice = policy(state, actor, engine_legal, rng)
        action = listed[engine_legal.index(choice)]
        response = await handle(actor).act(action, expected_version=mirror.version)
        mirror.apply(actor, choice)
        assert response.version == mirror.version
        assert list(response.events) == mirror.expected_events(actor, mirror.version), (
            f"v{mirror.version}: the response's events are not the engine's"
        )
        played.submitted.append((actor, action))
        played.responses.append(response)
        if after_step is not None:
            await after_step(played, actor)
    return played


# --------------------------------------------------------------------------- races


async def race_writers(
    seats: Sequence[Seat], twins: Sequence[Seat], attempts: int
) -> collections.Counter[str]:
    """``attempts`` times, the seat to act submits two actions at once at the same
    expected version (``seats`` and ``twins``: the same seats on two connections or
    servers): alternately different actions and the same one.  Exactly one lands, the
    other is ABORTED, and the game advances once.  Returns the refusals' reasons."""
    reasons: collections.Counter[str] = collections.Counter()
    for attempt in range(attempts):
        view = await seats[0].view()
        mine, twin = seats[view.current], twins[view.current]
        before = await mine.view()
        if view.phase == "draw":
            source = pb.DRAW_SOURCE_DISCARD if attempt % 2 == 0 else pb.DRAW_SOURCE_STOCK
            first = pb.Action(draw=pb.Draw(source=pb.DRAW_SOURCE_STOCK))
            second = pb.Action(draw=pb.Draw(source=source))
        else:
            blocked = before.taken_from_discard.id if before.HasField("taken_from_discard") else -1
            hand = [c.id for c in before.hand if c.id != blocked]
            first = pb.Action(discard=pb.Discard(card=hand[0]))
            second = pb.Action(discard=pb.Discard(card=hand[-1] if attempt % 2 == 0 else hand[0]))
        results = await asyncio.gather(
            mine.act(first, expected_version=view.version),
            twin.act(second, expected_version=view.version),
            return_exceptions=True,
        )
        landed = [r for r in results if isinstance(r, pb.SubmitActionResponse)]
        refused = [r for r in results if isinstance(r, BaseException)]
        assert len(landed) == 1 and len(refused) == 1, results
        error = refused[0]
        assert isinstance(error, CallError), error
        assert error.code is grpc.StatusCode.ABORTED, error
        assert error.reason in ("STALE_VERSION", "CONCURRENT_UPDATE"), error
        reasons[error.reason] += 1
        after = await twin.view()
        assert after.version == view.version + 1 == landed[0].version
        grown = 1 if view.phase == "draw" else -1
        assert len(after.hand) == len(before.hand) + grown
    return reasons


# --------------------------------------------------------------------------- HTTP


async def read_sse(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, str, Any]]:
    """Server-Sent Events as (event, id, parsed JSON data), until the stream ends."""
    kind, ident, data = "", "", list[str]()
    async for raw in response.content:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield kind, ident, json.loads("\n".join(data))
            kind, ident, data = "", "", []
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            kind = value
        elif name == "id":
            ident = value
        elif name == "data":
            data.append(value)


def sse_item(kind: str, data: Any) -> pb.WatchGameResponse:
    """An SSE event back as the WatchGameResponse it stands for."""
    if kind == "snapshot":
        return pb.WatchGameResponse(snapshot=json_format.ParseDict(data, pb.View()))
    assert kind == "event", kind
    return pb.WatchGameResponse(event=json_format.ParseDict(data, pb.Event()))


async def sse_watch(
    base: str,
    game_id: str,
    token: str | None = None,
    from_version: int = 0,
    into: list[pb.WatchGameResponse] | None = None,
) -> list[pb.WatchGameResponse]:
    """Everything the HTTP watch of a game sends until the stream ends (the game is over),
    appended to ``into`` as it comes."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    got: list[pb.WatchGameResponse] = [] if into is None else into
    async with aiohttp.ClientSession(base) as http:
        path = f"/v1/games/{game_id}:watch"
        params = {"from_version": str(from_version)} if from_version else {}
        async with http.get(path, headers=headers, params=params) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/event-stream")
            async for kind, ident, data in read_sse(response):
                item = sse_item(kind, data)
                if kind == "snapshot":
                    assert ident == str(item.snapshot.version)
                else:
                    assert ident == item.event.cursor
                got.append(item)
    return got
