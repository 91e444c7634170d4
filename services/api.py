"""The application core's facade: one coroutine per RPC, shared by the gRPC and HTTP faces.

Each method hands its request to the use case that owns it (:mod:`services.usecases`):
the gRPC servicer and the HTTP routes call ``GameService`` by the RPC's name in snake
case, and the use cases share one :class:`~services.usecases.context.Context`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from glintwick.v1 import game_pb2 as pb
from services.store.base import GameStore
from services.usecases import (
    analysis,
    deadlines,
    house_bots,
    limits,
    lobby,
    moves,
    play,
    records,
    replay,
    rule_sets,
    views,
    watch,
)
from services.usecases.context import Caller, Context, RateLimiter, ServiceConfig, new_request_id
from services.usecases.records import Loaded
from services.usecases.replay import replay_events

__all__ = [
    "Caller",
    "GameService",
    "Loaded",
    "RateLimiter",
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

    bot_seat = staticmethod(records.bot_seat)
    default_action = staticmethod(deadlines.default_action)

    # ------------------------------------------------------------------ lobby and seats

    async def list_rule_sets(
        self, request: pb.ListRuleSetsRequest, caller: Caller
    ) -> pb.ListRuleSetsResponse:
        return await rule_sets.list_rule_sets(self._ctx, request, caller)

    async def create_game(self, request: pb.CreateGameRequest, caller: Caller) -> pb.Game:
        return await lobby.create_game(self._ctx, request, caller)

    async def create_game_from_deck(
        self, request: pb.CreateGameFromDeckRequest, caller: Caller
    ) -> pb.Game:
        return await lobby.create_game_from_deck(self._ctx, request, caller)

    async def get_game(self, request: pb.GetGameRequest, caller: Caller) -> pb.Game:
        return await lobby.get_game(self._ctx, request, caller)

    async def list_open_games(
        self, request: pb.ListOpenGamesRequest, caller: Caller
    ) -> pb.ListOpenGamesResponse:
        return await lobby.list_open_games(self._ctx, request, caller)

    async def join_game(self, request: pb.JoinGameRequest, caller: Caller) -> pb.JoinGameResponse:
        return await lobby.join_game(self._ctx, request, caller)

    async def fill_with_bots(self, request: pb.FillWithBotsRequest, caller: Caller) -> pb.Game:
        return await lobby.fill_with_bots(self._ctx, request, caller)

    # ------------------------------------------------------------------ house bots

    async def list_bot_turns(
        self, request: pb.ListBotTurnsRequest, caller: Caller
    ) -> pb.ListBotTurnsResponse:
        return await house_bots.list_bot_turns(self._ctx, request, caller)

    # ------------------------------------------------------------------ views

    async def get_view(self, request: pb.GetViewRequest, caller: Caller) -> pb.View:
        return await views.get_view(self._ctx, request, caller)

    async def list_legal_actions(
        self, request: pb.ListLegalActionsRequest, caller: Caller
    ) -> pb.ListLegalActionsResponse:
        return await views.list_legal_actions(self._ctx, request, caller)

    # ------------------------------------------------------------------ moves

    async def validate_action(
        self, request: pb.ValidateActionRequest, caller: Caller
    ) -> pb.ValidateActionResponse:
        return await moves.validate_action(self._ctx, request, caller)

    async def submit_action(
        self, request: pb.SubmitActionRequest, caller: Caller
    ) -> pb.SubmitActionResponse:
        return await moves.submit_action(self._ctx, request, caller)

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
        return await watch.watch_game(self._ctx, request, caller)

    # ------------------------------------------------------------------ playing

    def play(self, caller: Caller) -> play.PlayStream:
        """A play stream's server side (sessions of many seats; see :mod:`.usecases.play`)."""
        return play.open_stream(self._ctx, caller)

    async def check_play(self, request: pb.PlaySubscribe, caller: Caller) -> None:
        """Raise what a subscribe would be refused with (the HTTP face's early answer)."""
        await play.check_subscribe(self._ctx, request, caller)

    def end_watches(self) -> None:
        """The server stops: every open watch ends now (UNAVAILABLE: clients resume)."""
        self._ctx.stopping.set()

    # ------------------------------------------------------------------ analysis and replays

    async def analyse_hand(
        self, request: pb.AnalyseHandRequest, caller: Caller
    ) -> pb.AnalyseHandResponse:
        return await analysis.analyse_hand(self._ctx, request, caller)

    async def get_replay(self, request: pb.GetReplayRequest, caller: Caller) -> pb.Replay:
        return await replay.get_replay(self._ctx, request, caller)

    async def ping(self, request: pb.PingRequest, caller: Caller) -> pb.PingResponse:
        return pb.PingResponse()

    async def get_limits(
        self, request: pb.GetLimitsRequest, caller: Caller
    ) -> pb.GetLimitsResponse:
        return await limits.get_limits(self._ctx, request, caller)
