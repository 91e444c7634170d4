"""The training environment: PettingZoo's own API and seed tests, the action space's
bijection with the engine's legal actions, and observations that show nothing hidden."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from clients.bots.base import Situation
from clients.training import ENVIRONMENTS, GlintwickEnv, env, make, raw_env
from clients.training.actions import ActionLayout, card_type, index_of
from clients.training.decisions import forced_pass
from clients.training.observation import encode
from engine.actions import Action, LayContract, MeldSpec
from engine.cards import JOKER_RANK
from engine.game import GameState, Phase

TABLES = [("whiskertrail", 2), ("whiskertrail", 3), ("whiskertrail", 4), ("contract", 4)]


@pytest.mark.parametrize(("rule_set", "seats"), TABLES)
def test_pettingzoo_api_test(rule_set: str, seats: int) -> None:
    api_test(env(rule_set=rule_set, seats=seats), num_cycles=1000)


@pytest.mark.parametrize(("rule_set", "seats"), TABLES)
def test_pettingzoo_seed_test(rule_set: str, seats: int) -> None:
    def make_env() -> Any:
        return env(rule_set=rule_set, seats=seats)

    seed_test(make_env, num_cycles=300)


def test_registered_ids_name_the_presets_and_their_version() -> None:
    assert sorted(ENVIRONMENTS) == ["contract_v0", "whiskertrail_v0"]
    made = make("contract_v0")
    made.reset(seed=3)
    assert made.unwrapped.rules.name == "contract"
    assert made.possible_agents == [f"player_{i}" for i in range(4)]
    with pytest.raises(ValueError, match="unknown environment"):
        make("contract_v9")


def test_a_custom_rule_set_by_its_plain_form() -> None:
    from engine.rulesets import WHISKERTRAIL

    plain = WHISKERTRAIL.to_dict() | {"name": "short", "contracts": []}
    plain["contracts"] = [
        {"name": "one", "melds": [{"kind": "set", "size": 3}], "deal": 7},
    ]
    e = raw_env(rule_set=plain, seats=3, seed=5)
    e.reset()
    played = _play_random(e, random.Random(1), 5000)
    assert played > 0 and e.game.is_terminal() and e.game.rules.name == "short"


def _play_random(e: GlintwickEnv, rng: random.Random, limit: int) -> int:
    steps = 0
    while not all(e.terminations.values()) and steps < limit:
        legal = np.flatnonzero(e.infos[e.agent_selection]["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
        steps += 1
    return steps


def _same_type(a: Action, b: Action, game: GameState, seat: int) -> bool:
    """Equal but for which deck's copy of a card (what an index cannot tell)."""
    if type(a) is not type(b):
        return False
    by_id = {c.id: c for c in game.hands[seat]}

    def key(x: Action) -> tuple[Any, ...]:
        fields: dict[str, Any] = {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
        if "card" in fields:
            fields["card"] = card_type(by_id[fields["card"]])
        meld = fields.get("meld")
        if isinstance(meld, MeldSpec):
            fields["meld"] = (meld.kind, sorted(card_type(by_id[i]) for i in meld.cards))
        return tuple(sorted(fields.items(), key=lambda kv: kv[0]))

    return key(a) == key(b)


def _check_bijection(e: GlintwickEnv) -> None:
    game = e.game
    seat = e.possible_agents.index(e.agent_selection)
    mask = e.infos[e.agent_selection]["action_mask"]
    legal = game.legal_actions(seat)
    layout: ActionLayout = e.action_layout
    choices = e.choices
    assert choices is not None
    indices = {index_of(layout, a, game.hands[seat]) for a in legal}
    marked = set(np.flatnonzero(mask).tolist())
    extra_layouts = {i for i in marked if i > layout.layout}
    # every legal action has an index in the mask, and every marked index is one of
    # them or a named contract layout
    assert indices == marked - extra_layouts
    for index in marked:
        action = choices.actions[index]
        if index > layout.layout:
            assert isinstance(action, LayContract) and action.melds is not None
            game.check(seat, action)  # the engine accepts the named layout
            continue
        assert index_of(layout, action, game.hands[seat]) == index
        assert any(_same_type(action, a, game, seat) for a in legal)
        assert action in legal
    # one index per class of legal actions equal but for the copy
    for a in legal:
        twin = choices.actions[index_of(layout, a, game.hands[seat])]
        assert _same_type(a, twin, game, seat)


@pytest.mark.parametrize(("rule_set", "seats"), TABLES)
def test_masked_random_play_matches_the_engine_legal_actions(rule_set: str, seats: int) -> None:
    e = raw_env(rule_set=rule_set, seats=seats, seed=11)
    rng = random.Random(seats)
    steps = 0
    for _ in range(3):
        e.reset()
        while not all(e.terminations.values()) and steps < 4000:
            _check_bijection(e)
            game = e.game
            seat = e.possible_agents.index(e.agent_selection)
            assert seat in game.to_act and not forced_pass(game, seat)
            legal = np.flatnonzero(e.infos[e.agent_selection]["action_mask"])
            # the legal indices in info are the mask's, in order; every other seat's none
            assert e.infos[e.agent_selection]["legal_actions"] == tuple(legal.tolist())
            for agent, info in e.infos.items():
                if agent != e.agent_selection:
                    assert info["legal_actions"] == () and not info["action_mask"].any()
            e.step(int(legal[rng.randrange(len(legal))]))
            steps += 1
    assert steps >= 1500
    # (layouts past the top K are counted, not lost: layout 0, the solver's, is always there)
    assert e.truncation.slots == 0 and e.truncation.collisions == 0


def _hide_differently(game: GameState, seat: int, rng: random.Random) -> GameState:
    """The same game but for what ``seat`` cannot see: the other hands and the stock
    dealt again from their cards (sizes kept)."""
    hidden = [c for s, h in enumerate(game.hands) if s != seat for c in h] + list(game.stock)
    rng.shuffle(hidden)
    hands = list(game.hands)
    at = 0
    for s, h in enumerate(game.hands):
        if s != seat:
            hands[s] = tuple(sorted(hidden[at : at + len(h)], key=lambda c: c.id))
            at += len(h)
    return game.evolve(hands=tuple(hands), stock=tuple(hidden[at:]))


@pytest.mark.parametrize(("rule_set", "seats"), [("whiskertrail", 3), ("contract", 4)])
def test_observations_show_nothing_a_seat_could_not_see(rule_set: str, seats: int) -> None:
    e = raw_env(rule_set=rule_set, seats=seats, seed=2)
    e.reset()
    rng = random.Random(7)
    checked = 0
    for step in range(3000):
        if all(e.terminations.values()):
            e.reset()
        if step % 7 == 0:
            game = e.game
            selected = e.possible_agents.index(e.agent_selection)
            for seat, agent in enumerate(e.possible_agents):
                seen = e.observe(agent)["observation"]
                current = e.choices if seat == selected else None
                features = current.layout_features if current is not None else []
                hidden = _hide_differently(game, seat, rng)
                again = encode(
                    e.observation_layout,
                    Situation.from_state(hidden, seat),
                    e.memories[seat],
                    features,
                )
                assert np.array_equal(seen, again)
                checked += 1
        legal = np.flatnonzero(e.infos[e.agent_selection]["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
    assert checked > 1000


def test_the_hand_plane_is_the_seat_own_hand_and_the_state_sees_all() -> None:
    e = raw_env(rule_set="whiskertrail", seats=2, seed=4)
    e.reset()
    parts = e.observation_layout.parts()
    offset, length = parts["hand"]
    for seat, agent in enumerate(e.possible_agents):
        plane = e.observe(agent)["observation"][offset : offset + length]
        hand = e.game.hands[seat]
        assert plane.sum() == len(hand)
        for c in hand:
            assert plane[card_type(c)] >= 1
    state = e.state()
    assert state.shape == e.state_space.shape
    assert state[: 2 * 53].sum() == sum(len(h) for h in e.game.hands)


def test_a_may_i_window_asks_by_priority_and_stops_at_the_first_claim() -> None:
    e = raw_env(rule_set="contract", seats=4, seed=9)
    e.reset()
    rng = random.Random(3)
    layout = e.action_layout
    windows = 0
    while windows < 20 and not all(e.terminations.values()):
        game = e.game
        if game.phase is Phase.CLAIM:
            windows += 1
            asked = e.possible_agents.index(e.agent_selection)
            assert asked == game.to_act[0]  # the first in priority yet to answer
            e.step(layout.CLAIM)
            after = e.game
            # nobody after the claimant was asked: the window closed at once
            assert after.phase is not Phase.CLAIM or after.claim_answers == ()
            continue
        legal = np.flatnonzero(e.infos[e.agent_selection]["action_mask"])
        no_claim = [i for i in legal if i != layout.CLAIM]
        e.step(int(no_claim[rng.randrange(len(no_claim))]))
    assert windows == 20


@pytest.mark.parametrize("reward", ["score", "placement"])
def test_rewards_add_up_to_the_game(reward: str) -> None:
    e = raw_env(rule_set="whiskertrail", seats=3, seed=6, reward=reward)
    e.reset()
    totals = dict.fromkeys(e.possible_agents, 0.0)
    rng = random.Random(5)
    while not all(e.terminations.values()):
        legal = np.flatnonzero(e.infos[e.agent_selection]["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
        for agent in e.possible_agents:
            totals[agent] += e.rewards[agent]
    scores = e.game.scores
    mean = sum(scores) / 3
    for seat, agent in enumerate(e.possible_agents):
        if reward == "score":
            assert totals[agent] == pytest.approx((mean - scores[seat]) / 100)
        else:
            beaten = sum(s > scores[seat] for s in scores) - sum(s < scores[seat] for s in scores)
            assert totals[agent] == pytest.approx(beaten / 2)


def test_an_episode_of_one_round_ends_with_it() -> None:
    e = raw_env(rule_set="whiskertrail", seats=2, seed=8, episode="round")
    e.reset()
    _play_random(e, random.Random(2), 100_000)
    assert all(e.terminations.values())
    assert e.game.round_number == 2 and not e.game.is_terminal()


def test_jokers_are_one_type() -> None:
    e = raw_env(rule_set="whiskertrail", seats=2)
    e.reset(seed=1)
    jokers = [c for c in e.game.all_cards() if c.rank == JOKER_RANK]
    assert {card_type(c) for c in jokers} == {52}
