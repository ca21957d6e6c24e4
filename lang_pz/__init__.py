"""lang_pz: language multi-agent reinforcement learning on PettingZoo and Gymnasium environments.

Quick start::

    import lang_pz
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5)
"""

from lang_pz import envs as _envs  # noqa: F401  (registers the built-in environments)
from lang_pz.interop.vector import register_text_spaces as _register_text_spaces
from lang_pz.registration import EnvSpec, make, register, registry, spec

# Gymnasium's vector utilities on Text spaces: SuperSuit vector envs work, and an AsyncVectorEnv
# with shared_memory=True (which would silently return '000...' for every text) fails loudly.
_register_text_spaces()

__version__ = "0.1.0"

__all__ = ["EnvSpec", "__version__", "make", "register", "registry", "spec"]
