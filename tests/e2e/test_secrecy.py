"""Secrecy over every response and stream: a whole game is played while every seat and a
spectator watch it (gRPC, and HTTP/SSE for one seat and the spectator), and the seats
keep asking for views, legal actions, validations and refused moves.  Every card any
of it shows must be one its viewer may know (tests/e2e/support.py: Mirror), and no
seed may show before its time; the views and events must also be exactly the
engine's, redacted for the viewer."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from clients.sdk import CallError, Seat, actions
from engine.rulesets import PRESETS
from glintwick.v1 import game_pb2 as pb
from tests.e2e.support import (
    Env,
    Mirror,
    Played,
    action_cards,
    check_clean,
    check_events,
    event_data,
    plain,
    play_game,
    sse_watch,
    until,
)

#: the probes (every seat's view, a spectator's, legal actions of a seat that may not
#: act, a validation and a refused move naming secret cards) run every PROBE_EVERY
#: actions and at every new round
PROBE_EVERY = 9


@pytest.mark.parametrize(("rules", "seats"), [("whiskertrail", 3), ("contract", 4)])
async def test_nothing_leaks(server: Env, rules: str, seats: int) -> None:
    seed = f"secrecy/{rules}/{server.store}".encode()
    game, joined = await server.new_game(rules, seats, seed)
    mirror = Mirror(PRESETS[rules], seats, seed)
    viewers: list[int | None] = [*range(seats), None]
    client = server.client
    rng = random.Random(f"probe/{rules}")

    async def watch(viewer: int | None, into: list[pb.WatchGameResponse]) -> None:
        token = joined[viewer].token if viewer is not None else None
        async for item in client.watch(game.game_id, token=token):
            into.append(item)

    streams: dict[int | None, list[pb.WatchGameResponse]] = {v: [] for v in viewers}
    http_streams: dict[int | None, list[pb.WatchGameResponse]] = {0: [], None: []}
    tasks: list[asyncio.Task[object]] = [
        asyncio.create_task(watch(v, items)) for v, items in streams.items()
    ]
    tasks += [
        asyncio.create_task(
            sse_watch(server.http, game.game_id, joined[v].token if v is not None else None, 0, i)
        )
        for v, i in http_streams.items()
    ]
    everyone = [*streams.values(), *http_streams.values()]
    await until(lambda: all(everyone), "every watcher's snapshot")
    probes = {"views": 0, "legal": 0, "validations": 0, "refusals": 0}

    def check_view(view: pb.View, viewer: int | None, what: str, exact: bool = True) -> None:
        version = view.version
        if exact:  # (the conversion is slow: probes compare one view in each round of them)
            assert view == mirror.expected_view(viewer, version, game.game_id), what
        check_clean(mirror.rules, view, mirror.view_rules(viewer, version), what)
        if viewer is None:
            assert not view.HasField("seat") and not view.hand, f"{what}: a spectator's hand"
        if not mirror.states[version].is_terminal():
            assert view.seed == "", f"{what}: the seed before the game is over"

    def secret_targets(viewer: int) -> list[int]:
        """Cards the viewer may not know (another hand, the stock), to name in requests."""
        rules_now = mirror.view_rules(viewer, mirror.version)
        return sorted(rules_now.secret - rules_now.known) or sorted(rules_now.secret)

    async def probe(played: Played, actor: int) -> None:
        version = mirror.version
        new_round = mirror.states[version].round_number != mirror.states[version - 1].round_number
        if version % PROBE_EVERY and not new_round:
            return
        exact = rng.choice(viewers)
        for viewer in viewers:
            seat: Seat | None = joined[viewer] if viewer is not None else None
            view = await (seat.view() if seat is not None else client.spectate(game.game_id))
            check_view(view, viewer, f"v{version} view of {viewer}", exact=viewer == exact)
            probes["views"] += 1
        if mirror.state.is_terminal():
            return
        idle = [s for s in range(seats) if s not in mirror.state.to_act]
        if idle:
            seat = joined[rng.choice(idle)]
            assert await seat.legal_actions() == []
            probes["legal"] += 1
        asker = rng.randrange(seats)
        secret = secret_targets(asker)
        if not secret:
            return
        target = rng.choice(secret)
        named: list[pb.Action] = [
            actions.discard(target),
            actions.lay_off(target, 0),
            actions.swap_joker(target, 0),
        ]
        if (hand := mirror.state.hands[asker]) and len(hand) >= 2:
            named.append(
                pb.Action(
                    extra_meld=pb.ExtraMeld(
                        meld=pb.MeldSpec(
                            kind=pb.MELD_KIND_SET, cards=[hand[0].id, hand[1].id, target]
                        )
                    )
                )
            )
        action = rng.choice(named)
        allowed = mirror.view_rules(asker, version)
        check = await joined[asker].validate(action)
        assert not check.legal and check.version == version
        check_clean(mirror.rules, plain(check), allowed, "validation", set(action_cards(action)))
        probes["validations"] += 1
        try:
            await joined[asker].act(action, expected_version=version)
        except CallError as exc:
            assert exc.code is grpc.StatusCode.FAILED_PRECONDITION, exc
            payload = {"reason": exc.reason, "message": exc.message}
            check_clean(mirror.rules, payload, allowed, "refusal", set(action_cards(action)))
            probes["refusals"] += 1
        else:
            raise AssertionError(f"{action} naming a secret card was accepted")

    played = await play_game(
        game.game_id, [joined], mirror, random.Random(f"play/{rules}"), after_step=probe
    )
    assert mirror.state.is_terminal()
    assert probes["views"] > 100 and probes["refusals"] > 30 and probes["legal"] > 30, probes

    # the moving seats' legal actions and responses
    for seat, version, listed in played.legal:
        hand = {c.id for c in mirror.states[version].hands[seat]}
        for action in listed:
            assert set(action_cards(action)) <= hand, f"v{version}: a legal action of {seat}"
    # (each response's events were compared with mirror.expected_events in play_game:
    # they are checked below with the rest of the seat's events)
    expected = {
        # from version 0: round 1's deal, which every watch from the start sees too
        viewer: [e for v in range(0, mirror.version + 1) for e in mirror.expected_events(viewer, v)]
        for viewer in viewers
    }
    for viewer, events in expected.items():
        check_events(mirror, viewer, events, f"the events for {viewer}")
        if viewer is None:
            shown = {
                k
                for e in events
                for k, v in event_data(e).items()
                if k in ("hand", "penalty") and v
            }
            shown |= {
                "card"
                for e in events
                if e.type == pb.EVENT_TYPE_DREW
                and e.drew.HasField("card")
                and e.drew.source == pb.DRAW_SOURCE_STOCK
            }
            assert not shown, f"a spectator sees {shown}"

    # every stream: exactly the engine's events for the viewer, none with a secret
    async with asyncio.timeout(30):
        await asyncio.gather(*tasks)
    for source, viewer, items in [
        *(("grpc", v, i) for v, i in streams.items()),
        *(("sse", v, i) for v, i in http_streams.items()),
    ]:
        what = f"{source} watch of {viewer}"
        assert items[0].HasField("snapshot") and items[0].snapshot.version == 0, what
        check_view(items[0].snapshot, viewer, f"{what} snapshot")
        assert all(i.HasField("event") for i in items[1:]), what
        assert [i.event for i in items[1:]] == expected[viewer], what
    # the final views reveal the seed, and still no hand but one's own
    for viewer in viewers:
        view = await (
            joined[viewer].view() if viewer is not None else client.spectate(game.game_id)
        )
        check_view(view, viewer, f"final view of {viewer}")
        assert view.game_over and view.seed == seed.hex()
