"""Training: Glintwick games as PettingZoo AEC environments, bots as policies and
policies as bots, recorded games as datasets (docs/TRAINING.md).

``from clients.training import env`` then ``env(rule_set="contract", seats=4, seed=1)``;
``raw_env(...)`` is the bare one; ``make("whiskertrail_v0")`` by registered id.
Needs the ``training`` extra (numpy, gymnasium, pettingzoo).
"""

from clients.compiled import choose_form

# Decided before any module of the package loads: "compiled" (the mypyc build of the
# observation and action modules, clients/compiled.py), or "pure: " and why not.
CLIENTS_FORM: str = choose_form(__name__)

from clients.training.env import ENV_VERSION, GlintwickEnv  # noqa: E402
from clients.training.registry import ENVIRONMENTS, env, make, raw_env  # noqa: E402

__all__ = ["CLIENTS_FORM", "ENVIRONMENTS", "ENV_VERSION", "GlintwickEnv", "env", "make", "raw_env"]
