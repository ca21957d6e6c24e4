"""RLlib: register a lang_pz env under a name RLlib's ``config.environment(name)`` accepts.

RLlib's PPO has no encoder for ``Dict({"text": Text})`` and no ``Text`` action space; the
registered env is :func:`lang_pz.interop.to_vector_env` of the language env, wrapped in RLlib's
``ParallelPettingZooEnv``. ``ray[rllib]`` 2.60 pins ``gymnasium==1.2.2`` and NumPy 2, which the
main lang_pz venv (gymnasium 1.4, overcooked-ai's NumPy < 2) cannot hold: use a venv of its own
(``benchmarks/rllib_venv.sh`` builds one and trains PPO for a few hundred steps).
"""

from __future__ import annotations

from typing import Any

from lang_pz.error import DependencyNotInstalled
from lang_pz.interop.encoders import TextEncoder
from lang_pz.interop.wrappers import to_vector_env


def register_rllib_env(name: str, env_id: str, *, encoder: TextEncoder | None = None, **make_kwargs: Any) -> str:
    """Register ``env_id`` (made with ``api="parallel"`` and ``make_kwargs``) with Ray Tune as
    ``name``; RLlib's ``env_config`` dict is merged over ``make_kwargs``.

    Returns:
        ``name`` (for ``PPOConfig().environment(name)``).

    Raises:
        DependencyNotInstalled: ``ray[rllib]`` is missing (in a separate venv; see the module docstring).
    """
    try:
        from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
        from ray.tune.registry import register_env
    except ImportError as exc:
        raise DependencyNotInstalled(
            "register_rllib_env needs ray[rllib]: pip install 'ray[rllib]==2.60.0' torch==2.13.0 in a venv "
            "of its own (it pins gymnasium==1.2.2 and numpy>=2; see benchmarks/rllib_venv.sh)"
        ) from exc
    import lang_pz

    def creator(config: Any) -> Any:
        kwargs = {**make_kwargs, **dict(config or {})}
        return ParallelPettingZooEnv(to_vector_env(lang_pz.make(env_id, api="parallel", **kwargs), encoder))

    register_env(name, creator)
    return name
