"""A uniformly random policy: the baseline every learned policy must beat."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from lang_pz.error import LangPZError
from lang_pz.policies.base import (
    Decision,
    Policy,
    action_range,
    legal_actions,
    mixed_rng,
)


class RandomPolicy(Policy):
    """Uniform over ``info["legal_actions"]``, or uniform in ``info["action_range"]``.

    Uses its own :class:`numpy.random.Generator`; never the global random state. Each episode
    reseeds it from ``seed`` and the episode seed (:meth:`reset`), so the same episode seed gives
    the same actions.

    Args:
        seed: construction seed, mixed into every episode's seed (``None``: the episode seed
            alone; fresh OS entropy for unseeded episodes).
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator from the construction seed and the episode's ``seed``."""
        self.rng = mixed_rng(self.seed, seed)

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Sample an action; the observation is ignored.

        Raises:
            LangPZError: ``info`` has neither ``"legal_actions"`` nor ``"action_range"``.
        """
        t0 = time.perf_counter()
        acts = legal_actions(info)
        if acts is not None:
            action = acts[int(self.rng.integers(len(acts)))]
        else:
            rng = action_range(info)
            if rng is None:
                keys = sorted(info) if info else []
                raise LangPZError(
                    "RandomPolicy needs info['legal_actions'] (finite actions) or "
                    f"info['action_range'] (1-D continuous action); info has keys {keys}. A free-text "
                    "environment (e.g. the tasks/* ids) needs a text policy: `lang-pz play ... --policy llm`"
                )
            action = f"{float(self.rng.uniform(rng[0], rng[1])):.3f}"
        return Decision(action=action, raw_output=action, latency_s=time.perf_counter() - t0)
