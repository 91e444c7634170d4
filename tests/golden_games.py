"""Golden game transcripts: behaviour pinned by games recorded once, not by the code itself.

Each transcript is one seeded game of a rule set (both presets and two custom rule
sets, stored whole so that the file stands on its own), played by uniform-random
or greedy seats.  It keeps the action list and, per action, a digest of the events
it produced and of the legal actions every seat to act had before it; at the end, a
digest of the final state's stored form, of every seat's view and of the
spectator's.  ``tests/unit/test_golden_games.py`` replays the actions on today's
engine and compares every digest, so a refactoring that changes any rule, event,
legal-action order, view or stored field fails at the first action it changes.

Recorded with ``python -m tests.golden_games --write`` (only when a rule change is
meant: the goldens are the previous behaviour, and a diff in them is a rule change
to review).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.actions import Action, action_from_dict, action_to_dict
from engine.game import GameState
from engine.rulesets import CONTRACT, WHISKERTRAIL, RuleSet
from engine.views import seat_view, spectator_view
from tests.support.rulesets import CUSTOM_MAYI, CUSTOM_MIX

GOLDEN_FILE = Path(__file__).parent / "data" / "golden-games.jsonl.gz"
GAMES_PER_RULESET = 24


def digest(value: Any) -> str:
    """A short digest of a JSON-able value (sorted keys: dict order is not behaviour)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# The two custom rule sets of the random-playout tests, renamed (the file stores
# each rule set whole, so a replay does not depend on these definitions).
GOLDEN_MIX = dataclasses.replace(CUSTOM_MIX, name="golden-mix")
GOLDEN_MAYI = dataclasses.replace(CUSTOM_MAYI, name="golden-mayi")


def rule_sets() -> list[RuleSet]:
    return [WHISKERTRAIL, CONTRACT, GOLDEN_MIX, GOLDEN_MAYI]


@dataclass(frozen=True)
class GameSpec:
    rules: RuleSet
    seats: int
    seed: bytes
    players: str  # "random" | "greedy"
    choice_seed: int


def specs() -> Iterator[GameSpec]:
    for rules in rule_sets():
        for i in range(GAMES_PER_RULESET):
            span = rules.max_players - rules.min_players + 1
            seats = rules.min_players + i % span
            players = "random" if i % 2 == 0 else "greedy"
            seed = hashlib.sha256(f"golden/{rules.name}/{i}".encode()).digest()[:16]
            yield GameSpec(rules, seats, seed, players, 1000 + i)


def _legal_digest(state: GameState) -> str:
    return digest(
        [[seat, [action_to_dict(a) for a in state.legal_actions(seat)]] for seat in state.to_act]
    )


def _final(state: GameState) -> dict[str, str]:
    return {
        "state": digest(state.to_dict()),
        "views": digest([seat_view(state, s) for s in range(state.seats)]),
        "spectator": digest(spectator_view(state)),
        "scores": ",".join(str(s) for s in state.scores),
    }


def record(spec: GameSpec) -> dict[str, Any]:
    """Play one game and record its transcript."""
    # only to record: a replay needs the engine alone
    from clients.bots import Situation, make_bot

    state, first = GameState.new_game_with_events(spec.rules, spec.seats, spec.seed)
    rng = random.Random(spec.choice_seed)
    greedy = [make_bot("greedy", spec.choice_seed * 10 + s) for s in range(spec.seats)]
    for s, bot in enumerate(greedy):
        bot.setup(spec.rules, s)
    steps: list[list[Any]] = []
    while not state.is_terminal():
        legal_digest = _legal_digest(state)
        if spec.players == "random":
            seat = state.to_act[rng.randrange(len(state.to_act))]
            legal = state.legal_actions(seat)
            action = legal[rng.randrange(len(legal))]
        else:
            seat = state.to_act[0]
            action = greedy[seat].choose(
                Situation.from_state(state, seat), state.legal_actions(seat), rng
            )
        state, events = state.apply_action(seat, action)
        steps.append(
            [seat, action_to_dict(action), legal_digest, digest([e.to_dict() for e in events])]
        )
    return {
        "rules": spec.rules.to_dict(),
        "rules_hash": spec.rules.hash,
        "seats": spec.seats,
        "seed": spec.seed.hex(),
        "players": spec.players,
        "first_events": digest([e.to_dict() for e in first]),
        "steps": steps,
        "final": _final(state),
    }


@dataclass(frozen=True)
class Mismatch:
    game: int
    step: int | None
    what: str


def replay(index: int, transcript: Mapping[str, Any]) -> list[Mismatch]:
    """Replay a transcript on today's engine; every digest that differs (the first step only)."""
    rules = RuleSet.from_dict(transcript["rules"])
    out: list[Mismatch] = []
    if rules.hash != transcript["rules_hash"]:
        out.append(Mismatch(index, None, f"rule-set hash {rules.hash}"))
    state, first = GameState.new_game_with_events(
        rules, transcript["seats"], bytes.fromhex(transcript["seed"])
    )
    if digest([e.to_dict() for e in first]) != transcript["first_events"]:
        out.append(Mismatch(index, None, "first deal's events"))
    steps: Sequence[list[Any]] = transcript["steps"]
    for i, (seat, action_dict, legal_digest, events_digest) in enumerate(steps):
        if _legal_digest(state) != legal_digest:
            return [*out, Mismatch(index, i, "legal actions")]
        action: Action = action_from_dict(action_dict)
        state, events = state.apply_action(seat, action)
        if digest([e.to_dict() for e in events]) != events_digest:
            return [*out, Mismatch(index, i, f"events of {action_dict}")]
    if not state.is_terminal():
        out.append(Mismatch(index, len(steps), "the game did not end"))
    final = _final(state)
    for key, expected in transcript["final"].items():
        if final[key] != expected:
            out.append(Mismatch(index, len(steps), f"final {key}"))
    return out


def load() -> list[dict[str, Any]]:
    with gzip.open(GOLDEN_FILE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write() -> int:
    transcripts = [record(spec) for spec in specs()]
    GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
    # mtime 0: the same games give the same bytes, so a re-recording shows as no change
    with (
        open(GOLDEN_FILE, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f,
    ):
        for t in transcripts:
            f.write((json.dumps(t, separators=(",", ":")) + "\n").encode())
    return len(transcripts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the goldens anew")
    args = parser.parse_args()
    if args.write:
        print(f"wrote {write()} transcripts to {GOLDEN_FILE}")
    else:
        bad = [m for i, t in enumerate(load()) for m in replay(i, t)]
        print(f"{len(bad)} mismatches", *bad, sep="\n")


if __name__ == "__main__":
    main()
