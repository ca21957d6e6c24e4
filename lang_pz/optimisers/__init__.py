"""Optimisers: LangMARL's language policy gradient (TextGrad-style textual gradients)."""

from lang_pz.optimisers.gradient import (
    Gradient,
    PolicyUpdate,
    evidence_for,
    gradient_reply_model,
    policy_reply_model,
    rewrite_fraction,
)
from lang_pz.optimisers.momentum import Momentum
from lang_pz.optimisers.textual import TextualPolicyOptimiser

__all__ = [
    "Gradient",
    "Momentum",
    "PolicyUpdate",
    "TextualPolicyOptimiser",
    "evidence_for",
    "gradient_reply_model",
    "policy_reply_model",
    "rewrite_fraction",
]
