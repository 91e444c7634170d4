"""The environment's outputs pinned along random games: observations (of the acting seat
at every step and of every seat at some), masks, legal indices, ``state()``, rewards and
truncation counts hash to the digests below, taken before the environment's speed work
(its caches and incremental blocks must not change a byte).  A change to the
observation, the actions or the rewards changes a digest: bump ``ENV_VERSION`` and
write the new digests here (``python -m tests.unit.test_training_digest`` prints them)."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from clients.training import raw_env

GAMES = 2
DIGESTS = {
    ("whiskertrail", 2): "f082f7df91487afc80d66ba41bc6d85031885c2576234a8e8d55a33de87f2e9b",
    ("whiskertrail", 3): "c9e3f005e466eaa132d7d802076d191ef1271036fdaa51464abb12050b3308b7",
    ("whiskertrail", 4): "a36568accb30d568b770b1a2b358d082613c5c5f0c2631c6aec659bdff43a39d",
    ("contract", 4): "c3b3849f9d2a9abb8ed8708f9ebd5cbd138e62430cf8a5abf9dc2297c3912cb2",
}


def digest(rule_set: str, seats: int, games: int = GAMES) -> str:
    """The hash of everything the environment hands out along ``games`` random games."""
    e = raw_env(rule_set=rule_set, seats=seats, seed=29)
    rng = random.Random(31)
    h = hashlib.sha256()
    step = 0
    for _ in range(games):
        e.reset()
        while not all(e.terminations.values()):
            agent = e.agent_selection
            obs = e.observe(agent)
            h.update(obs["observation"].tobytes())
            h.update(obs["action_mask"].tobytes())
            info = e.infos[agent]
            h.update(info["action_mask"].tobytes())
            legal = info["legal_actions"]
            h.update(np.asarray(legal, dtype=np.int32).tobytes())
            h.update(repr(info.get("truncated_actions")).encode())
            h.update(e.state().tobytes())
            if step % 7 == 0:
                for other in e.agents:
                    seen = e.observe(other)
                    h.update(seen["observation"].tobytes())
                    h.update(seen["action_mask"].tobytes())
            h.update(repr(sorted(e.rewards.items())).encode())
            h.update(repr(sorted(e._cumulative_rewards.items())).encode())
            e.step(legal[rng.randrange(len(legal))])
            step += 1
        h.update(repr(sorted(e.rewards.items())).encode())
        h.update(repr(sorted(e._cumulative_rewards.items())).encode())
        for other in e.agents:
            h.update(e.observe(other)["observation"].tobytes())
        h.update(e.state().tobytes())
    h.update(repr((step, e.truncation)).encode())
    return h.hexdigest()


@pytest.mark.parametrize(("rule_set", "seats"), sorted(DIGESTS))
def test_the_environment_hands_out_what_it_did(rule_set: str, seats: int) -> None:
    assert digest(rule_set, seats) == DIGESTS[(rule_set, seats)]


if __name__ == "__main__":
    for key in sorted(DIGESTS):
        print(f"    {key!r}: {digest(*key)!r},")
