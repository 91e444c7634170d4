"""What the campaign counts: its figures, each game's acknowledged moves, and the
recovery after a fault."""

from __future__ import annotations

import collections
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clients.sdk import CallError


@dataclass
class Figures:
    games: int = 0
    finished: int = 0
    moves: int = 0  # acknowledged
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    ack_times: list[float] = field(default_factory=list)  # monotonic, one per acked move
    faults: list[dict[str, Any]] = field(default_factory=list)
    watch_resumes: int = 0
    abandoned: int = 0  # tables left for a join refused SEAT_TAKEN (see new_game): 0
    play_resumes: int = 0

    samples: dict[str, str] = field(default_factory=dict)  # a message per reason
    # refusals no retry cured: how many of each call and code, and the first's
    # message and time (monotonic)
    fatal: collections.Counter[str] = field(default_factory=collections.Counter)
    first_fatal: dict[str, tuple[float, str]] = field(default_factory=dict)

    def refused(self, call: str, error: CallError) -> None:
        what = f"{call} {error.code.name}"
        self.fatal[what] += 1
        self.first_fatal.setdefault(what, (time.monotonic(), error.message[:160]))

    def error(self, code: str, message: str = "") -> None:
        self.errors[code] += 1
        if message:
            self.samples.setdefault(code, message[:160])


@dataclass
class Game:
    game_id: str
    tokens: list[str]
    by_play: bool
    acked: dict[int, str] = field(default_factory=dict)  # version → "seat:request id"
    acked_at: list[float] = field(default_factory=list)  # monotonic, one per acked move
    streams: list[list[tuple[int, int]]] = field(default_factory=list)  # (version, index)
    over: bool = False


def recovery_seconds(acks: Sequence[float], start: float, until: float) -> float | None:
    """From ``start`` to the first acknowledged move of the first second (windows 0.1 s
    apart) whose moves are back to half their rate in the 5 s before ``start`` (None:
    not within ``until``)."""
    before = sum(1 for t in acks if start - 5 <= t < start) / 5
    if before == 0:
        return None
    at = start
    while at + 1 <= until:
        window = [t for t in acks if at <= t < at + 1]
        if window and len(window) >= before / 2:
            return round(min(window) - start, 2)
        at += 0.1
    return None


def worst_stall(games: Sequence[Game], start: float) -> tuple[float, str] | None:
    """The longest a game in play at ``start`` waited, from its last acknowledged move
    before ``start`` to its next (a fault that strikes some games only, a cluster's
    primary, hardly moves the rate that :func:`recovery_seconds` follows), and that
    game (its id, "play" if on a Play session: to find it in the servers' logs)."""
    waits = []
    for game in games:
        before = [t for t in game.acked_at if t < start]
        after = [t for t in game.acked_at if t >= start]
        if before and after:
            waits.append((after[0] - before[-1], game.game_id + (" play" if game.by_play else "")))
    if not waits:
        return None
    wait, game_id = max(waits)
    return round(wait, 2), game_id


def server_log_errors(logs: Path) -> collections.Counter[str]:
    """The servers' log lines at level error or above, by event (a fault must not
    make a server log a bug: tracebacks, a failed log reader)."""
    found: collections.Counter[str] = collections.Counter()
    for log in sorted(logs.glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict) and entry.get("level") in ("error", "critical"):
                    found[str(entry.get("event"))] += 1
    return found
