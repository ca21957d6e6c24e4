"""Optimisers: LangMARL's language policy gradient (TextGrad-style textual gradients)."""

from lang_pz.optimisers.textual import (
    Gradient,
    PolicyUpdate,
    TextualPolicyOptimiser,
    gradient_reply_model,
    policy_reply_model,
)

__all__ = [
    "Gradient",
    "PolicyUpdate",
    "TextualPolicyOptimiser",
    "gradient_reply_model",
    "policy_reply_model",
]
