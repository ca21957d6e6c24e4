"""RLlib: register a lang_pz env under a name RLlib's ``config.environment(name)`` accepts.

* ``api="parallel"`` (default): :func:`lang_pz.interop.to_vector_env` of the language env in
  RLlib's ``ParallelPettingZooEnv`` (RLlib's PPO has no encoder for ``Dict({"text": Text})``
  and no ``Text`` action space).
* ``api="aec"`` (turn-based games): :func:`lang_pz.interop.to_masked_aec_env` in RLlib's
  ``PettingZooEnv``, observations in the form RLlib's action-masking module
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``, RLlib's
  current API stack) reads: ``{"observations": float32 vector, "action_mask": float32 0/1}``
  (:class:`RLlibMasks`; PettingZoo's own key is ``"observation"``, and the module takes
  ``log(action_mask)``, which needs floats).

Install with ``pip install 'lang_pz[rllib]'``: ray[rllib] 2.60's runtime deps without its
``gymnasium==1.2.2`` pin (``pip install 'ray[rllib]'`` would downgrade lang_pz's gymnasium 1.4;
RLlib's PPO trains on 1.4, ``tests/interop/test_rllib_training.py``). ``examples/interop_rllib.py``
trains PPO; ``docs/interop.md`` has PettingZoo's two RLlib tutorials ported to Ray 2.60.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from lang_pz.error import DependencyNotInstalled, LangPZError
from lang_pz.interop.aec import MaskedAECEnv, to_masked_aec_env
from lang_pz.interop.encoders import TextEncoder
from lang_pz.interop.wrappers import to_vector_env


class RLlibMasks(BaseWrapper):
    """A :class:`~lang_pz.interop.aec.MaskedAECEnv` observed as RLlib's action-masking module wants:
    ``{"observations": the observation flattened to float32, "action_mask": float32 0/1}``.

    Raises:
        LangPZError: ``env`` is no ``MaskedAECEnv``, or observes text (``observation="text"``).
    """

    def __init__(self, env: MaskedAECEnv) -> None:
        if not isinstance(env, MaskedAECEnv) or env.kind == "text":
            raise LangPZError(
                f"RLlibMasks takes to_masked_aec_env(env) with observation='vector' or 'raw', got {type(env).__name__}"
                + (" observing text" if isinstance(env, MaskedAECEnv) else "")
            )
        super().__init__(env)
        self._spaces = {}
        for agent in env.possible_agents:
            space, action = env.observation_space(agent), env.action_space(agent)
            assert isinstance(space, spaces.Dict) and isinstance(action, spaces.Discrete)  # MaskedAECEnv's
            n = int(np.prod(space["observation"].shape or (1,)))
            k = int(action.n)
            self._spaces[agent] = spaces.Dict(
                {
                    "observations": spaces.Box(-np.inf, np.inf, (n,), np.float32),
                    "action_mask": spaces.Box(0.0, 1.0, (k,), np.float32),
                }
            )

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {
            "observations": np.asarray(obs["observation"], dtype=np.float32).reshape(-1),
            "action_mask": obs["action_mask"].astype(np.float32),
        }


def register_rllib_env(
    name: str,
    env_id: str,
    *,
    encoder: TextEncoder | None = None,
    api: Literal["parallel", "aec"] = "parallel",
    observation: Literal["vector", "raw"] = "vector",
    **make_kwargs: Any,
) -> str:
    """Register ``env_id`` (made with ``api`` and ``make_kwargs``) with Ray Tune as ``name``;
    RLlib's ``env_config`` dict is merged over ``make_kwargs``.

    Args:
        api: ``"parallel"`` (``ParallelPettingZooEnv``) or ``"aec"`` for turn-based games
            (``PettingZooEnv`` of :class:`RLlibMasks`: train it with RLlib's
            ``ActionMaskingTorchRLModule``; see the module docstring).
        observation: ``"vector"`` (the encoded text) or ``"raw"`` (the game's own observation).

    Returns:
        ``name`` (for ``PPOConfig().environment(name)``).

    Raises:
        DependencyNotInstalled: RLlib is missing; the message says how to install it.
        LangPZError: another ``api`` or ``observation``.
    """
    if api not in ("parallel", "aec") or observation not in ("vector", "raw"):
        raise LangPZError(
            f"register_rllib_env takes api 'parallel' or 'aec' and observation 'vector' or 'raw', "
            f"got api={api!r}, observation={observation!r}"
        )
    try:
        from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv
        from ray.tune.registry import register_env
    except ImportError as exc:
        raise DependencyNotInstalled(
            f"register_rllib_env needs RLlib ({exc}): pip install 'lang_pz[rllib]' (ray[rllib]'s deps without "
            "its gymnasium==1.2.2 pin; `pip install 'ray[rllib]'` would downgrade gymnasium)"
        ) from exc
    import lang_pz

    def creator(config: Any) -> Any:
        kwargs = {**make_kwargs, **dict(config or {})}
        env = lang_pz.make(env_id, api=api, **kwargs)
        if api == "aec":
            return PettingZooEnv(RLlibMasks(to_masked_aec_env(env, encoder, observation=observation)))
        return ParallelPettingZooEnv(to_vector_env(env, encoder, observation=observation))

    register_env(name, creator)
    return name
