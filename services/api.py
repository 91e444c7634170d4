"""The application core's facade: one coroutine per RPC, shared by the gRPC and HTTP faces.

Each method hands its request to the use case that owns it (:mod:`services.usecases`):
the gRPC servicer and the HTTP routes call ``GameService`` by the RPC's name in snake
case, and the use cases share one :class:`~services.usecases.context.Context`.  Each
call is first charged to its caller's rate limit of its call class (:meth:`_limited`,
:mod:`services.usecases.quotas`), here for both faces; a move to its seat's, in
:func:`~services.usecases.moves.submit_action` (a unary call or a play stream's act).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import grpc

from glintwick.v1 import game_pb2 as pb
from services.errors import ServiceError
from services.store.base import GameStore
from services.usecases import (
    analysis,
    deadlines,
    house_bots,
    limits,
    lobby,
    moves,
    play,
    quotas,
    records,
    replay,
    rule_sets,
    views,
    watch,
)
from services.usecases.context import Caller, Context, ServiceConfig, new_request_id
from services.usecases.records import Loaded
from services.usecases.replay import replay_events

R = TypeVar("R")
T = TypeVar("T")

__all__ = [
    "Caller",
    "GameService",
    "Loaded",
    "ServiceConfig",
    "new_request_id",
    "replay_events",
]


class GameService:
    def __init__(self, store: GameStore, config: ServiceConfig | None = None) -> None:
        self._ctx = Context(store, config or ServiceConfig())

    @property
    def store(self) -> GameStore:
        return self._ctx.store

    @property
    def config(self) -> ServiceConfig:
        return self._ctx.config

    async def load(self, game_id: str) -> Loaded:
        """The game as the store holds it now (decoded once per revision)."""
        return await self._ctx.load(game_id)

    async def _limited(
        self,
        call: str,
        core: Callable[[Context, R, Caller], Awaitable[T]],
        request: R,
        caller: Caller,
    ) -> T:
        """``core`` once ``call`` is admitted for the caller; a token that is no seat's
        is charged to the caller's address as well (inventing tokens buys no limit)."""
        await quotas.admit(self._ctx, call, caller)
        return await self._charging_bad_tokens(call, core(self._ctx, request, caller), caller)

    async def _charging_bad_tokens(self, call: str, run: Awaitable[T], caller: Caller) -> T:
        try:
            return await run
        except ServiceError as exc:
            if exc.code is grpc.StatusCode.UNAUTHENTICATED:
                await quotas.charge_bad_token(self._ctx, call, caller)
            raise

    bot_seat = staticmethod(records.bot_seat)
    default_action = staticmethod(deadlines.default_action)

    # ------------------------------------------------------------------ lobby and seats

    async def list_rule_sets(
        self, request: pb.ListRuleSetsRequest, caller: Caller
    ) -> pb.ListRuleSetsResponse:
        return await self._limited("read", rule_sets.list_rule_sets, request, caller)

    async def create_game(self, request: pb.CreateGameRequest, caller: Caller) -> pb.Game:
        return await self._limited("create", lobby.create_game, request, caller)

    async def create_game_from_deck(
        self, request: pb.CreateGameFromDeckRequest, caller: Caller
    ) -> pb.Game:
        return await self._limited("create", lobby.create_game_from_deck, request, caller)

    async def get_game(self, request: pb.GetGameRequest, caller: Caller) -> pb.Game:
        return await self._limited("read", lobby.get_game, request, caller)

    async def list_open_games(
        self, request: pb.ListOpenGamesRequest, caller: Caller
    ) -> pb.ListOpenGamesResponse:
        return await self._limited("read", lobby.list_open_games, request, caller)

    async def join_game(self, request: pb.JoinGameRequest, caller: Caller) -> pb.JoinGameResponse:
        return await self._limited("join", lobby.join_game, request, caller)

    async def fill_with_bots(self, request: pb.FillWithBotsRequest, caller: Caller) -> pb.Game:
        return await self._limited("join", lobby.fill_with_bots, request, caller)

    # ------------------------------------------------------------------ house bots

    async def list_bot_turns(
        self, request: pb.ListBotTurnsRequest, caller: Caller
    ) -> pb.ListBotTurnsResponse:
        return await self._limited("read", house_bots.list_bot_turns, request, caller)

    # ------------------------------------------------------------------ views

    async def get_view(self, request: pb.GetViewRequest, caller: Caller) -> pb.View:
        return await self._limited("read", views.get_view, request, caller)

    async def list_legal_actions(
        self, request: pb.ListLegalActionsRequest, caller: Caller
    ) -> pb.ListLegalActionsResponse:
        return await self._limited("read", views.list_legal_actions, request, caller)

    # ------------------------------------------------------------------ moves

    async def validate_action(
        self, request: pb.ValidateActionRequest, caller: Caller
    ) -> pb.ValidateActionResponse:
        return await self._limited("read", moves.validate_action, request, caller)

    async def submit_action(
        self, request: pb.SubmitActionRequest, caller: Caller
    ) -> pb.SubmitActionResponse:
        # (charged to its seat inside, once the seat is known)
        run = moves.submit_action(self._ctx, request, caller)
        return await self._charging_bad_tokens("act", run, caller)

    # ------------------------------------------------------------------ deadlines

    async def expire_deadlines(self) -> deadlines.Swept:
        """Apply default actions for every passed deadline, and end the games idle past
        their idle deadline as abandoned; says how many of each."""
        return await deadlines.expire_deadlines(self._ctx)

    # ------------------------------------------------------------------ watching

    async def watch_game(
        self, request: pb.WatchGameRequest, caller: Caller
    ) -> AsyncIterator[pb.WatchGameResponse]:
        """The watch's stream (a refused request raises here, before anything is sent)."""
        return await self._limited("stream", watch.watch_game, request, caller)

    # ------------------------------------------------------------------ playing

    def play(self, caller: Caller) -> play.PlayStream:
        """A play stream's server side (sessions of many seats; see :mod:`.usecases.play`)."""
        return play.open_stream(self._ctx, caller)

    async def check_play(self, request: pb.PlaySubscribe, caller: Caller) -> None:
        """Raise what a subscribe would be refused with (the HTTP face's early answer)."""
        await self._limited("stream", play.check_subscribe, request, caller)

    async def admit_stream(self, caller: Caller) -> None:
        """Charge the opening of a play stream (each subscribe on it is charged too)."""
        await quotas.admit(self._ctx, "stream", caller)

    def end_watches(self) -> None:
        """The server stops: every open watch ends now (UNAVAILABLE: clients resume)."""
        self._ctx.stopping.set()

    # ------------------------------------------------------------------ analysis and replays

    async def analyse_hand(
        self, request: pb.AnalyseHandRequest, caller: Caller
    ) -> pb.AnalyseHandResponse:
        return await self._limited("analyse", analysis.analyse_hand, request, caller)

    async def get_replay(self, request: pb.GetReplayRequest, caller: Caller) -> pb.Replay:
        return await self._limited("read", replay.get_replay, request, caller)

    async def ping(self, request: pb.PingRequest, caller: Caller) -> pb.PingResponse:
        await quotas.admit(self._ctx, "read", caller)
        return pb.PingResponse()

    async def get_limits(
        self, request: pb.GetLimitsRequest, caller: Caller
    ) -> pb.GetLimitsResponse:
        return await self._limited("read", limits.get_limits, request, caller)
