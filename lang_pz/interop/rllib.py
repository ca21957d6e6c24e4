"""RLlib: register a lang_pz env under a name RLlib's ``config.environment(name)`` accepts.

RLlib's PPO has no encoder for ``Dict({"text": Text})`` and no ``Text`` action space; the
registered env is :func:`lang_pz.interop.to_vector_env` of the language env, wrapped in RLlib's
``ParallelPettingZooEnv``. Install it with ``pip install 'lang_pz[rllib]'``: ray[rllib] 2.60's
runtime deps without its ``gymnasium==1.2.2`` pin (``pip install 'ray[rllib]'`` would downgrade
lang_pz's gymnasium 1.4; RLlib's PPO trains on 1.4, ``tests/interop/test_rllib_training.py``).
Its pandas 3 needs NumPy 2, which lang_pz's venv holds (Overcooked-AI included: see
:func:`lang_pz.envs.overcooked.core.numpy2_aliases`). ``examples/interop_rllib.py`` trains PPO.
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
        DependencyNotInstalled: RLlib is missing; the message says how to install it.
    """
    try:
        from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
        from ray.tune.registry import register_env
    except ImportError as exc:
        raise DependencyNotInstalled(
            f"register_rllib_env needs RLlib ({exc}): pip install 'lang_pz[rllib]' (ray[rllib]'s deps without "
            "its gymnasium==1.2.2 pin; `pip install 'ray[rllib]'` would downgrade gymnasium)"
        ) from exc
    import lang_pz

    def creator(config: Any) -> Any:
        kwargs = {**make_kwargs, **dict(config or {})}
        return ParallelPettingZooEnv(to_vector_env(lang_pz.make(env_id, api="parallel", **kwargs), encoder))

    register_env(name, creator)
    return name
