"""What every method's run is made of: the environment, its pool, the executor, the role meters,
the objective and the agents (:class:`Parts`, built and checked by :func:`build`), and what one
iteration's steps play with and write to (:class:`Context`, ``parts.context(log)``).

A method (:mod:`lang_pz.methods`) adds its own parts on top (LangMARL a critic and a textual
optimiser, MASkills a skill critic and a skill writer); :func:`lang_pz.training.train` drives it.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import lang_pz
from lang_pz.backends import LLMBackend, make_backend
from lang_pz.backends.limit import RequestLimit
from lang_pz.backends.meter import RoleMeter
from lang_pz.error import InvalidKwargError
from lang_pz.executor import EnvPool, Executor, LocalExecutor
from lang_pz.objectives import Objective, default_objective, make_objective
from lang_pz.runs import IterationLog
from lang_pz.training.checks import (
    check_agents,
    check_counterfactual,
    check_partners,
    check_policies,
    role_backends,
)
from lang_pz.training.config import ROLES, TrainConfig
from lang_pz.training.phases import PHASES, check_phases, default_phase_kwargs, phase_env_kwargs
from lang_pz.training.state import Failure
from lang_pz.training.team import TeamSpec


@dataclass(frozen=True)
class Context:
    """What the steps of one iteration play with and write to, so that no step is handed them
    one by one: the environments, the executor, the objective, the iteration's log, and the
    failures its steps record (``parts.context(log)``; ``Context()`` for a step run alone: one
    task at a time, nothing written).

    Attributes:
        envs: the :class:`~lang_pz.executor.EnvPool` (or one environment) training episodes and
            their re-runs are played in.
        executor: runs each step's independent tasks.
        objective: what validation and re-runs measure (``None``: the team return).
        log: the iteration's log, if the steps write their records.
        iteration: the iteration's number.
        failures: every :class:`~lang_pz.training.state.Failure` the steps recorded (:meth:`fail`).
        validation_envs, test_envs: where validation and the held-out test are played (their
            phase's split, :mod:`lang_pz.training.phases`; ``None``: ``envs``).
    """

    envs: Any = None
    executor: Executor = field(default_factory=lambda: LocalExecutor(1))
    objective: Objective | None = None
    log: IterationLog | None = None
    iteration: int = 0
    failures: list[Failure] = field(default_factory=list)
    validation_envs: Any = None
    test_envs: Any = None

    def envs_of(self, phase: str) -> Any:
        """The environments of ``phase`` (``"train"``, ``"validation"`` or ``"test"``)."""
        return {"validation": self.validation_envs, "test": self.test_envs}.get(phase) or self.envs

    def record(self, kind: str, record: dict[str, Any]) -> None:
        """Append ``record`` to the iteration's ``KIND.jsonl`` (nothing without a log)."""
        if self.log is not None:
            self.log.log(kind, record)

    def fail(self, failure: Failure, kind: str, record: dict[str, Any]) -> None:
        """Record a failed call: in :attr:`failures` and as ``record`` in ``KIND.jsonl``."""
        self.failures.append(failure)
        self.record(kind, record)

    def calls(self) -> int | None:
        """LLM calls of the iteration so far (``None`` without a log that meters them)."""
        source = self.log.usage_source if self.log is not None else None
        return None if source is None else sum(int(u.get("calls", 0)) for u in source().values())


@dataclass
class Parts:
    """What a run is made of, built once and checked before anything is written.

    Attributes:
        env: the language environment (PettingZoo, parallel or AEC) of the training phase; more
            instances of it are made by ``envs`` for concurrent episodes.
        envs: the :class:`~lang_pz.executor.EnvPool` the steps lease environments from, per phase
            (``envs["train"]``, ``["validation"]``, ``["test"]``: each phase's own
            ``lang_pz.make`` arguments, :func:`lang_pz.training.phases.phase_env_kwargs`; phases
            with equal arguments share one pool).
        items: phase -> the items (task ids, start states, or first observations) its seeds
            play, checked disjoint at build (:func:`lang_pz.training.phases.check_phases`).
        executor: runs each step's independent tasks.
        meters: role -> the backend of that role, counted per role.
        objective: what validation, re-runs and the gate compare.
        config: the run's config (fixed partners, backend specs).
        trainable: the agents the method trains.
        llm_agents: every agent with a text policy.
    """

    env: Any
    envs: dict[str, EnvPool]
    executor: Executor
    meters: dict[str, RoleMeter]
    objective: Objective
    config: TrainConfig
    trainable: list[str]
    llm_agents: list[str]
    items: dict[str, list[str]] = field(default_factory=dict)

    def context(self, log: IterationLog | None = None) -> Context:
        """The :class:`Context` of an iteration's steps (``log``: the iteration's, if written)."""
        e = self.envs
        return Context(
            e["train"],
            self.executor,
            self.objective,
            log,
            log.iteration if log is not None else 0,
            validation_envs=e["validation"],
            test_envs=e["test"],
        )

    def initial_policies(self) -> dict[str, str]:
        """Every LLM agent's starting policy (``initial_policies`` over ``initial_policy``)."""
        return {a: self.config.initial_policies.get(a, self.config.initial_policy) for a in self.llm_agents}

    def actors(self, policies: Mapping[str, str]) -> TeamSpec:
        """``env -> team``: ``policies`` on the actor backend with fixed partners built for that
        environment instance (fresh policy objects per episode, so concurrent episodes share no
        state; picklable for remote workers)."""
        return TeamSpec(dict(policies), self.config, self.meters["actor"])

    def close(self) -> None:
        """Close the environment instances and the executor (its workers)."""
        for pool in {id(p): p for p in self.envs.values()}.values():
            pool.close()
        close = getattr(self.executor, "close", None)
        if callable(close):
            close()


def build(config: TrainConfig, *, backends: LLMBackend | Mapping[str, LLMBackend] | None = None) -> Parts:
    """Build (and check) the shared parts of a run from ``config``; backends given replace the specs.

    Args:
        config: the run configuration.
        backends: one backend for every role, or role -> backend (missing roles are built from
            their specs); default: built from ``config``'s specs, one instance per distinct spec.
            Spec strings belong in the config (``actor_backend=...``), not here.

    Raises:
        UnknownEnvironmentError / InvalidKwargError: a bad env id, kwargs, agent name, objective,
            partner, policy, counterfactual entry or ``backends`` object (each message names the value).
        BackendError / ValueError: a backend spec cannot be built.
    """
    defaults = default_phase_kwargs(config.env_id)
    per_phase: dict[str, dict[str, Any]] = {str(k): v for k, v in config.phase_env_kwargs.items()}
    kwargs: dict[str, dict[str, Any]] = {
        p: phase_env_kwargs(config.env_kwargs, per_phase, p, defaults=defaults) for p in PHASES
    }
    env = lang_pz.make(config.env_id, **kwargs["train"])
    agents = check_agents(config, env)
    check_counterfactual(config, env)
    objective = make_objective(config.objective or default_objective(config.env_id), agents, config.env_id)
    check_partners(config)
    TeamSpec({}, config).partners(env)  # a partner that cannot be built for this env fails now
    llm_agents = [a for a in agents if a not in config.partners]
    if not llm_agents:
        raise InvalidKwargError("every agent is a fixed partner: there is no text policy to train")
    check_policies(config)
    given = role_backends(backends)
    made: dict[str, LLMBackend] = {}
    meters: dict[str, RoleMeter] = {}
    workers = config.worker_count()
    limit = config.max_concurrent_requests or workers
    in_flight = threading.BoundedSemaphore(limit)
    instances = config.embedded_instances()
    if instances > limit:
        warnings.warn(
            f"backend_options embedded instances={instances}, but at most {limit} LLM requests are in flight "
            f"(workers / max_concurrent_requests): {instances - limit} instance(s) would stay idle, about "
            "200 MB each; set workers to at least instances",
            UserWarning,
            stacklevel=2,
        )
    for role in ROLES:
        spec = config.backend_spec(role)
        inner = given.get(role)
        if inner is None:
            # one model per distinct spec; the embedded model gets its own for the actors (with the
            # configured instances) and one instance for the critic and optimiser, so llama.cpp keeps
            # the actors' prompt prefix cached
            learner = spec == "embedded" and role != "actor"
            key = f"{spec}/{'learner' if learner else 'actor'}" if spec == "embedded" else spec
            if key not in made:
                options = dict(config.backend_options.get(spec, {}))
                if learner:
                    options.pop("instances", None)
                made[key] = make_backend(spec, **options)
            inner = made[key]
        price_in, price_out = config.prices.get(spec, (0.0, 0.0))
        meters[role] = RoleMeter(RequestLimit(inner, in_flight), role, (price_in, price_out))
    envs = _phase_pools(config.env_id, kwargs, env)
    items = check_phases(config.env_id, kwargs, _phase_seeds(config))
    executor: Executor = LocalExecutor(workers)
    if config.executor == "ray":
        from lang_pz.executor_ray import RayExecutor

        spec = config.backend_spec("actor")
        executor = RayExecutor.for_actor(
            spec,
            config.backend_options.get(spec, {}),
            config.prices.get(spec),
            workers,
            meters["actor"],
            actor_given="actor" in given,
        )
    trainable = list(config.trainable_agents or llm_agents)
    parts = Parts(env, envs, executor, meters, objective, config, trainable, llm_agents, items)
    parts.actors(parts.initial_policies())(env)  # every policy text is checked now
    return parts


def _phase_pools(env_id: str, kwargs: dict[str, dict[str, Any]], first: Any) -> dict[str, EnvPool]:
    """phase -> the pool of its environments (phases with equal arguments share one; ``first``
    is the training phase's instance)."""
    pools: dict[str, EnvPool] = {}
    for phase in PHASES:
        same = next((p for p in pools if kwargs[p] == kwargs[phase]), None)
        if same is not None:
            pools[phase] = pools[same]
            continue
        kw = kwargs[phase]
        pools[phase] = EnvPool(
            functools.partial(lang_pz.make, env_id, **kw), first=first if phase == "train" else None, spec=(env_id, kw)
        )
    return pools


def _phase_seeds(config: TrainConfig) -> dict[str, list[int]]:
    """phase -> every seed the run plays in it (all iterations' training seeds)."""
    train = [s for it in range(config.iterations) for s in config.training_seeds(it)]
    return {"train": train, "validation": list(config.validation_seeds), "test": list(config.test_seeds)}
