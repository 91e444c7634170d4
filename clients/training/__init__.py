"""Training: Glintwick games as PettingZoo AEC environments, bots as policies and
policies as bots, recorded games as datasets (docs/TRAINING.md).

``from clients.training import env`` then ``env(rule_set="contract", seats=4, seed=1)``;
``raw_env(...)`` is the bare one; ``make("whiskertrail_v0")`` by registered id.
Needs the ``training`` extra (numpy, gymnasium, pettingzoo).
"""

from clients.training.env import ENV_VERSION, GlintwickEnv
from clients.training.registry import ENVIRONMENTS, env, make, raw_env

__all__ = ["ENVIRONMENTS", "ENV_VERSION", "GlintwickEnv", "env", "make", "raw_env"]
