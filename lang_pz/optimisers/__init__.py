"""Optimisers: LangMARL's language policy gradient (TextGrad-style textual gradients), candidates
checked on the actor that plays them, and joint changes of two agents."""

from lang_pz.optimisers.adherence import ActorCheck, Adherence, cited_decisions
from lang_pz.optimisers.gradient import (
    Gradient,
    PolicyUpdate,
    evidence_for,
    gradient_reply_model,
    policy_reply_model,
    rewrite_fraction,
)
from lang_pz.optimisers.joint import JointUpdate, PairChange, joint_updates, pair_changes
from lang_pz.optimisers.momentum import Momentum
from lang_pz.optimisers.textual import TextualPolicyOptimiser

__all__ = [
    "ActorCheck",
    "Adherence",
    "Gradient",
    "JointUpdate",
    "Momentum",
    "PairChange",
    "PolicyUpdate",
    "TextualPolicyOptimiser",
    "cited_decisions",
    "evidence_for",
    "gradient_reply_model",
    "joint_updates",
    "pair_changes",
    "policy_reply_model",
    "rewrite_fraction",
]
