"""A tournament split into shards: each plays its share of the deal sets, then one merge.

Shard ``i`` of ``n`` (``--shard i/n``, ``i`` from 0: a Kubernetes Indexed Job's
completion index) plays the deal sets of the deals ``d`` with ``d % n == i``: every
game of a deal set in one shard, as the statistics pair them.  A game's bots are
seeded from the tournament seed and the game's deal, rotation and seats, never from
the shard, so the shards play exactly the games one process would.

Each shard appends one JSON line per finished game to its results file, after a
header line naming the tournament (rule set, bots, seats, schedule, deals, seed) and
the shard; a shard started again on the same file checks the header and plays only
the games not in it, so a killed shard resumes without replaying a finished game (a
line cut by the kill is dropped and its game played again).  :func:`merge` reads
every shard's file, checks that they are the shards of one tournament and that
every game is there exactly once, and gives the summary one process would give.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.tournament import schedule as sched
from clients.tournament.runner import GameResult
from engine.rulesets import RuleSet

FORMAT = "glintwick-tournament-shard/1"


class ShardError(ValueError):
    """A shard or a merge that cannot be right: a bad ``i/n``, results of another
    tournament, a game missing or played twice."""


@dataclass(frozen=True, slots=True)
class Shard:
    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        index, slash, count = text.partition("/")
        try:
            shard = cls(int(index), int(count))
        except ValueError:
            shard = None
        if not slash or shard is None or not 0 <= shard.index < shard.count:
            raise ShardError(f"a shard is i/n with 0 <= i < n, not {text!r}")
        return shard

    def holds(self, spec: sched.GameSpec) -> bool:
        return spec.deal % self.count == self.index

    def file(self, out: Path) -> Path:
        return out / f"shard-{self.index}-of-{self.count}.jsonl"


@dataclass(frozen=True, slots=True)
class Plan:
    """What a tournament is, as far as its games go: enough to schedule them again."""

    rules: RuleSet
    bots: tuple[str, ...]
    seats: int
    schedule: str
    deals: int
    seed: int
    seating: str = "balanced"

    def games(self) -> list[sched.GameSpec]:
        return sched.games(
            list(self.bots),
            self.seats,
            self.deals,
            self.seed,
            self.schedule,
            seating=self.seating,
        )

    def header(self, shard: Shard) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "rules": self.rules.to_dict(),
            "ruleset_hash": self.rules.hash,
            "bots": list(self.bots),
            "seats": self.seats,
            "schedule": self.schedule,
            "deals": self.deals,
            "seed": self.seed,
            "seating": self.seating,
            "shard": [shard.index, shard.count],
        }

    @classmethod
    def from_header(cls, header: dict[str, Any]) -> tuple[Plan, Shard]:
        if header.get("format") != FORMAT:
            raise ShardError(f"not a tournament shard's results (format {header.get('format')!r})")
        rules = RuleSet.from_dict(header["rules"])
        if rules.hash != header["ruleset_hash"]:
            raise ShardError("the results' rule set does not match its hash")
        plan = cls(
            rules,
            tuple(header["bots"]),
            int(header["seats"]),
            str(header["schedule"]),
            int(header["deals"]),
            int(header["seed"]),
            str(header.get("seating", "balanced")),
        )
        index, count = header["shard"]
        return plan, Shard(int(index), int(count))


def _row(result: GameResult) -> dict[str, Any]:
    return {**result.row(), "mode": result.mode, "game_id": result.game_id}


def _result(row: dict[str, Any], spec: sched.GameSpec, plan: Plan) -> GameResult:
    if row["seats"] != list(spec.seats) or row["seed"] != spec.seed.hex():
        raise ShardError(f"game {spec.index} of the results is not the tournament's game")
    return GameResult(
        spec,
        [int(x) for x in row["scores"]],
        [int(x) for x in row["winners"]],
        plan.rules.hash,
        plan.seed,
        str(row["mode"]),
        game_id=str(row.get("game_id", "")),
        moves=int(row["moves"]),
        illegal=int(row["illegal"]),
        timeouts=int(row["timeouts"]),
        errors=int(row["errors"]),
        round_ends=[str(x) for x in row.get("round_ends", [])],
    )


def read(path: Path) -> tuple[Plan, Shard, list[dict[str, Any]]]:
    """A results file: its tournament, its shard, and its whole game lines (a last line
    cut short by a kill, with no newline yet, is left out: its game was not recorded)."""
    lines = path.read_text().split("\n")
    lines.pop()  # "" after the last newline, or the cut line
    try:
        plan, shard = Plan.from_header(json.loads(lines[0]))
    except (IndexError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ShardError(f"{path}: no tournament header ({exc})") from None
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise ShardError(f"{path}: line {number} is not a game") from None
    return plan, shard, rows


def results(path: Path) -> list[GameResult]:
    """The games of one shard's file so far, in schedule order."""
    plan, shard, rows = read(path)
    specs = {s.index: s for s in plan.games() if shard.holds(s)}
    found = {int(r["index"]): r for r in rows}
    strays = sorted(found.keys() - specs.keys())
    if strays:
        raise ShardError(f"{path}: game {strays[0]} is not one of shard {shard.index}'s")
    return [_result(found[i], specs[i], plan) for i in sorted(found)]


class ShardWriter:
    """One shard's results file: opened (created, or resumed), then one line per game."""

    def __init__(self, path: Path, plan: Plan, shard: Shard) -> None:
        self.path = path
        self.plan = plan
        self.shard = shard
        self.done: set[int] = set()
        if path.exists() and path.stat().st_size:
            found, found_shard, rows = read(path)
            if (found, found_shard) != (plan, shard):
                raise ShardError(f"{path} holds the results of another tournament or shard")
            self.done = {int(r["index"]) for r in rows}
            self._truncate_a_cut_line()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            # the header whole or not at all: a kill while it is written leaves no file
            # that can never be resumed
            partial = path.with_name(path.name + ".partial")
            partial.write_text(json.dumps(plan.header(shard)) + "\n")
            partial.replace(path)

    def _truncate_a_cut_line(self) -> None:
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            self.path.write_bytes(data[: data.rfind(b"\n") + 1])

    def todo(self) -> list[sched.GameSpec]:
        """The shard's games not played yet, in schedule order."""
        return [s for s in self.plan.games() if self.shard.holds(s) and s.index not in self.done]

    def add(self, result: GameResult) -> None:
        with self.path.open("a") as out:
            out.write(json.dumps(_row(result)) + "\n")
            out.flush()
        self.done.add(result.spec.index)


def merge(paths: Iterable[Path]) -> tuple[Plan, list[GameResult]]:
    """Every game of a sharded tournament from its shards' files, in schedule order."""
    files = [
        file
        for path in paths
        for file in (sorted(path.glob("shard-*.jsonl")) if path.is_dir() else [path])
    ]
    if not files:
        raise ShardError("no shard results to merge")
    first: Plan | None = None
    shards: dict[int, int] = {}
    rows: dict[int, dict[str, Any]] = {}
    for file in files:
        plan, shard, found = read(file)
        first = first or plan
        if plan != first:
            raise ShardError(f"{file} holds the results of another tournament")
        if shard.index in shards:
            raise ShardError(f"shard {shard.index} is there twice ({file})")
        shards[shard.index] = shard.count
        for row in found:
            index = int(row["index"])
            if index in rows:
                raise ShardError(f"game {index} is in the results twice ({file})")
            rows[index] = row
    if first is None:
        raise ShardError("no shard results to merge")
    plan = first
    counts = set(shards.values())
    if len(counts) != 1 or sorted(shards) != list(range(next(iter(counts)))):
        raise ShardError(f"the shards are not 0..n-1 of one n: {sorted(shards.items())}")
    specs = plan.games()
    strays = sorted(rows.keys() - {s.index for s in specs})
    if strays:
        raise ShardError(f"game {strays[0]} of the results is not one of the tournament's")
    missing = [s.index for s in specs if s.index not in rows]
    if missing:
        raise ShardError(f"{len(missing)} games are missing (first: game {missing[0]})")
    return plan, [_result(rows[s.index], s, plan) for s in specs]
