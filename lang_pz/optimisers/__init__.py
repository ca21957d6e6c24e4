"""Optimisers: LangMARL's language policy gradient (TextGrad-style textual gradients), candidates
checked on the actor that plays them, and joint changes of two agents."""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.optimisers.adherence import ActorCheck
from lang_pz.optimisers.gradient import Gradient, PolicyUpdate
from lang_pz.optimisers.joint import JointUpdate
from lang_pz.optimisers.momentum import Momentum
from lang_pz.optimisers.textual import TextualPolicyOptimiser

__all__ = ["ActorCheck", "Gradient", "JointUpdate", "Momentum", "PolicyUpdate", "TextualPolicyOptimiser"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "Adherence": "lang_pz.optimisers.adherence.Adherence",
    "PairChange": "lang_pz.optimisers.joint.PairChange",
    "cited_decisions": "lang_pz.optimisers.adherence.cited_decisions",
    "evidence_for": "lang_pz.optimisers.gradient.evidence_for",
    "gradient_reply_model": "lang_pz.optimisers.gradient.gradient_reply_model",
    "joint_updates": "lang_pz.optimisers.joint.joint_updates",
    "pair_changes": "lang_pz.optimisers.joint.pair_changes",
    "policy_reply_model": "lang_pz.optimisers.gradient.policy_reply_model",
    "rewrite_fraction": "lang_pz.optimisers.gradient.rewrite_fraction",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
