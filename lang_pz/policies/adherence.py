"""Measure whether a backend's model actually follows a text policy.

A policy prompt only matters if the model follows it (GUIDE, "The embedded LLM"): the
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


#: Unconditional Pistonball piston policies and the action each prescribes.
PISTON_POLICIES: dict[str, str] = {
    "Always push up.": "up",
    "Always go down.": "down",
    "Always stay where you are.": "stay",
    "Move up at every step.": "up",
    "Lower yourself all the time, going down.": "down",
    "Never move: stay still.": "stay",
}

#: Varied Pistonball observations (discrete actions), as the text wrapper renders them.
PISTON_OBSERVATIONS: list[str] = [
    "You are piston_2 (of 5). Your height: 30 of 64 px. Left neighbour: 12 px lower than you. "
    "Right neighbour: 4 px higher than you. Ball: 40 px to your left, 18 px above your top, "
    "moving right and down.\nActions: down, stay, up",
    "You are piston_0 (of 5). Your height: 0 of 64 px. Left neighbour: none (wall). "
    "Right neighbour: 20 px higher than you. Ball: directly above you, 5 px above your top, "
    "moving left.\nActions: down, stay, up",
    "You are piston_4 (of 5). Your height: 64 of 64 px. Left neighbour: 30 px lower than you. "
    "Right neighbour: none (wall). Ball: 120 px to your left, 40 px above your top, "
    "not moving.\nActions: down, stay, up",
    "You are piston_1 (of 5). Your height: 45 of 64 px. Left neighbour: 8 px higher than you. "
    "Right neighbour: 8 px lower than you. Ball: 10 px to your right, 2 px above your top, "
    "moving left and up.\nActions: down, stay, up",
    "You are piston_3 (of 5). Your height: 16 of 64 px. Left neighbour: level with you. "
    "Right neighbour: 16 px higher than you. Ball: 60 px to your right, 30 px above your top, "
    "moving right and up.\nActions: down, stay, up",
    "You are piston_2 (of 5). Your height: 52 of 64 px. Left neighbour: 40 px lower than you. "
    "Right neighbour: level with you. Ball: 3 px to your left, touching your top, "
    "moving down.\nActions: down, stay, up",
    "You are piston_1 (of 5). Your height: 8 of 64 px. Left neighbour: 2 px higher than you. "
    "Right neighbour: 50 px higher than you. Ball: 200 px to your right, 60 px above your top, "
    "moving right.\nActions: down, stay, up",
    "You are piston_0 (of 5). Your height: 33 of 64 px. Left neighbour: none (wall). "
    "Right neighbour: 1 px lower than you. Ball: 15 px to your right, falling onto you, "
    "moving left and down.\nActions: down, stay, up",
]
PISTON_ACTIONS: tuple[str, ...] = ("down", "stay", "up")
