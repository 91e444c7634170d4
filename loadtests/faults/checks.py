"""Each game checked against the store and the public API, once the campaign is over."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from clients.sdk import GlintwickClient
from engine.game import GameState
from glintwick import convert
from glintwick.storage.v1 import storage_pb2 as spb
from loadtests.faults.figures import Game
from services.codec import state_from_pb
from services.store.base import GameStore


@dataclass
class Verdict:
    lost: int = 0  # acknowledged moves missing from the log
    duplicated: int = 0  # a request id applied twice
    unacknowledged: int = 0  # logged moves the client never had answered
    state_mismatches: int = 0
    unfinished: int = 0
    stream_faults: int = 0  # a watcher or play session that missed or repeated an event
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.duplicated
            or self.unacknowledged
            or self.state_mismatches
            or self.unfinished
            or self.stream_faults
        )


def check_stream(received: list[tuple[int, int]], expected: list[tuple[int, int]]) -> bool:
    """Every event after the first received, exactly once and in order."""
    # (a stream opened at version 0 gets round 1's deal first: version 0, in no log entry)
    received = [r for r in received if r[0] > 0] if received and received[0][0] == 0 else received
    if not received or received[0] not in expected:
        return False
    start = expected.index(received[0])
    return received == expected[start:]


async def check_game(
    store: GameStore, client: GlintwickClient, game: Game, verdict: Verdict
) -> None:
    snapshot = await store.load(game.game_id)
    if snapshot is None:
        verdict.lost += len(game.acked)
        verdict.problems.append(f"{game.game_id}: no record")
        return
    record = spb.StoredGame.FromString(snapshot.record)
    entries: list[spb.LogEntry] = []
    while True:
        items = await store.read_log(game.game_id, len(entries))
        if not items:
            break
        entries += [spb.LogEntry.FromString(i.entry) for i in items]
    if [e.version for e in entries] != list(range(1, len(entries) + 1)):
        verdict.state_mismatches += 1
        verdict.problems.append(f"{game.game_id}: the log's versions have a gap")
    logged = collections.Counter(e.request_id for e in entries)
    verdict.duplicated += sum(n - 1 for n in logged.values() if n > 1)
    by_version = {e.version: e.request_id for e in entries}
    for version, request_id in game.acked.items():
        if by_version.get(version) != request_id:
            verdict.lost += 1
            verdict.problems.append(f"{game.game_id}: acknowledged v{version} is not logged")
    for version, request_id in by_version.items():
        if version not in game.acked:
            verdict.unacknowledged += 1
            verdict.problems.append(
                f"{game.game_id}: v{version} ({request_id}) is logged, never acknowledged"
            )
    state = state_from_pb(record.state)
    if not (game.over and state.is_terminal()):
        verdict.unfinished += 1
        verdict.problems.append(f"{game.game_id}: not over")
        return
    replay = await client.replay(game.game_id)
    rules = convert.rules_from_pb(replay.game.rule_set)
    orders = {d.round: list(d.cards) for d in replay.decks}
    replayed = GameState.new_game(
        rules, replay.game.seats, convert.seed_from_hex(replay.seed), stock_orders=orders or None
    )
    events: list[tuple[int, int]] = []
    for entry in entries:
        replayed, produced = replayed.apply_action(entry.seat, convert.action_from_pb(entry.action))
        events += [(entry.version, i) for i in range(len(produced))]
    if replayed != state:
        verdict.state_mismatches += 1
        verdict.problems.append(f"{game.game_id}: the stored state is not its log's replay")
    for received in game.streams:
        if not check_stream(received, events):
            verdict.stream_faults += 1
            verdict.problems.append(
                f"{game.game_id}: a stream got {received[:3]}… of {events[:3]}…"
            )
