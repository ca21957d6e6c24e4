"""Optimisers: LangMARL's language policy gradient (TextGrad-style textual gradients)."""

from lang_pz.optimisers.momentum import Momentum
from lang_pz.optimisers.textual import (
    Gradient,
    PolicyUpdate,
    TextualPolicyOptimiser,
    gradient_reply_model,
    policy_reply_model,
    rewrite_fraction,
)

__all__ = [
    "Gradient",
    "Momentum",
    "PolicyUpdate",
    "TextualPolicyOptimiser",
    "gradient_reply_model",
    "policy_reply_model",
    "rewrite_fraction",
]
