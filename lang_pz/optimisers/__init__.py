"""Policy optimisers: turn credits into edit directions and rewrite text policies."""

from lang_pz.optimisers.textual import Gradient, PolicyUpdate, TextualPolicyOptimiser

__all__ = ["Gradient", "PolicyUpdate", "TextualPolicyOptimiser"]
