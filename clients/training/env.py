"""The AEC environment: a Glintwick game as PettingZoo's agent-environment cycle.

Agents are ``player_0 …``; ``agent_selection`` is the engine's seat to act, so one seat
may step several times in a row (draw, lay, discard).  A May I? window is asked seat by
seat in the rules' priority order, of the seats that may claim only (a seat whose one
answer is to pass passes by itself), and stops at the first claim (the seats after it
could not win the card: they pass by themselves).

Actions are :mod:`clients.training.actions`' one ``Discrete`` space; observations are
``{"observation": int8 vector, "action_mask": int8 vector}``
(:mod:`clients.training.observation`), the mask also in ``infos[agent]["action_mask"]``.
Rewards: ``"score"`` (default) pays each seat, at each round's end, the table's mean
penalty that round minus its own, divided by ``reward_scale``; ``"placement"`` pays at
the episode's end (n-1 seats beaten, ties halved) in -1..1.  An episode is a whole game
(``episode="game"``) or its first round (``"round"``).  :data:`ENV_VERSION` is bumped
with any change to the rules, rewards, actions or observations.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import AECEnv

from clients.bots.base import Situation
from clients.bots.tracking import TableMemory
from clients.training.actions import (
    DEFAULT_LAYOUTS,
    ActionLayout,
    Choices,
    Truncation,
    card_type,
    choices,
)
from clients.training.decisions import forced_pass
from clients.training.observation import Encoder, ObservationLayout
from engine.actions import Discard, PassClaim
from engine.events import EventType
from engine.game import GameState, Phase
from engine.rulesets import RuleSet, ruleset

__all__ = ["ENV_VERSION", "GlintwickEnv"]

ENV_VERSION = 0
REWARDS = ("score", "placement")
EPISODES = ("game", "round")
_PASS = PassClaim()
_ROUND_ENDED = EventType.ROUND_ENDED
_INT8 = np.dtype(np.int8)
_GAME_OVER = Phase.GAME_OVER
_PLAY = Phase.PLAY
_CLAIM = Phase.CLAIM

Obs = dict[str, NDArray[np.int8]]


def resolve_rules(rule_set: str | RuleSet | dict[str, Any]) -> RuleSet:
    """A preset's name, a rule set, or a custom rule set's plain form."""
    if isinstance(rule_set, RuleSet):
        return rule_set
    if isinstance(rule_set, dict):
        return RuleSet.from_dict(rule_set)
    return ruleset(rule_set)


def game_seed(value: bytes | str) -> bytes:
    """A game seed from ``reset(options={"game_seed": …})``: bytes or hex."""
    return value if isinstance(value, bytes) else bytes.fromhex(value)


class GlintwickEnv(AECEnv[str, Obs, int]):  # type: ignore[misc]
    """One Glintwick game (or its first round) as an AEC environment (PettingZoo is
    untyped: hence the ignore above)."""

    metadata: dict[str, Any] = {  # noqa: RUF012  (PettingZoo's class attribute)
        "render_modes": ["ansi", "human"],
        "name": "glintwick_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rule_set: str | RuleSet | dict[str, Any] = "whiskertrail",
        seats: int | None = None,
        seed: int | None = None,
        reward: str = "score",
        episode: str = "game",
        layouts: int = DEFAULT_LAYOUTS,
        reward_scale: float = 100.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        rules = resolve_rules(rule_set)
        seats = rules.min_players if seats is None else seats
        if not rules.min_players <= seats <= rules.max_players:
            raise ValueError(
                f"{rules.name} is played by {rules.min_players}..{rules.max_players} seats"
            )
        if reward not in REWARDS:
            raise ValueError(f"reward is one of {REWARDS}, not {reward!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode is one of {EPISODES}, not {episode!r}")
        self.rules = rules
        self.seats = seats
        self.reward_mode = reward
        self.episode = episode
        self.reward_scale = reward_scale
        self.render_mode = render_mode
        self.action_layout = ActionLayout.for_rules(rules, layouts)
        self.observation_layout = ObservationLayout(seats, self.action_layout.slots, layouts)
        self.possible_agents = [f"player_{i}" for i in range(seats)]
        self.metadata = {**self.metadata, "name": f"{rules.name}_v{ENV_VERSION}"}
        n = self.action_layout.size
        obs_size = self.observation_layout.size
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(-128, 127, (obs_size,), np.int8),
                    "action_mask": spaces.Box(0, 1, (n,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.state_space = spaces.Box(-128, 127, (self._state_size(),), np.int8)
        self.truncation = Truncation()  # actions the layout could not index, since creation
        self.steps = 0  # decisions taken since creation
        self._rng = random.Random(seed)
        self._game: GameState | None = None
        # each seat's memory of the pile and of what it saw taken, fed at its decisions
        self.memories: list[TableMemory] = []
        self._choices: Choices | None = None
        self._selected = -1
        self._situation: Situation | None = None
        self._no_actions = np.zeros(self.action_layout.size, dtype=np.int8)
        self._no_actions.flags.writeable = False  # (one array, shared by every idle seat)
        self._mask: NDArray[np.int8] = self._no_actions  # the selected seat's (read-only)
        self._info_agent: str | None = None  # the seat whose info holds its mask
        self._rewarded = False
        self._ended = False
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        # each seat's observations, built incrementally (the same bytes as encode's)
        self._encoders = [Encoder(self.observation_layout) for _ in range(seats)]

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the cycle
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: ``seed`` reseeds the environment's deals; ``options["game_seed"]``
        (bytes or hex) deals one game exactly (a recorded one, a tournament's)."""
        if seed is not None:
            self._rng = random.Random(seed)
        chosen = (options or {}).get("game_seed")
        seed_bytes = game_seed(chosen) if chosen is not None else self._rng.randbytes(16)
        self.game_seed = seed_bytes
        self._game = GameState.new_game(self.rules, self.seats, seed_bytes)
        self.memories = [TableMemory() for _ in range(self.seats)]
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewarded = False  # whether a reward was paid since the rewards were reset
        self._ended = False  # whether the episode ended (every seat terminated)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {
            a: {"action_mask": self._no_actions, "legal_actions": ()} for a in self.agents
        }
        self._info_agent = None
        self._settle()

    @property
    def game(self) -> GameState:
        """The engine state (all-seeing; :meth:`state` is its vector)."""
        if self._game is None:
            raise RuntimeError("reset() the environment first")
        return self._game

    @property
    def choices(self) -> Choices | None:
        """The selected seat's legal actions on the index space (None once over)."""
        return self._choices

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self._choices is not None and action is not None
        typed = self._choices.action(int(action))
        seat = self._selected
        if type(typed) is Discard:
            self.memories[seat].discarded(typed.card)
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:  # (else every reward is still 0.0: nothing to reset or add)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        self.steps += 1
        self._apply(seat, typed)
        self._settle()
        if self._rewarded:
            self._accumulate_rewards()

    def _apply(self, seat: int, typed: Any) -> None:
        before = self._game
        assert before is not None
        after, events = before.apply_action(seat, typed)
        self._game = after
        for e in events:
            if e.type == _ROUND_ENDED:
                self._round_ended(before.scores, after)
                break

    def _round_ended(self, before: tuple[int, ...], after: GameState) -> None:
        ends = after.is_terminal() or self.episode == "round"
        self._rewarded = True
        if self.reward_mode == "score":
            deltas = [a - b for a, b in zip(after.scores, before, strict=True)]
            mean = sum(deltas) / len(deltas)
            for seat, d in enumerate(deltas):
                self.rewards[self.possible_agents[seat]] += (mean - d) / self.reward_scale
        elif ends:
            scores = after.scores
            for seat, mine in enumerate(scores):
                better = sum(1 for s in scores if s > mine) - sum(1 for s in scores if s < mine)
                self.rewards[self.possible_agents[seat]] += better / (self.seats - 1)
        if ends:
            self.terminations = dict.fromkeys(self.agents, True)
            self._ended = True

    def _settle(self) -> None:
        """Pass for the seats that need not be asked, then select the next decision."""
        while True:
            game = self._game
            assert game is not None
            if self._ended or game.phase is _GAME_OVER:
                self.terminations = dict.fromkeys(self.agents, True)
                self._choices = None
                self.agent_selection = self.possible_agents[self._selected_or(game)]
                self._set_infos(None)
                return
            if game.phase is not _CLAIM:
                seat = game.current  # (to_act's one seat outside a claim window)
                break
            seat = game.to_act[0]
            if forced_pass(game, seat):
                self._apply(seat, _PASS)
                continue
            break
        self._selected = seat
        self.agent_selection = self.possible_agents[seat]
        sit = Situation.from_state(game, seat)
        self._situation = sit  # (observe's, until the next step)
        self.memories[seat].observe(sit)
        auto = None
        if game.phase is _PLAY and not game.opened[seat]:
            # the solver's layout first, into the engine's memo: its legal actions read
            # there whether the contract lays (no feasibility search of their own), and
            # when it lays, one search serves the mask, the candidates and the engine's
            # own LayContract()
            auto = game.automatic_selection(seat)
        self._choices = choices(
            self.action_layout,
            game.legal_actions(seat),
            game.hands[seat],
            self.rules,
            game.round_number,
            game.blocked_card,
            self.truncation,
            auto,
        )
        self._set_infos(self._choices)

    def _selected_or(self, game: GameState) -> int:
        return self._selected if self._selected >= 0 else game.current

    def _set_infos(self, current: Choices | None) -> None:
        """The selected seat's info (its mask, and its legal indices in order); every other
        seat's is an empty mask.  Only the seat selected before and the one now change."""
        infos = self.infos
        before = self._info_agent
        if before is not None:
            infos[before] = {"action_mask": self._no_actions, "legal_actions": ()}
            self._info_agent = None
        if current is not None:
            # (read-only: frombuffer of bytes; shared by infos and observe until the step)
            self._mask = np.frombuffer(bytes(current.mask), _INT8)
            agent = self.agent_selection
            infos[agent] = {
                "action_mask": self._mask,
                "legal_actions": tuple(sorted(current.actions)),
                "truncated_actions": self.truncation.total(),
            }
            self._info_agent = agent

    # ------------------------------------------------------------------ views
    def observe(self, agent: str) -> Obs:
        seat = self._seat_of[agent]
        current = self._choices if seat == self._selected else None
        sit = self._situation
        if current is None or sit is None:
            sit = Situation.from_state(self.game, seat)
        obs = self._encoders[seat](
            sit,
            self.memories[seat],
            current.layout_features if current is not None else (),
        )
        if current is not None:
            mask = self._mask
        else:
            mask = np.zeros(self.action_layout.size, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def _state_size(self) -> int:
        return 53 * (self.seats + 4) + 2 * self.seats + 8

    def state(self) -> NDArray[np.int8]:
        """The all-seeing vector (centralised or oracle critics): every hand by absolute
        seat, the stock, the whole pile, the table, the pile's top, whose turn, scores."""
        game = self.game
        vec = np.zeros(self._state_size(), dtype=np.int8)
        for seat, hand in enumerate(game.hands):
            for c in hand:
                vec[seat * 53 + card_type(c)] += 1
        base = self.seats * 53
        for c in game.stock:
            vec[base + card_type(c)] += 1
        for c in game.discards:
            vec[base + 53 + card_type(c)] += 1
        for m in game.table:
            for c in m.cards:
                vec[base + 106 + card_type(c)] += 1
        if game.discards:
            vec[base + 159 + card_type(game.discards[-1])] = 1
        base += 212
        for seat in range(self.seats):
            vec[base + seat] = int(seat in game.to_act)
            vec[base + self.seats + seat] = max(-128, min(127, game.scores[seat] // 8))
        base += 2 * self.seats
        phase = ("draw", "play", "claim", "game_over").index(game.phase.value)
        vec[base + phase] = 1
        vec[base + 4] = game.round_number
        vec[base + 5] = min(127, len(game.stock))
        vec[base + 6] = min(127, len(game.discards))
        vec[base + 7] = min(127, game.turns_completed // 2)
        return vec

    def render(self) -> str | None:
        game = self.game
        lines = [
            f"{self.rules.name} round {game.round_number} {game.phase.value},"
            f" to act {list(game.to_act)}, scores {list(game.scores)}",
            f"pile top {game.discards[-1].code if game.discards else '--'},"
            f" stock {len(game.stock)}",
        ]
        lines += [f"  seat {s}: {' '.join(c.code for c in h)}" for s, h in enumerate(game.hands)]
        lines += [f"  meld {i}: {m.describe()}" for i, m in enumerate(game.table)]
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
