"""TorchRL: a language ``ParallelEnv`` as a ``torchrl.envs.PettingZooWrapper``.

TorchRL's ``PettingZooWrapper`` builds tensor specs from the spaces and from the first
``reset``'s infos: a ``Text`` action cannot be stepped, and a string in ``infos`` fails ("too
many dimensions 'str'"). :func:`torchrl_env` hands it :func:`lang_pz.interop.to_vector_env`'s
env (vector observations, ``Discrete`` actions, numeric infos with an ``action_mask``).
Agents are grouped as TorchRL does by default (by name prefix: ``piston_*`` -> group ``piston``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.error import DependencyNotInstalled
from lang_pz.interop.encoders import TextEncoder
from lang_pz.interop.wrappers import to_vector_env


def torchrl_env(
    env: Any,
    encoder: TextEncoder | None = None,
    *,
    actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    seed: int | None = None,
    **wrapper_kwargs: Any,
) -> Any:
    """Wrap a language ``ParallelEnv`` for TorchRL.

    Args:
        env: from ``lang_pz.make(id, api="parallel", ...)``.
        encoder: text -> vector (default :class:`lang_pz.interop.HashedBagOfWords`).
        actions: the action words (default: the env's own, see :func:`lang_pz.interop.wrappers.action_words`).
        seed: the first reset's seed.
        **wrapper_kwargs: passed to ``PettingZooWrapper`` (e.g. ``group_map``, ``use_mask``,
            ``categorical_actions``; default categorical actions, no mask).

    Returns:
        A ``torchrl.envs.libs.pettingzoo.PettingZooWrapper``; per group the keys
        ``(group, "observation")`` (float32, ``encoder.dim``), ``(group, "action")`` (index),
        ``(group, "action_mask")`` and ``(group, "info", "fallback")``.

    Raises:
        DependencyNotInstalled: ``torchrl`` is missing (``pip install 'lang_pz[torchrl]'``).
    """
    try:
        from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    except ImportError as exc:
        raise DependencyNotInstalled(
            "torchrl_env needs torchrl: pip install 'lang_pz[torchrl]' (pins torch==2.13.0, the CPU build)"
        ) from exc
    kwargs = {"categorical_actions": True, "use_mask": False, **wrapper_kwargs}
    return PettingZooWrapper(to_vector_env(env, encoder, actions=actions), seed=seed, **kwargs)
