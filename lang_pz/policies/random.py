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
    action_components,
    action_range,
    legal_actions,
    mixed_rng,
)


class RandomPolicy(Policy):
    """Uniform over ``info["legal_actions"]``, uniform in ``info["action_range"]``, or each named
    number of ``info["action_components"]`` uniform in its range (``name=value`` pairs; a
    component with an infinite bound is drawn from a standard normal clipped to its range).

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
        components = action_components(info) if acts is None else None
        if acts is not None:
            action = acts[int(self.rng.integers(len(acts)))]
        elif components is not None:
            action = " ".join(
                f"{name}={min(max(round(self._uniform(lo, hi), 3), lo), hi):.6g}" for name, lo, hi in components
            )
        else:
            rng = action_range(info)
            if rng is None:
                keys = sorted(info) if info else []
                raise LangPZError(
                    "RandomPolicy needs info['legal_actions'] (finite actions), info['action_range'] (1-D "
                    f"continuous action) or info['action_components']; info has keys {keys}. A free-text "
                    "environment (e.g. the tasks/* ids) needs a text policy: `lang-pz play ... --policy llm`"
                )
            action = f"{float(self.rng.uniform(rng[0], rng[1])):.3f}"
        return Decision(action=action, raw_output=action, latency_s=time.perf_counter() - t0)

    def waits(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> bool:
        """``False``: no model is asked."""
        return False

    def _uniform(self, low: float, high: float) -> float:
        if np.isfinite(low) and np.isfinite(high):
            return float(self.rng.uniform(low, high))
        return float(np.clip(self.rng.standard_normal(), low, high))
