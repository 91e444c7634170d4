"""Every round's end of a game, read from the public SSE watch (``GET
/v1/games/{id}:watch``, as a spectator: no token), not from the page's log, which keeps
only its last lines. :class:`RoundWatch` reads the stream in a thread from the game's
first event (``from_version=0``) to ``game_ended``, and keeps, per round, why it ended
(``went_out``, ``dead``, ``dry``, ``turn_cap``: the 200-turn valve, ``exhaustions``),
who went out, its completed turns and when the server settled it.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Any

#: RoundEndReason (game.proto) as the JSON of the SSE events names it
REASON_PREFIX = "ROUND_END_REASON_"
#: the round end that is the 200-turn safety valve
VALVE = "turn_cap"


@dataclass
class RoundEnd:
    round: int
    reason: str  # went_out, dead, dry, turn_cap, exhaustions
    seat: int | None  # who went out
    turns: int  # the round's completed turns
    seconds: float  # when the server settled it, from the watch's start
    penalties: list[int] = field(default_factory=list)


class RoundWatch:
    """The SSE watch of one game, read in a thread (start, then :meth:`wait`)."""

    def __init__(self, base: str, game_id: str) -> None:
        self.url = f"{base}/v1/games/{game_id}:watch?from_version=0"
        self.started = time.monotonic()
        self.ends: list[RoundEnd] = []
        self.game_over = False
        self.error: str | None = None
        self._turns = 0
        self._thread = threading.Thread(target=self._read, daemon=True, name="round-watch")
        self._thread.start()

    def _read(self) -> None:
        try:
            request = urllib.request.Request(self.url, headers={"Accept": "text/event-stream"})
            # (an idle stream sends a keep-alive comment every 15 s)
            with urllib.request.urlopen(request, timeout=120) as stream:
                kind = ""
                for raw in stream:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:") and kind == "event":
                        self._event(json.loads(line[5:]))
                        if self.game_over:
                            return
        except Exception as exc:  # (told by wait(): the test fails on it)
            self.error = f"{type(exc).__name__}: {exc}"

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type", "")
        if kind == "EVENT_TYPE_TURN_ENDED":
            self._turns = int(event.get("turnEnded", {}).get("turnsCompleted", 0))
        elif kind == "EVENT_TYPE_ROUND_ENDED":
            ended = event.get("roundEnded", {})
            reason = str(ended.get("reason", "")).removeprefix(REASON_PREFIX).lower()
            self.ends.append(
                RoundEnd(
                    round=int(ended.get("round", 0)),
                    reason=reason,
                    seat=event.get("seat"),
                    turns=self._turns,
                    seconds=round(time.monotonic() - self.started, 1),
                    penalties=[int(p) for p in ended.get("penalties", [])],
                )
            )
            self._turns = 0
        elif kind in ("EVENT_TYPE_GAME_ENDED", "EVENT_TYPE_GAME_ABANDONED"):
            self.game_over = True

    def wait(self, seconds: float = 30) -> list[RoundEnd]:
        """Every round's end, once the stream has told the game's end."""
        self._thread.join(seconds)
        assert self.error is None, f"the watch failed: {self.error}"
        assert self.game_over, f"the watch saw no game end: {self.ends}"
        return self.ends

    def report(self) -> list[dict[str, Any]]:
        return [asdict(e) for e in self.ends]
