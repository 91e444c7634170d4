"""Replayable game logs: the seed, the rule set, the environment's version and, per
decision, the seat and its action index (numpy-free: a tournament records with it).

One JSON file per game (``game-<index>.json``)::

    {"format": 1, "env": "whiskertrail_v0", "env_version": 0, "rules_hash": "…",
     "rules": {…}, "seats": 2, "seed": "<hex>", "layouts": 8, "bots": ["expert", …],
     "steps": [[seat, index], …], "scores": […]}

Only the environment's decisions are logged (:mod:`clients.training.decisions`): a pass
nobody needs to ask for is not.  Replaying the steps in the environment
(:mod:`clients.training.dataset`) deals the same game and reaches the same scores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clients.training.actions import DEFAULT_LAYOUTS, ActionLayout, index_of
from clients.training.decisions import forced_pass
from engine.actions import Action
from engine.game import GameState

__all__ = ["ENV_VERSION", "LOG_FORMAT", "GameRecorder", "read_log"]

LOG_FORMAT = 1
ENV_VERSION = 0  # clients.training.env.ENV_VERSION (kept equal by a test: no numpy here)


class GameRecorder:
    """Records one game's decisions as it is played on the engine."""

    def __init__(
        self, game: GameState, bots: Sequence[str] = (), layouts: int = DEFAULT_LAYOUTS
    ) -> None:
        self.layout = ActionLayout.for_rules(game.rules, layouts)
        self.header: dict[str, Any] = {
            "format": LOG_FORMAT,
            "env": f"{game.rules.name}_v{ENV_VERSION}",
            "env_version": ENV_VERSION,
            "rules_hash": game.rules.hash,
            "rules": game.rules.to_dict(),
            "seats": game.seats,
            "seed": game.seed.hex(),
            "layouts": layouts,
            "bots": list(bots),
        }
        self.steps: list[tuple[int, int]] = []

    def record(self, before: GameState, seat: int, action: Action) -> None:
        """``seat`` took ``action`` in ``before`` (a legal action of the engine's list)."""
        if forced_pass(before, seat):
            return
        self.steps.append((seat, index_of(self.layout, action, before.hands[seat])))

    def to_dict(self, final: GameState) -> dict[str, Any]:
        return {**self.header, "steps": self.steps, "scores": list(final.scores)}

    def write(self, directory: Path, index: int, final: GameState) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"game-{index:06d}.json"
        path.write_text(json.dumps(self.to_dict(final), separators=(",", ":")) + "\n")
        return path


def read_log(path: Path) -> dict[str, Any]:
    """One game's log; ValueError when it is not one."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("format") != LOG_FORMAT:
        raise ValueError(f"{path}: not a game log of format {LOG_FORMAT}")
    return data
