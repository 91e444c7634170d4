"""The environments by id: ``<rule set>_v<ENV_VERSION>`` for the presets, and any rule
set (a custom one too) by :func:`raw_env` / :func:`env` directly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from clients.training.env import ENV_VERSION, GlintwickEnv, Obs

__all__ = ["ENVIRONMENTS", "env", "make", "raw_env"]


def raw_env(**kwargs: Any) -> GlintwickEnv:
    """The bare environment (keywords: :class:`GlintwickEnv`'s)."""
    return GlintwickEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv[str, Obs, int]:
    """The environment with PettingZoo's usual wrappers: an illegal action ends the game
    for its seat with -1, an out-of-range one is an assertion, the cycle's order is
    enforced."""
    wrapped: AECEnv[str, Obs, int] = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


def _preset(name: str) -> Callable[..., AECEnv[str, Obs, int]]:
    def make_preset(**kwargs: Any) -> AECEnv[str, Obs, int]:
        return env(rule_set=name, **kwargs)

    return make_preset


#: the registered ids, bumped (``ENV_VERSION``) with any change to rules, rewards,
#: actions or observations
ENVIRONMENTS: dict[str, Callable[..., AECEnv[str, Obs, int]]] = {
    f"{name}_v{ENV_VERSION}": _preset(name) for name in ("contract", "whiskertrail")
}


def make(env_id: str, **kwargs: Any) -> AECEnv[str, Obs, int]:
    """The wrapped environment registered as ``env_id`` (``contract_v0``, ``whiskertrail_v0``)."""
    try:
        factory = ENVIRONMENTS[env_id]
    except KeyError:
        raise ValueError(
            f"unknown environment {env_id!r}; known: {', '.join(ENVIRONMENTS)}"
        ) from None
    return factory(**kwargs)
