"""Measure whether a backend's model actually follows a text policy.

A policy prompt only matters if the model follows it (measured with this module): the
135M SmolLM2 ignores a policy given as a chat system message. Before trusting a backend as the
executor of LangMARL-style language policies, measure how often an *unconditional* policy
("Always push up.") yields the action it names, across varied observations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from lang_pz.backends.base import LLMBackend
from lang_pz.policies.llm import LLMPolicy


@dataclass
class AdherenceResult:
    """Outcome of :func:`adherence_table`.

    Attributes:
        rate: fraction of (policy, observation) pairs whose action equals the expected one.
        per_policy: policy text -> fraction followed.
        actions: policy text -> the action chosen for each observation, in order.
    """

    rate: float
    per_policy: dict[str, float] = field(default_factory=dict)
    actions: dict[str, list[str]] = field(default_factory=dict)


def adherence_table(
    backend: LLMBackend,
    policies: Mapping[str, str],
    observations: Sequence[str],
    legal_actions: Sequence[str],
    *,
    prompt_format: Literal["chat", "completion"] | None = None,
) -> AdherenceResult:
    """Like :func:`measure_adherence` but also returns the per-policy breakdown."""
    if not policies or not observations:
        raise ValueError("need at least one policy and one observation")
    info = {"legal_actions": list(legal_actions)}
    for expected in policies.values():
        if expected not in info["legal_actions"]:
            raise ValueError(f"expected action {expected!r} is not in legal_actions {list(legal_actions)}")
    per: dict[str, float] = {}
    acts: dict[str, list[str]] = {}
    hits = 0
    for text, expected in policies.items():
        pol = LLMPolicy(text, backend, prompt_format=prompt_format)
        chosen = [pol({"text": o}, info) for o in observations]
        acts[text] = chosen
        n = sum(a == expected for a in chosen)
        per[text] = n / len(observations)
        hits += n
    return AdherenceResult(rate=hits / (len(policies) * len(observations)), per_policy=per, actions=acts)


def measure_adherence(
    backend: LLMBackend,
    policies: Mapping[str, str],
    observations: Sequence[str],
    legal_actions: Sequence[str],
) -> float:
    """Fraction of (policy, observation) pairs where :class:`LLMPolicy` picks the expected action.

    Args:
        backend: the backend under test (its own ``prompt_format`` is used).
        policies: policy text -> the action it unconditionally prescribes.
        observations: observation texts (each ending with its ``Actions:`` line or not).
        legal_actions: the finite action set, sent as ``choices``.

    Returns:
        The adherence rate in [0, 1].
    """
    return adherence_table(backend, policies, observations, legal_actions).rate


#: Unconditional Pistonball piston policies in free phrasing and the action each prescribes: five
#: phrasings of each word, then the textual optimiser's own two (``Always play W.``, ``Play W at
#: every step.``), which the embedded actor once played as down for W = up.
PISTON_POLICIES: dict[str, str] = {
    "Always push up.": "up",
    "Always go up.": "up",
    "Move up at every step.": "up",
    "Push up.": "up",
    "Keep rising: always up.": "up",
    "Always push down.": "down",
    "Always go down.": "down",
    "Push down.": "down",
    "Lower yourself all the time, going down.": "down",
    "Always move down.": "down",
    "Always stay.": "stay",
    "Always stay where you are.": "stay",
    "Never move: stay still.": "stay",
    "Stay put.": "stay",
    "Hold your position: stay.": "stay",
    "Always play up.": "up",
    "Play up at every step.": "up",
    "Always play down.": "down",
    "Play down at every step.": "down",
    "Always play stay.": "stay",
    "Play stay at every step.": "stay",
}
PISTON_ACTIONS: tuple[str, ...] = ("down", "stay", "up")


def pistonball_observations(k: int = 8, *, n_pistons: int = 5, seed: int = 0) -> list[str]:
    """``k`` real Pistonball observation texts (as agents see them, action line included).

    Played from random actions over a few seeded episodes of the language env, keeping
    observations of different pistons at different moments (deterministic for a ``seed``).

    Raises:
        ValueError: ``k < 1``.
    """
    import lang_pz
    from lang_pz.policies.random import RandomPolicy

    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=n_pistons, hold=5)
    pool: list[str] = []
    for episode in range(4):
        obs, infos = env.reset(seed=seed + episode)
        rnd = RandomPolicy(seed=seed + episode)
        for t in range(6):
            for a in env.agents[:2] if t % 2 else env.agents[3:]:
                pool.append(obs[a]["text"])
            obs, _, _, _, infos = env.step({a: rnd(obs[a], infos[a]) for a in env.agents})
            if not env.agents:
                break
    env.close()
    return pool[:: max(1, len(pool) // k)][:k]
