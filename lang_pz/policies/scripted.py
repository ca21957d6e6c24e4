"""Scripted Pistonball heuristic: a classical baseline that reads the same text as an LLM.

Rule (per piston, from its own observation text only): if the ball is to its right or out
of view, go ``down`` (make room: the ball should roll down a slope towards the left wall);
if the ball is above it or to its left, go ``up`` (lift the ball's right side).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, observation_text

if TYPE_CHECKING:
    from lang_pz.trajectory import AgentStep

_BALL_RIGHT = re.compile(r"Ball: \d+ px to your right")


class PistonballHeuristic(Policy):
    """Slope-making heuristic for ``butterfly/pistonball-v0`` (discrete actions).

    Raises:
        LangPZError: from :meth:`decide`, for text that is not a Pistonball observation.
    """

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        text = observation_text(observation)
        if "Ball: " not in text:
            raise LangPZError(
                f"not a Pistonball observation (no 'Ball: ...' line): {text[:80]!r}; "
                "PistonballHeuristic plays butterfly/pistonball-v0 only"
            )
        if "Ball: out of view" in text or _BALL_RIGHT.search(text):
            action = "down"
        else:
            action = "up"
        return Decision(action=action, raw_output=action)

    def fast_forward(self, steps: Sequence[AgentStep]) -> bool:
        """``True``: it reads only the observation in front of it."""
        return True

    def waits(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> bool:
        """``False``: no model is asked."""
        return False


class ConstantPolicy(Policy):
    """Always the same action text: an unconditional scripted baseline, and the replacement
    policy of counterfactual re-runs (:mod:`lang_pz.critics.counterfactual`).

    Args:
        action: the action text, e.g. ``"down"``; ``""`` makes the environment apply its
            documented fallback action (its default) and record a parse error.
    """

    def __init__(self, action: str) -> None:
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the action text), got {action!r}")
        self.action = action

    def __repr__(self) -> str:
        return f"ConstantPolicy({self.action!r})"

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        return Decision(action=self.action, raw_output=self.action)

    def fast_forward(self, steps: Sequence[AgentStep]) -> bool:
        """``True``: always the same action."""
        return True

    def waits(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> bool:
        """``False``: no model is asked."""
        return False
