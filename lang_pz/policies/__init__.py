"""Policies: act from one agent's own observation (``{"text": str}``) and info.

``policy(observation, info) -> str`` returns the action text; ``policy.decide(...)`` also
returns the raw model output, tokens and latency.
"""

from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.policies.oracle import MathOracle
from lang_pz.policies.overcooked import OvercookedGreedyPolicy, overcooked_partner
from lang_pz.policies.random import RandomPolicy
from lang_pz.policies.scripted import PistonballHeuristic

__all__ = [
    "Decision",
    "FaultyPolicy",
    "LLMPolicy",
    "MathOracle",
    "OvercookedGreedyPolicy",
    "PistonballHeuristic",
    "Policy",
    "RandomPolicy",
    "overcooked_partner",
]
