"""Behaviour cloning with numpy alone: a small MLP over the observation, a softmax over
the legal actions (the mask), trained on a dataset's decisions by Adam.

The worked example (docs/TRAINING.md, :mod:`clients.training.example`) clones
``expert`` from recorded tournament games and plays the clone in a tournament as
``clients.training.cloning:ClonedBot``, which loads the weights named by the
``GLINTWICK_POLICY`` environment variable (an ``.npz`` that :meth:`MlpPolicy.save` wrote).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from clients.training.actions import ActionLayout
from clients.training.env import Obs
from clients.training.features import CandidateFeatures
from clients.training.policies import Policy, PolicyBot
from engine.rulesets import RuleSet

__all__ = [
    "POLICY_VARIABLE",
    "ClonedBot",
    "FeaturePolicy",
    "MlpPolicy",
    "TrainingReport",
    "action_kind",
    "train",
    "train_features",
]

POLICY_VARIABLE = "GLINTWICK_POLICY"
F32 = NDArray[np.float32]


@dataclass
class MlpPolicy:
    """``argmax`` over the legal actions of ``relu(x W1 + b1) W2 + b2``, ``x`` the
    observation standardised by the training set's mean and scale."""

    mean: F32
    scale: F32
    w1: F32
    b1: F32
    w2: F32
    b2: F32

    def logits(self, observations: NDArray[Any]) -> F32:
        x = (observations.astype(np.float32) - self.mean) / self.scale
        hidden = np.maximum(x @ self.w1 + self.b1, 0.0)
        out: F32 = hidden @ self.w2 + self.b2
        return out

    def act(self, observation: Obs, rng: random.Random) -> int:
        scores = self.logits(observation["observation"][None, :])[0]
        scores = np.where(observation["action_mask"] > 0, scores, -np.inf)
        return int(np.argmax(scores))

    def accuracy(
        self, observations: NDArray[Any], masks: NDArray[Any], actions: NDArray[Any]
    ) -> float:
        scores = np.where(masks > 0, self.logits(observations), -np.inf)
        return float((scores.argmax(axis=1) == actions).mean())

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path, mean=self.mean, scale=self.scale, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2
        )

    @classmethod
    def load(cls, path: Path) -> MlpPolicy:
        with np.load(path) as data:
            return cls(*(data[k] for k in ("mean", "scale", "w1", "b1", "w2", "b2")))


@dataclass
class TrainingReport:
    rows: int  # decisions with a choice (more than one legal action)
    train_accuracy: float
    test_accuracy: float
    epochs: int


def _legal_table(masks: NDArray[Any], actions: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
    """Each row's legal indices, padded with -1, and the place of its action among them."""
    counts = masks.sum(axis=1).astype(np.int64)
    rows, cols = np.nonzero(masks)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    legal = np.full((len(masks), int(counts.max())), -1, dtype=np.int64)
    legal[rows, np.arange(len(rows)) - starts] = cols
    target = np.argmax(legal == actions[:, None], axis=1)
    return legal, target


def train(
    data: dict[str, NDArray[Any]] | Any,
    hidden: int = 128,
    epochs: int = 8,
    batch: int = 256,
    rate: float = 1e-3,
    seed: int = 0,
    test_share: float = 0.1,
) -> tuple[MlpPolicy, TrainingReport]:
    """Fit an :class:`MlpPolicy` to the decisions of ``data`` (the converter's arrays)
    that had a choice; the last ``test_share`` of the games is held out.  The softmax
    runs over each decision's legal actions only (a few dozen of thousands): the output
    layer's rows are gathered for them, so an epoch costs what the hidden layer does."""
    choice = data["action_mask"].sum(axis=1) > 1
    games = data["game"]
    held_out = games >= np.quantile(games, 1 - test_share) if test_share > 0 else games < 0
    train_rows = choice & ~held_out
    test_rows = choice & held_out
    x_all = data["observation"][train_rows]
    masks = data["action_mask"][train_rows]
    actions = data["action"][train_rows].astype(np.int64)
    legal, target = _legal_table(masks, actions)
    x = x_all.astype(np.float32)
    mean = x.mean(axis=0).astype(np.float32)
    scale = (x.std(axis=0) + 1.0).astype(np.float32)
    x = (x - mean) / scale
    rng = np.random.default_rng(seed)
    inputs, outputs = x.shape[1], masks.shape[1]
    params = [
        (rng.standard_normal((inputs, hidden)) * np.sqrt(2 / inputs)).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((outputs, hidden)) * np.sqrt(1 / hidden)).astype(np.float32),
        np.zeros(outputs, np.float32),
    ]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            xb, lb, tb = x[rows], legal[rows], target[rows]
            valid = lb >= 0
            at = np.where(valid, lb, 0)
            w1, b1, emb, b2 = params
            pre = xb @ w1 + b1
            h = np.maximum(pre, 0.0)
            chosen = emb[at]  # (batch, legal, hidden)
            logits = np.einsum("bh,blh->bl", h, chosen) + b2[at]
            logits = np.where(valid, logits, -1e9)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(rows)), tb] -= 1.0
            d_logits = (p * valid / len(rows)).astype(np.float32)
            d_h = np.einsum("bl,blh->bh", d_logits, chosen) * (pre > 0)
            g_emb = np.zeros_like(emb)
            np.add.at(g_emb, at[valid], (d_logits[:, :, None] * h[:, None, :])[valid])
            g_b2 = np.zeros_like(b2)
            np.add.at(g_b2, at[valid], d_logits[valid])
            grads = [xb.T @ d_h, d_h.sum(axis=0), g_emb, g_b2]
            step += 1
            for k, (g, (m, v)) in enumerate(zip(grads, moments, strict=True)):
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                m_hat = m / (1 - 0.9**step)
                v_hat = v / (1 - 0.999**step)
                params[k] -= (rate * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(np.float32)
    w1, b1, emb, b2 = params
    policy = MlpPolicy(mean, scale, w1, b1, np.ascontiguousarray(emb.T), b2)
    test_x = data["observation"][test_rows]
    report = TrainingReport(
        int(train_rows.sum()),
        policy.accuracy(x_all, masks, actions),
        policy.accuracy(test_x, data["action_mask"][test_rows], data["action"][test_rows])
        if test_rows.any()
        else float("nan"),
        epochs,
    )
    return policy, report


def action_kind(layout: ActionLayout, index: int) -> str:
    """The kind of action an index names (the per-kind accuracy's rows)."""
    if index < layout.DISCARD:
        return ("stock", "pile", "claim", "pass", "end")[index]
    for name, start in (
        ("layout", layout.layout),
        ("extra", layout.extra),
        ("swap", layout.swap),
        ("lay_off", layout.lay_off),
    ):
        if index >= start:
            return name
    return "discard"


@dataclass
class FeaturePolicy:
    """A linear score over each legal candidate's features
    (:class:`~clients.training.features.CandidateFeatures`), the best one played."""

    rules: RuleSet
    seats: int
    layouts: int
    weights: F32

    def __post_init__(self) -> None:
        self.features = CandidateFeatures(self.rules, self.seats, self.layouts)

    def act(self, observation: Obs, rng: random.Random) -> int:
        if observation["observation"].size != self.features.shape.size:
            raise ValueError(
                f"a policy for {self.rules.name} at {self.seats} seats: not this table's"
                f" observation ({observation['observation'].size} numbers)"
            )
        legal, feats = self.features(observation["observation"], observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        return int(legal[int(np.argmax(feats @ self.weights))])

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            kind=np.array("features"),
            rules=np.array(json.dumps(self.rules.to_dict())),
            seats=np.array(self.seats),
            layouts=np.array(self.layouts),
            weights=self.weights,
        )

    @classmethod
    def load(cls, path: Path) -> FeaturePolicy:
        with np.load(path) as data:
            return cls(
                RuleSet.from_dict(json.loads(str(data["rules"]))),
                int(data["seats"]),
                int(data["layouts"]),
                data["weights"].astype(np.float32),
            )


@dataclass
class Candidates:
    """Every decision's legal candidates, flat: features, the decision each row belongs
    to, whether it is the expert's choice."""

    features: F32
    decision: NDArray[np.int64]
    chosen: NDArray[np.bool_]
    starts: NDArray[np.int64]  # each decision's first row


def candidates(
    featurizer: CandidateFeatures,
    observations: NDArray[Any],
    masks: NDArray[Any],
    actions: NDArray[Any],
) -> Candidates:
    """The candidates of each decision (rows of the converter's arrays)."""
    feats: list[F32] = []
    decision: list[NDArray[np.int64]] = []
    chosen: list[NDArray[np.bool_]] = []
    for row in range(len(actions)):
        legal, f = featurizer(observations[row], masks[row])
        feats.append(f)
        decision.append(np.full(len(legal), row, dtype=np.int64))
        chosen.append(legal == actions[row])
    counts = np.array([len(d) for d in decision], dtype=np.int64)
    return Candidates(
        np.concatenate(feats),
        np.concatenate(decision),
        np.concatenate(chosen),
        np.cumsum(counts) - counts,
    )


def _segment_softmax(scores: NDArray[np.float64], c: Candidates) -> NDArray[np.float64]:
    top = np.maximum.reduceat(scores, c.starts)
    e = np.exp(scores - top[c.decision])
    p: NDArray[np.float64] = e / np.add.reduceat(e, c.starts)[c.decision]
    return p


def fit_linear(c: Candidates, steps: int = 3000, rate: float = 0.1) -> F32:
    """Weights maximising the likelihood of the expert's choices (a softmax over each
    decision's candidates) by full-batch Adam."""
    x = c.features.astype(np.float64)
    w = np.zeros(x.shape[1])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    n = len(c.starts)
    for step in range(1, steps + 1):
        p = _segment_softmax(x @ w, c)
        g = (x.T @ (p - c.chosen)) / n
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w.astype(np.float32)


def accuracy_by_kind(
    c: Candidates, weights: F32, actions: NDArray[Any], layout: ActionLayout
) -> dict[str, tuple[int, float]]:
    """Per kind of the expert's action: (decisions, share the policy copied)."""
    scores = c.features @ weights
    best = np.maximum.reduceat(scores, c.starts)
    # the first candidate reaching the decision's best: the policy's argmax
    is_best = scores >= best[c.decision]
    first = np.full(len(c.starts), -1, dtype=np.int64)
    rows = np.flatnonzero(is_best)
    first[c.decision[rows[::-1]]] = rows[::-1]
    right = c.chosen[first]
    out: dict[str, tuple[int, float]] = {}
    kinds = np.array([action_kind(layout, int(a)) for a in actions])
    for kind in sorted(set(kinds.tolist())):
        sel = kinds == kind
        out[kind] = (int(sel.sum()), float(right[sel].mean()))
    out["all"] = (len(right), float(right.mean()))
    return out


def train_features(
    data: dict[str, NDArray[Any]] | Any,
    rules: RuleSet,
    seats: int,
    layouts: int,
    test_share: float = 0.1,
    limit: int | None = None,
) -> tuple[FeaturePolicy, dict[str, dict[str, tuple[int, float]]]]:
    """Fit a :class:`FeaturePolicy` to ``data``'s decisions with a choice (at most
    ``limit`` of the training games' decisions); the last ``test_share`` of the games
    held out.  Returns the policy and its per-kind accuracy on both parts."""
    featurizer = CandidateFeatures(rules, seats, layouts)
    choice = data["action_mask"].sum(axis=1) > 1
    games = data["game"]
    held_out = games >= np.quantile(games, 1 - test_share) if test_share > 0 else games < 0
    train_rows = np.flatnonzero(choice & ~held_out)[:limit]
    test_rows = np.flatnonzero(choice & held_out)
    obs, masks, actions = data["observation"], data["action_mask"], data["action"]
    c_train = candidates(featurizer, obs[train_rows], masks[train_rows], actions[train_rows])
    weights = fit_linear(c_train)
    policy = FeaturePolicy(rules, seats, layouts, weights)
    report = {"train": accuracy_by_kind(c_train, weights, actions[train_rows], featurizer.actions)}
    if len(test_rows):
        c_test = candidates(featurizer, obs[test_rows], masks[test_rows], actions[test_rows])
        report["test"] = accuracy_by_kind(c_test, weights, actions[test_rows], featurizer.actions)
    return policy, report


class ClonedBot(PolicyBot):
    """The cloned policy at a tournament's table: weights from ``$GLINTWICK_POLICY``."""

    name = "cloned"

    def make_policy(self) -> Policy:
        path = os.environ.get(POLICY_VARIABLE)
        if not path:
            raise RuntimeError(f"{POLICY_VARIABLE} names no policy file (an MlpPolicy .npz)")
        return _load_cached(path)


_LOADED: dict[str, MlpPolicy | FeaturePolicy] = {}


def _load_cached(path: str) -> MlpPolicy | FeaturePolicy:
    # one load per process: a tournament makes a bot per game
    found = _LOADED.get(path)
    if found is None:
        with np.load(path) as data:
            featured = "kind" in data.files and str(data["kind"]) == "features"
        loaded = FeaturePolicy.load(Path(path)) if featured else MlpPolicy.load(Path(path))
        found = _LOADED[path] = loaded
    return found
