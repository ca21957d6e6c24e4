"""Who plays: text policies on the actor backend, next to fixed classical partners.

A :class:`TeamSpec` is ``env -> team``: it builds fresh policy objects for one environment
instance (partners such as Overcooked's greedy planner read that instance's state, and
stochastic policies keep per-episode state), so concurrent episodes share nothing. It is also
*data*: pickled for a remote worker (:mod:`lang_pz.executor_ray`) it carries the policy texts
and the run's config, never a model or an HTTP client; the worker builds its own backend from
the config's specs (:func:`worker_backend`) and its own environment (:func:`worker_env`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lang_pz import executor
from lang_pz.backends.base import LLMBackend
from lang_pz.policies.base import Policy
from lang_pz.policies.llm import LLMPolicy

if TYPE_CHECKING:
    from lang_pz.training.config import TrainConfig


def make_actors(
    policies: Mapping[str, str],
    backend: LLMBackend,
    partners: Mapping[str, Policy] | None = None,
    *,
    temperature: float = 0.0,
    seed: int = 0,
) -> dict[str, Policy]:
    """The team that plays: an :class:`~lang_pz.policies.llm.LLMPolicy` per text policy on
    ``backend`` (sampling at ``temperature`` with ``seed``; 0: greedy), plus the fixed
    ``partners`` (agent -> policy)."""
    actors = {a: LLMPolicy(p, backend, temperature=temperature, seed=seed) for a, p in policies.items()}
    return {**actors, **(partners or {})}


def make_partner(kind: str, env: Any, agent: str, seed: int) -> Policy:
    """A fixed classical policy for ``agent`` (the ``partners`` setting): ``random``,
    ``heuristic`` (Pistonball) or ``greedy`` (Overcooked, built for this ``env``).

    Raises:
        LangPZError: a kind that does not fit the environment (the message names the valid ones).
    """
    if kind == "random":
        from lang_pz.policies.random import RandomPolicy

        return RandomPolicy(seed=seed)
    if kind == "heuristic":
        from lang_pz.policies.scripted import PistonballHeuristic

        return PistonballHeuristic()
    from lang_pz.policies.overcooked import overcooked_partner

    return overcooked_partner(kind, env, agent, seed=seed)


@dataclass
class TeamSpec:
    """``env -> team`` for one set of text policies (see the module docstring).

    Attributes:
        policies: agent -> policy text.
        config: the run's config (env, partners, backend specs).
        backend: the actor backend here; on a remote worker it is rebuilt from ``config``.
    """

    policies: dict[str, str]
    config: TrainConfig
    backend: LLMBackend | None = field(default=None, repr=False)

    def partners(self, env: Any) -> dict[str, Policy]:
        """Fresh fixed partners for ``env`` (seeded ``config.seed + i`` in agent order)."""
        kinds = sorted(self.config.partners.items())
        return {a: make_partner(kind, env, a, self.config.seed + i) for i, (a, kind) in enumerate(kinds)}

    def llm_team(self) -> dict[str, Policy]:
        """The text policies alone (no partners), on the actor backend."""
        backend = self.backend if self.backend is not None else worker_backend(self.config)
        return make_actors(self.policies, backend, temperature=self.config.actor_temperature, seed=self.config.seed)

    def __call__(self, env: Any) -> dict[str, Policy]:
        return {**self.llm_team(), **self.partners(env)}

    def __getstate__(self) -> dict[str, Any]:  # a model or a client never leaves this process
        return {"policies": self.policies, "config": self.config, "backend": None}


def worker_backend(config: TrainConfig) -> LLMBackend:
    """The actor backend of a remote worker, built once per process from the config's spec
    (keys come from the worker's own environment; :func:`lang_pz.executor.worker_backend`)."""
    from lang_pz.backends import make_backend

    spec = config.backend_spec("actor")
    return executor.worker_backend(spec, lambda: make_backend(spec, **config.backend_options.get(spec, {})))


def worker_env(config: TrainConfig) -> Any:
    """A new environment of the run's id and kwargs (remote workers build their own)."""
    import lang_pz

    return lang_pz.make(config.env_id, **config.env_kwargs)
