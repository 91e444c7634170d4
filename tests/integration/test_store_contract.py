"""One contract, two stores: the embedded memory store and a real Redis behave the same."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.store.base import (
    CellTake,
    GameExistsError,
    GameStore,
    LogItem,
    OpenGame,
    RateRefusedError,
    Write,
)


async def test_create_load_and_refuse_duplicates(store: GameStore) -> None:
    assert await store.load("g1") is None
    await store.create("g1", Write(b"record-0"))
    snapshot = await store.load("g1")
    assert snapshot is not None and snapshot.revision == 1 and snapshot.record == b"record-0"
    with pytest.raises(GameExistsError):
        await store.create("g1", Write(b"other"))
    again = await store.load("g1")
    assert again is not None and again.record == b"record-0"


async def test_compare_and_set_exactly_one_racer_wins(store: GameStore) -> None:
    await store.create("race", Write(b"r0"))
    writes = [
        store.commit("race", 1, Write(f"r{i}".encode(), entry=LogItem(1, f"e{i}".encode())))
        for i in range(8)
    ]
    results = await asyncio.gather(*writes)
    assert sorted(results) == [False] * 7 + [True]
    winner = results.index(True)
    snapshot = await store.load("race")
    assert snapshot is not None and snapshot.revision == 2
    assert snapshot.record == f"r{winner}".encode()
    log = await store.read_log("race", 0)
    assert [(i.version, i.entry) for i in log] == [(1, f"e{winner}".encode())]


async def test_stale_revision_changes_nothing(store: GameStore) -> None:
    await store.create("g", Write(b"a"))
    assert await store.commit("g", 1, Write(b"b", entry=LogItem(1, b"x"), idempotency_key="k"))
    assert not await store.commit("g", 1, Write(b"c", entry=LogItem(2, b"y"), idempotency_key="j"))
    snapshot = await store.load("g")
    assert snapshot is not None and (snapshot.revision, snapshot.record) == (2, b"b")
    assert [i.version for i in await store.read_log("g", 0)] == [1]
    assert await store.idempotent_response("g", "j") is None
    assert not await store.commit("missing", 1, Write(b"z"))


async def test_idempotent_response_is_stored_with_the_write(store: GameStore) -> None:
    await store.create("g", Write(b"a"))
    write = Write(b"b", entry=LogItem(1, b"e"), idempotency_key="0:req-1", response=b"resp")
    assert await store.commit("g", 1, write)
    assert await store.idempotent_response("g", "0:req-1") == b"resp"
    assert await store.idempotent_response("g", "0:req-2") is None


async def test_log_reads_after_a_version(store: GameStore) -> None:
    await store.create("g", Write(b"0"))
    for version in range(1, 6):
        entry = LogItem(version, f"e{version}".encode())
        assert await store.commit("g", version, Write(f"{version}".encode(), entry=entry))
    assert [i.version for i in await store.read_log("g", 0)] == [1, 2, 3, 4, 5]
    assert [i.entry for i in await store.read_log("g", 3)] == [b"e4", b"e5"]
    assert [i.version for i in await store.read_log("g", 1, limit=2)] == [2, 3]
    assert await store.read_log("g", 5) == []


async def test_wait_log_wakes_on_a_new_entry_and_times_out_otherwise(store: GameStore) -> None:
    await store.create("g", Write(b"0"))
    assert await store.wait_log("g", 0, timeout=0.2) == []

    async def later() -> None:
        await asyncio.sleep(0.2)
        await store.commit("g", 1, Write(b"1", entry=LogItem(1, b"first")))

    task = asyncio.create_task(later())
    items = await store.wait_log("g", 0, timeout=5)
    await task
    assert [(i.version, i.entry) for i in items] == [(1, b"first")]


async def test_deadlines_index(store: GameStore) -> None:
    for name in ("a", "b", "c"):
        await store.create(name, Write(b"0"))
    assert await store.commit("a", 1, Write(b"1", deadline=100.0))
    assert await store.commit("b", 1, Write(b"1", deadline=50.0))
    assert await store.commit("c", 1, Write(b"1", deadline=500.0))
    assert await store.due_deadlines(200.0) == ["b", "a"]
    assert await store.commit("b", 2, Write(b"2", deadline=None))
    assert await store.due_deadlines(200.0) == ["a"]


async def test_create_writes_the_new_games_index_entries(store: GameStore) -> None:
    """A game that starts with a deadline running, or with a house bot to move, is
    indexed by its creation itself (no second write a crash could lose)."""
    await store.create("timed", Write(b"0", deadline=100.0))
    await store.create("bots", Write(b"0", bot_turn=True))
    await store.create("plain", Write(b"0"))
    assert await store.due_deadlines(200.0) == ["timed"]
    assert await store.bot_turns() == ["bots"]
    assert await store.games_in_play() == 3
    for game in ("timed", "bots", "plain"):
        snapshot = await store.load(game)
        assert snapshot is not None and (snapshot.revision, snapshot.record) == (1, b"0")


async def test_bot_turn_index(store: GameStore) -> None:
    for name in ("a", "b", "c"):
        await store.create(name, Write(b"0"))
    assert await store.bot_turns() == []
    assert await store.commit("a", 1, Write(b"1", bot_turn=True))
    assert await store.commit("b", 1, Write(b"1", bot_turn=True))
    assert await store.commit("c", 1, Write(b"1"))  # no house bot may act
    assert await store.bot_turns() == ["a", "b"]  # longest waiting first
    assert await store.bot_turns(limit=1) == ["a"]
    assert await store.bot_turns(limit=0) == []
    assert await store.commit("a", 2, Write(b"2", bot_turn=True))  # a's next bot turn
    assert await store.bot_turns() == ["b", "a"]
    # a write that says the index already agrees leaves it alone
    assert await store.commit("b", 2, Write(b"2", bot_turn_changed=False))
    assert await store.bot_turns() == ["b", "a"]
    assert await store.commit("b", 3, Write(b"3"))  # a human's turn now
    assert await store.bot_turns() == ["a"]
    # a losing compare-and-set changes nothing, the index included
    assert not await store.commit("c", 1, Write(b"x", bot_turn=True))
    assert not await store.commit("a", 2, Write(b"x"))
    assert await store.bot_turns() == ["a"]
    assert await store.commit("a", 3, Write(b"3", entry=LogItem(1, b"e"), finished=True))
    assert await store.bot_turns() == []


async def test_bot_turn_leases(store: GameStore) -> None:
    for name in ("a", "b", "c"):
        await store.create(name, Write(b"0"))
        assert await store.commit(name, 1, Write(b"1", bot_turn=True))
    assert await store.bot_turns(limit=2, lease=30) == ["a", "b"]  # claimed
    assert await store.bot_turns() == ["c"]  # a plain look claims nothing
    assert await store.bot_turns() == ["c"]
    # a claimed game's next write stamps a new turn: listed again at once
    assert await store.commit("a", 2, Write(b"2", bot_turn=True))
    assert await store.bot_turns(lease=0.3) == ["c", "a"]
    assert await store.bot_turns() == []
    await asyncio.sleep(0.5)
    # those leases ran out (at the same moment: either order), b's has not
    assert sorted(await store.bot_turns()) == ["a", "c"]
    assert await store.commit("b", 2, Write(b"2"))  # no bot turn: leased or not, gone
    assert await store.commit("b", 3, Write(b"3", bot_turn=True))
    assert (await store.bot_turns())[2:] == ["b"]


async def test_concurrent_claims_never_share_a_turn(store: GameStore) -> None:
    names = [f"g{i}" for i in range(12)]
    for name in names:
        await store.create(name, Write(b"0"))
        assert await store.commit(name, 1, Write(b"1", bot_turn=True))
    claims = await asyncio.gather(*(store.bot_turns(limit=3, lease=30) for _ in range(6)))
    claimed = [gid for claim in claims for gid in claim]
    assert sorted(claimed) == sorted(names)  # each game to exactly one claimant
    assert await store.bot_turns() == []


async def test_bot_turn_index_follows_the_compare_and_set_winner(store: GameStore) -> None:
    for round_ in range(6):
        game = f"race{round_}"
        await store.create(game, Write(b"r0"))
        if round_ % 2:
            assert await store.commit(game, 1, Write(b"r1", bot_turn=True))
        revision = 1 + round_ % 2
        # even racers say a bot may act, odd ones that none may
        writes = [
            store.commit(game, revision, Write(f"w{i}".encode(), bot_turn=i % 2 == 0))
            for i in range(8)
        ]
        results = await asyncio.gather(*writes)
        assert results.count(True) == 1
        winner = results.index(True)
        snapshot = await store.load(game)
        assert snapshot is not None and snapshot.record == f"w{winner}".encode()
        assert (game in await store.bot_turns()) == (winner % 2 == 0), f"round {round_}"


async def test_games_in_play_and_finished_games(store: GameStore) -> None:
    await store.create("x", Write(b"0"))
    await store.create("y", Write(b"0"))
    assert await store.games_in_play() == 2
    assert await store.commit("x", 1, Write(b"done", entry=LogItem(1, b"e"), finished=True))
    assert await store.games_in_play() == 1
    snapshot = await store.load("x")  # finished games stay readable until they expire
    assert snapshot is not None and snapshot.record == b"done"


async def test_ping(store: GameStore) -> None:
    assert await store.ping()


async def test_a_stored_idempotency_key_is_never_committed_twice(store: GameStore) -> None:
    await store.create("g", Write(b"a"))
    first = Write(b"b", entry=LogItem(1, b"e1"), idempotency_key="0:req-1", response=b"r1")
    assert await store.commit("g", 1, first)
    again = Write(b"c", entry=LogItem(2, b"e2"), idempotency_key="0:req-1", response=b"r2")
    assert not await store.commit("g", 2, again)  # right revision, repeated key: nothing
    snapshot = await store.load("g")
    assert snapshot is not None and (snapshot.revision, snapshot.record) == (2, b"b")
    assert [item.entry for item in await store.read_log("g", 0)] == [b"e1"]
    assert await store.idempotent_response("g", "0:req-1") == b"r1"


def _listed(games: list[OpenGame]) -> list[str]:
    return [game.game_id for game in games]


async def test_lobby_lists_games_with_free_seats_by_creation(store: GameStore) -> None:
    """A game enters the lobby at its creation (in the create's atomic step) and keeps
    its place; each rule set has its own index; positions are unique and increasing."""
    await store.create("a1", Write(b"0", open_seats=True, rule_set_hash="A"))
    await store.create("b1", Write(b"0", open_seats=True, rule_set_hash="B"))
    await store.create("full", Write(b"0", rule_set_hash="A"))  # every seat taken
    await store.create("a2", Write(b"0", open_seats=True, rule_set_hash="A"))
    everything = await store.open_games()
    assert _listed(everything) == ["a1", "b1", "a2"]
    positions = [game.position for game in everything]
    assert positions == sorted(set(positions))
    assert abs(positions[0] / 1e6 - time.time()) < 60  # microseconds of the store's clock
    assert _listed(await store.open_games("A")) == ["a1", "a2"]
    assert _listed(await store.open_games("B")) == ["b1"]
    assert await store.open_games("C") == []
    # a write while the game stays open (a seat joined, a move) leaves its place alone
    assert await store.commit("a1", 1, Write(b"1", open_seats=True, rule_set_hash="A"))
    assert await store.commit(
        "a2", 1, Write(b"1", open_seats=True, open_seats_changed=False, rule_set_hash="A")
    )
    assert await store.open_games() == everything


async def test_lobby_pages_from_a_position(store: GameStore) -> None:
    names = [f"g{i}" for i in range(7)]
    for name in names:  # one create after another: often in the same microsecond
        await store.create(
            name, Write(b"0", open_seats=True, rule_set_hash="A" if name < "g4" else "B")
        )
    pages: list[str] = []
    after = 0
    while page := await store.open_games(after=after, limit=3):
        assert len(page) <= 3
        pages.extend(_listed(page))
        after = page[-1].position
    assert pages == names  # every game once, in order: no tie lost at a page's edge
    first = await store.open_games("B", limit=2)
    assert _listed(first) == ["g4", "g5"]
    assert _listed(await store.open_games("B", after=first[-1].position)) == ["g6"]
    assert await store.open_games(limit=0) == []


async def test_lobby_loses_a_game_when_its_last_seat_is_taken_or_it_ends(store: GameStore) -> None:
    for name in ("filled", "over", "staying"):
        await store.create(name, Write(b"0", open_seats=True, rule_set_hash="A"))
    assert await store.commit("filled", 1, Write(b"1", rule_set_hash="A"))  # the last seat
    over = Write(b"1", entry=LogItem(1, b"e"), finished=True, rule_set_hash="A")
    assert await store.commit("over", 1, over)
    # a losing compare-and-set changes nothing, the lobby included
    assert not await store.commit("staying", 7, Write(b"x", rule_set_hash="A"))
    assert _listed(await store.open_games()) == ["staying"]
    assert _listed(await store.open_games("A")) == ["staying"]
    # a write that says the lobby already agrees leaves it alone
    assert await store.commit("staying", 1, Write(b"1", open_seats_changed=False))
    assert _listed(await store.open_games("A")) == ["staying"]


async def test_lobby_follows_the_compare_and_set_winner(store: GameStore) -> None:
    for round_ in range(4):
        game = f"race{round_}"
        await store.create(game, Write(b"r0", open_seats=True, rule_set_hash="A"))
        # even racers take the last seat, odd ones leave one free
        writes = [
            store.commit(game, 1, Write(f"w{i}".encode(), open_seats=i % 2 == 1, rule_set_hash="A"))
            for i in range(8)
        ]
        results = await asyncio.gather(*writes)
        assert results.count(True) == 1
        winner = results.index(True)
        listed = _listed(await store.open_games("A"))
        assert (game in listed) == (winner % 2 == 1), f"round {round_}"


# ------------------------------------------------------------------ the limits' cells and sets


async def test_a_rate_cell_admits_its_burst_then_refuses_with_the_wait(store: GameStore) -> None:
    # a request a second, five at once: a second is the margin the last two takes have
    # before the next token (a tenth of a second was too little on a loaded machine)
    rate, burst = 1.0, 5
    answers = [await store.take("client-a", rate, burst) for _ in range(burst)]
    assert all(a.allowed for a in answers)
    refused = await store.take("client-a", rate, burst)
    assert not refused.allowed
    assert 0 < refused.retry_after <= 1 / rate + 0.05  # the next token's refill, no more
    # another key has its own cell
    assert (await store.take("client-b", rate, burst)).allowed
    # a refusal takes nothing: once the wait has passed, exactly one more is admitted
    await asyncio.sleep(refused.retry_after + 0.02)
    assert (await store.take("client-a", rate, burst)).allowed
    assert not (await store.take("client-a", rate, burst)).allowed


async def test_a_rate_cell_takes_its_cost_and_never_more_than_its_burst(store: GameStore) -> None:
    assert (await store.take("c", 1.0, 4, cost=3)).allowed
    second = await store.take("c", 1.0, 4, cost=3)  # 6 > 4: refused, 2 s until there is room
    assert not second.allowed and 1.5 < second.retry_after <= 2.05
    assert (await store.take("c", 1.0, 4, cost=1)).allowed


async def test_a_commit_takes_its_games_cell_in_the_same_step(store: GameStore) -> None:
    """``Write.take``: the commit takes one from a cell of its game (the cell that
    ``take`` with the game's id takes), after its compare-and-set passed; refused by
    the cell, it raises RateRefusedError with the wait, and nothing changes."""
    cell = CellTake("act:seat:0", 10.0, 2)  # a request every 0.1 s, two at once
    await store.create("g", Write(b"r0"))
    assert await store.commit("g", 1, Write(b"r1", entry=LogItem(1, b"e1"), take=cell))
    # a commit refused by its compare-and-set takes nothing
    assert not await store.commit("g", 1, Write(b"x", entry=LogItem(1, b"x"), take=cell))
    assert (await store.take("act:seat:0", 10.0, 2, game_id="g")).allowed  # the same cell
    with pytest.raises(RateRefusedError) as refused:
        await store.commit("g", 2, Write(b"r2", entry=LogItem(2, b"e2"), take=cell))
    assert 0 < refused.value.retry_after <= 0.1 + 0.05
    snapshot = await store.load("g")
    assert snapshot is not None and (snapshot.revision, snapshot.record) == (2, b"r1")
    assert await store.read_log("g", 0) == [LogItem(1, b"e1")]
    # another game's cell of that name, and a cell of no game, are other cells
    assert (await store.take("act:seat:0", 10.0, 2)).allowed
    await store.create("h", Write(b"h0"))
    assert await store.commit("h", 1, Write(b"h1", take=cell))
    # once the wait has passed the commit is admitted
    await asyncio.sleep(refused.value.retry_after + 0.02)
    assert await store.commit("g", 2, Write(b"r2", entry=LogItem(2, b"e2"), take=cell))


async def test_a_bounded_set_holds_up_to_its_limit_and_renews(store: GameStore) -> None:
    assert await store.hold("watchers", "s1", 2, 60)
    assert await store.hold("watchers", "s2", 2, 60)
    assert not await store.hold("watchers", "s3", 2, 60)  # full: nothing changes
    assert sorted(await store.held("watchers")) == ["s1", "s2"]
    assert await store.hold("watchers", "s1", 2, 60)  # a member renews, full or not
    await store.release("watchers", "s1", "absent")
    assert await store.held("watchers") == ["s2"]
    assert await store.hold("watchers", "s3", 2, 60)
    assert sorted(await store.held("watchers")) == ["s2", "s3"]
    await store.release("watchers", "s2", "s3")
    assert await store.held("watchers") == []


async def test_a_lease_that_is_not_renewed_ends(store: GameStore) -> None:
    assert await store.hold("streams", "gone", 1, 0.2)
    assert not await store.hold("streams", "new", 1, 60)
    await asyncio.sleep(0.3)  # the store's clock passes the lease: its member stops counting
    assert await store.held("streams") == []
    assert await store.hold("streams", "new", 1, 60)
    assert await store.held("streams") == ["new"]


async def test_unfinished_names_the_games_in_play_only(store: GameStore) -> None:
    await store.create("playing", Write(b"0"))
    await store.create("over", Write(b"0"))
    assert await store.commit("over", 1, Write(b"1", finished=True))
    assert await store.unfinished(["playing", "over", "never"]) == {"playing"}
    assert await store.unfinished([]) == set()


async def test_the_memory_store_limits_run_on_its_injected_clock() -> None:
    """The memory store's cells and leases follow its clock (Redis's follow TIME):
    no sleeping, and the expired cells and sets are dropped (its memory stays bounded)."""
    from services.store.memory import MemoryStore

    now = [1000.0]
    store = MemoryStore(clock=lambda: now[0])
    assert [(await store.take("k", 2.0, 2)).allowed for _ in range(3)] == [True, True, False]
    now[0] += 0.5  # one request's refill
    assert (await store.take("k", 2.0, 2)).allowed
    assert await store.hold("s", "m", 1, 10)
    now[0] += 10
    assert await store.held("s") == []
    for i in range(3000):  # a flood of clients, each once: the sweeps drop them
        await store.take(f"client-{i}", 1000.0, 1)
        now[0] += 0.01
    assert len(store._cells) < 1100
