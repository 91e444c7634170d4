"""Results in prompts (PlaySubscribe.results_in_prompts): a Play stream keeps an act's
result for the next prompt of its game it sends, any seat's, so that a move is two
messages (the act, and the prompt that carries its answer).

A result is held only while nothing the client may be waiting on is out: it goes alone
at once when the stream already sent a prompt of the game after the act, after a
short grace when a prompt sent before is still unanswered (the client may answer it
only once it has this result), and after HOLD_SECONDS when no prompt comes.  A session
that ends, or a stream that closes, sends every result it holds first.  The stream's
side of it, mixed into :class:`.play.PlayStream`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from glintwick.v1 import game_pb2 as pb

if TYPE_CHECKING:
    from .play import _Session

#: how long an act's result waits for the prompt it rides in (results_in_prompts) before
#: it goes alone: the next prompt of its game on the stream (any seat's) comes as soon
#: as the log has the move and a seat of the stream may act, so only a game waiting
#: for a seat of another client (or a log read that stalls) ever lets this pass
HOLD_SECONDS = 2.0
#: how long a result waits, while a prompt of its game is out unanswered, for that
#: prompt's act (a client answering a claim window's seats at once sends them within
#: this); still unanswered then, the client may be waiting for this result before it
#: answers: it goes alone
GRACE_SECONDS = 0.005
#: how long a prompt waits for the acts of its game that this stream is still answering
#: (each about a store round trip), so that their results ride in it
SETTLE_SECONDS = 0.5


class ResultsInPrompts:
    """The results a Play stream holds for the prompts of their games."""

    _sessions: dict[str, list[_Session]]
    _closed: bool
    _acts: set[asyncio.Task[None]]

    async def _send(self, message: pb.PlayResponse) -> None:
        raise NotImplementedError

    def _init_results(self) -> None:
        #: results_in_prompts: the results held for the next prompt of their game (with
        #: the timer that sends one alone if none comes), by game; the newest version
        #: of a prompt of each game sent
        self._held: dict[str, list[tuple[pb.PlayResponse, asyncio.TimerHandle]]] = {}
        self._prompted: dict[str, int] = {}
        #: acts received and not answered yet, by game, and what a prompt of the game
        #: waits on meanwhile (:meth:`_settled`); the newest version an act here made
        self._inflight: dict[str, int] = {}
        self._settling: dict[str, asyncio.Future[None]] = {}
        self._landed: dict[str, int] = {}

    def _answering(self, act: pb.PlayAct) -> None:
        """An act came: its seat's session here no longer awaits an answer to its prompt."""
        sessions = self._sessions.get(act.game_id, ())
        if act.HasField("seat"):
            for session in sessions:
                if act.seat in (session.seat, session.requested):
                    session.awaiting = -1
        elif len(sessions) == 1:
            sessions[0].awaiting = -1

    def _prompt_out(self, game_id: str, but: _Session | None = None) -> bool:
        """Whether a prompt of ``game_id`` went out on this stream that no act of its seat
        has followed yet (``but``: that session's aside)."""
        return any(s.awaiting >= 0 for s in self._sessions.get(game_id, ()) if s is not but)

    def _hold(self, session: _Session, message: pb.PlayResponse, expected: int) -> bool:
        """Keep an act's result for the next prompt of its game on this stream, any
        seat's (a move in two messages: act, then the prompt that carries its answer),
        if its session asked for it; False: send it now.  Kept: an applied act's result
        and an overtaken act's refusal (STALE_VERSION at a version this stream was
        prompted at: a fresh prompt follows), while no prompt of the game at a version
        after the act went out yet (the client may be holding that one, waiting for
        this answer before it acts on it)."""
        game_id = session.game_id
        if not session.results_in_prompts or self._closed:
            return False
        sessions = self._sessions.get(game_id, ())
        if session not in sessions:
            return False  # (its session ended meanwhile: its closed has gone)
        # (a prompt out unanswered: the client may answer it only after this result)
        grace = self._prompt_out(game_id, session)
        prompted = self._prompted.get(game_id, -1)
        result = message.result
        if result.HasField("error"):
            if result.error.reason != "STALE_VERSION" or expected > prompted:
                return False
            after = expected + 1
        else:
            after = result.version
        if prompted >= after:
            return False
        # (the session's loop: get_running_loop() costs a getpid() call on Python 3.11)
        timer = session.ready.get_loop().call_later(
            GRACE_SECONDS if grace else HOLD_SECONDS, self._release_late, game_id, message, grace
        )
        self._held.setdefault(game_id, []).append((message, timer))
        return True

    def _release_late(self, game_id: str, message: pb.PlayResponse, grace: bool = False) -> None:
        held = self._held.get(game_id, [])
        for index, (waiting, _) in enumerate(held):
            if waiting is message:
                if grace and not self._prompt_out(game_id):
                    # every prompt out was answered meanwhile: held on for the next one
                    timer = asyncio.get_running_loop().call_later(
                        HOLD_SECONDS - GRACE_SECONDS, self._release_late, game_id, message
                    )
                    held[index] = (message, timer)
                    return
                del held[index]
                if not held:
                    del self._held[game_id]
                task = asyncio.create_task(self._send(message))
                self._acts.add(task)  # (the stream ends after it: see _finish_if_done)
                task.add_done_callback(self._acts.discard)
                return

    def _take_held(
        self, game_id: str, version: int, seat: int = -1, to_act: Sequence[int] = ()
    ) -> tuple[list[pb.PlayResponse], pb.PlayResponse | None]:
        """A prompt of ``seat`` at ``version`` (``to_act``: the seats that may act there)
        goes out: the results held for its game that go alone before it, and the one
        that rides in it.  The seat's own rides (the newest; older ones of its own go
        alone): a seat is never prompted while an answer of its own waits.  Else one
        of another seat's (an applied act's before a refusal, the oldest first), but
        not of a seat to act at ``version`` whose session here carries results: that
        one keeps for its own prompt; the others keep for the prompts after this one
        (or their timers).  (``seat`` -1: every result goes alone.)"""
        if self._prompted.get(game_id, -1) < version:
            self._prompted[game_id] = version
        held = self._held.pop(game_id, None)
        if held is None:
            return [], None
        if seat < 0:
            for _, timer in held:
                timer.cancel()
            return [m for m, _ in held], None
        if len(held) == 1:
            # (the common case, one result held: the rules below, without their lists)
            message, timer = held[0]
            mover = message.seat
            if mover == seat or not any(
                s.results_in_prompts and s.seat == mover and mover in to_act
                for s in self._sessions.get(game_id, ())
            ):
                timer.cancel()
                return [], message
            self._held[game_id] = held
            return [], None
        own = [(m, t) for m, t in held if m.seat == seat]
        waiting = {
            s.seat
            for s in self._sessions.get(game_id, ())
            if s.results_in_prompts and s.seat in to_act and s.seat != seat
        }
        others = [(m, t) for m, t in held if m.seat != seat and m.seat not in waiting]
        if own:
            chosen = own[-1]
        elif others:
            chosen = max(others, key=lambda each: not each[0].result.error.code)
        else:
            self._held[game_id] = held
            return [], None
        alone = [m for m, _ in own if m is not chosen[0]]
        for _, timer in [*own, chosen]:
            timer.cancel()
        left = [(m, t) for m, t in held if m.seat != seat and m is not chosen[0]]
        if left:
            self._held[game_id] = left
        return alone, chosen[0]

    def _settle(self, game_id: str) -> None:
        """An act of ``game_id`` is answered (its result held or sent)."""
        left = self._inflight.get(game_id, 1) - 1
        if left > 0:
            self._inflight[game_id] = left
            return
        self._inflight.pop(game_id, None)
        settled = self._settling.pop(game_id, None)
        if settled is not None and not settled.done():
            settled.set_result(None)

    async def _settled(self, game_id: str) -> None:
        """Wait (at most SETTLE_SECONDS) until no act of ``game_id`` received on this
        stream is still unanswered: a prompt goes out after the answers it can carry."""
        if not self._inflight.get(game_id):
            return
        settled = self._settling.get(game_id)
        if settled is None:
            settled = asyncio.get_running_loop().create_future()
            self._settling[game_id] = settled
        await asyncio.wait({settled}, timeout=SETTLE_SECONDS)

    async def _release_game(self, game_id: str) -> None:
        """A session of ``game_id`` ends: every result held for its game goes alone
        (before its closed)."""
        for message in self._take_held(game_id, -1)[0]:
            await self._send(message)
        if not self._sessions.get(game_id):
            self._prompted.pop(game_id, None)
            self._landed.pop(game_id, None)
