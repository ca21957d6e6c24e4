"""Policies: act from one agent's own observation (``{"text": str}``) and info.

``policy(observation, info) -> str`` returns the action text; ``policy.decide(...)`` also
returns the raw model output, tokens and latency.
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.policies.overcooked import OvercookedGreedyPolicy, overcooked_partner
from lang_pz.policies.random import RandomPolicy
from lang_pz.policies.scripted import PistonballHeuristic

__all__ = [
    "Decision",
    "LLMPolicy",
    "OvercookedGreedyPolicy",
    "PistonballHeuristic",
    "Policy",
    "RandomPolicy",
    "overcooked_partner",
]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {"FaultyPolicy": "lang_pz.policies.faulty.FaultyPolicy", "MathOracle": "lang_pz.policies.oracle.MathOracle"}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
