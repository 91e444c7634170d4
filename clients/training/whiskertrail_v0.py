"""``whiskertrail_v0``: the whiskertrail preset (PettingZoo's module-per-environment convention)."""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from clients.training.env import GlintwickEnv, Obs
from clients.training.registry import env as _env
from clients.training.registry import raw_env as _raw_env

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv[str, Obs, int]:
    return _env(rule_set="whiskertrail", **kwargs)


def raw_env(**kwargs: Any) -> GlintwickEnv:
    return _raw_env(rule_set="whiskertrail", **kwargs)
