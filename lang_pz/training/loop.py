"""``train()``: the language-MARL loop as one short composition of the public steps.

One iteration (LangMARL's four stages; validated updates and momentum from MASkills)::

    collect          decentralised rollouts: each agent acts from its own observation and text
    gather_evidence  counterfactual re-runs of the same seeds (optional; evidence the system computes)
    assess           the critic: credit per agent, one shared critique, or independent critics
    evidence_gate    agents no re-run improved get no edit
    propose          per agent: a gradient per episode -> aggregate with momentum -> candidate
    accept           validation on held-out seeds; momentum committed for accepted agents only

:func:`run_iteration` is that composition; :func:`train` builds the parts from a
:class:`~lang_pz.training.config.TrainConfig` (or takes them as objects), runs or resumes the
iterations and writes the run folder (:mod:`lang_pz.runs`).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import lang_pz
from lang_pz.backends import LLMBackend, make_backend
from lang_pz.backends.limit import RequestLimit
from lang_pz.backends.meter import RoleMeter
from lang_pz.critics.base import Critic
from lang_pz.critics.central import CentralCritic
from lang_pz.critics.counterfactual import best_gain
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.error import InvalidKwargError
from lang_pz.executor import EnvPool, Executor, LocalExecutor
from lang_pz.objectives import Objective, default_objective, make_objective
from lang_pz.optimisers import Momentum, TextualPolicyOptimiser
from lang_pz.runs import IterationLog, RunFolder
from lang_pz.training.accept import (
    accept,
    acceptance_groups,
    commit_momentum,
    evidence_gate,
)
from lang_pz.training.checks import (
    check_agents,
    check_counterfactual,
    check_partners,
    check_policies,
    role_backends,
)
from lang_pz.training.config import ROLES, TrainConfig
from lang_pz.training.players import Reference
from lang_pz.training.state import (
    Callback,
    IterationMetrics,
    TrainResult,
    TrainState,
    UsageMeter,
    iteration_metrics,
    open_run,
)
from lang_pz.training.steps import (
    assess,
    collect,
    evaluate,
    gather_evidence,
    propose,
    validate,
)
from lang_pz.training.team import TeamSpec


@dataclass
class Parts:
    """What a run is made of, built once and checked before anything is written.

    Attributes:
        env: the language environment (PettingZoo, parallel or AEC); more instances of it are
            made by ``envs`` for concurrent episodes.
        envs: the :class:`~lang_pz.executor.EnvPool` the steps lease environments from.
        executor: runs each step's independent tasks.
        meters: role -> the backend of that role, counted per role.
        critic / optimiser: the critic and the textual optimiser.
        objective: what validation, re-runs and the gate compare.
        config: the run's config (fixed partners, backend specs).
        trainable: the agents the optimiser updates.
        llm_agents: every agent with a text policy.
    """

    env: Any
    envs: EnvPool
    executor: Executor
    meters: dict[str, RoleMeter]
    critic: Critic
    optimiser: TextualPolicyOptimiser
    objective: Objective
    config: TrainConfig
    trainable: list[str]
    llm_agents: list[str]

    def actors(self, policies: Mapping[str, str]) -> TeamSpec:
        """``env -> team``: ``policies`` on the actor backend with fixed partners built for that
        environment instance (fresh policy objects per episode, so concurrent episodes share no
        state; picklable for remote workers)."""
        return TeamSpec(dict(policies), self.config, self.meters["actor"])

    def close(self) -> None:
        """Close the environment instances and the executor (its workers)."""
        self.envs.close()
        close = getattr(self.executor, "close", None)
        if callable(close):
            close()


def build(
    config: TrainConfig,
    *,
    backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
    critic: Critic | None = None,
    optimiser: TextualPolicyOptimiser | None = None,
) -> Parts:
    """Build (and check) every part of a run from ``config``; objects given replace the specs.

    Args:
        config: the run configuration.
        backends: one backend for every role, or role -> backend (missing roles are built from
            their specs); default: built from ``config``'s specs, one instance per distinct spec.
            Spec strings belong in the config (``actor_backend=...``), not here.
        critic: replaces the :class:`~lang_pz.critics.central.CentralCritic` built from the config.
        optimiser: replaces the :class:`~lang_pz.optimisers.TextualPolicyOptimiser` built from it.

    Raises:
        UnknownEnvironmentError / InvalidKwargError: a bad env id, kwargs, agent name, objective,
            partner, policy, counterfactual entry or ``backends`` object (each message names the value).
        BackendError / ValueError: a backend spec cannot be built.
    """
    env = lang_pz.make(config.env_id, **config.env_kwargs)
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
        warnings.warn(f"backend_options embedded instances={instances}, but at most {limit} LLM requests are in flight "
                      f"(workers / max_concurrent_requests): {instances - limit} instance(s) would stay idle, about "
                      "200 MB each; set workers to at least instances", UserWarning, stacklevel=2)
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
        meters[role] = RoleMeter(RequestLimit(inner, in_flight), role, tuple(config.prices.get(spec, (0.0, 0.0))))
    if critic is None and config.critic_mode == "counterfactual":
        critic = DifferenceCritic(meters["critic"], max_attempts=config.critic_max_attempts,
                                  temperature=config.critic_temperature, retry_temperature=config.retry_temperature)
    critic = critic or CentralCritic(
        meters["critic"], mode=config.critic_mode, max_attempts=config.critic_max_attempts,  # type: ignore[arg-type]
        max_prompt_steps=config.critic_max_prompt_steps, max_prompt_chars=config.critic_max_prompt_chars,
        credit_levels=config.critic_credit_levels, temperature=config.critic_temperature,
        retry_temperature=config.retry_temperature)
    optimiser = optimiser or TextualPolicyOptimiser(
        meters["optimiser"], max_policy_chars=config.max_policy_chars, max_rewrite=config.max_rewrite,
        max_attempts=config.optimiser_max_attempts, temperature=config.optimiser_temperature,
        retry_temperature=config.retry_temperature, directions=config.directions)
    envs = EnvPool(lambda: lang_pz.make(config.env_id, **config.env_kwargs), first=env)
    executor: Executor = LocalExecutor(workers)
    if config.executor == "ray":
        from lang_pz.executor_ray import RayExecutor

        executor = RayExecutor.for_run(config, workers, meters["actor"], actor_given="actor" in given)
    parts = Parts(env, envs, executor, meters, critic, optimiser, objective, config,
                  list(config.trainable_agents or llm_agents), llm_agents)
    parts.actors(initial_policies(config, parts))(env)  # every policy text is checked now
    return parts


def initial_policies(config: TrainConfig, parts: Parts) -> dict[str, str]:
    """Every LLM agent's starting policy (``initial_policies`` over ``initial_policy``)."""
    return {a: config.initial_policies.get(a, config.initial_policy) for a in parts.llm_agents}


def run_iteration(config: TrainConfig, parts: Parts, state: TrainState, log: IterationLog,
                  callbacks: Sequence[Callback] = ()) -> tuple[IterationMetrics, TrainState]:
    """One training iteration, composed of the public steps; writes the iteration's files.

    Returns:
        ``(its metrics, the state after it)``.
    """
    cfg, it, meter = config, log.iteration, UsageMeter(parts.meters, log)
    log.write_policies(state.policies)

    envs, ex = parts.envs, parts.executor

    val = validator(parts, log)
    actors = parts.actors(state.policies)
    # the held-out test, the current policies' validation and the training episodes are independent
    with ThreadPoolExecutor(2) as side:
        submit = side.submit if ex.workers > 1 or not isinstance(ex, LocalExecutor) else _now
        tested = submit(validate, envs, actors, cfg.test_seeds, objective=parts.objective, log=log, label="current",
                        test=True, executor=ex)
        value = submit(val, state.policies, "current") if state.value is None else _now(lambda: state.value)
        trajectories = collect(envs, actors, cfg.training_seeds(it), cfg.episode_numbers(it), log=log, executor=ex,
                               on_episode=lambda t: [c.on_episode(it, t) for c in callbacks],
                               desc=f"iter {it} episodes")
        tested, value = tested.result(), value.result()
    groups = probe_groups(cfg, parts)
    evidence = gather_evidence(envs, actors, trajectories, groups, cfg.counterfactual, objective=parts.objective,
                               seed=cfg.seed + it, steps=cfg.counterfactual_steps, log=log, executor=ex)
    reports, critic_failures = assess(parts.critic, trajectories, state.policies, evidence, log=log, executor=ex)
    gated = evidence_gate(parts.trainable, evidence, log=log) if cfg.counterfactual and cfg.evidence_gate else {}
    updates, optimiser_failures = propose(parts.optimiser, state.policies, [a for a in parts.trainable if a not in gated],
                                          reports, state.momentum, log=log, executor=ex)
    changed = [a for a, u in updates.items() if u.changed]
    decision = accept(state.policies, {a: updates[a].new for a in changed}, value, val, tolerance=cfg.tolerance,
                      groups=acceptance_groups(changed, cfg.acceptance_rule, {a: best_gain(a, evidence) for a in changed}),
                      log=log)
    commit_momentum(state.momentum, updates, decision.accepted_agents)

    metrics = iteration_metrics(it, trajectories, value, decision, changed, gated, critic_failures,
                                optimiser_failures, meter, tested)
    new = TrainState(decision.policies, decision.value, state.momentum, state.calls + metrics.spent_calls,
                     state.uncached_calls + metrics.spent_uncached_calls)
    log.done({"metrics": asdict(metrics), **new.to_json()})
    for c in callbacks:
        c.on_iteration(metrics, new)
    return metrics, new


def validator(parts: Parts, log: IterationLog | None = None) -> Callable[[Mapping[str, str], str], float | None]:
    """``(policies, label) -> value``: :func:`~lang_pz.training.steps.validate` of ``policies`` on the
    config's validation seeds, logged under ``label``; each call answers from the episodes of the
    call before it (a :class:`~lang_pz.training.players.Reference`), so a candidate that changes one
    agent asks only that agent and those its change reaches. Make one per iteration: nothing is
    carried to the next, so a resumed iteration makes the calls an uninterrupted one makes."""
    latest: list[Reference | None] = [None]

    def val(policies: Mapping[str, str], label: str) -> float | None:
        team, episodes = parts.actors(policies), {}
        value = validate(parts.envs, team, parts.config.validation_seeds, objective=parts.objective, log=log,
                         label=label, executor=parts.executor, reference=latest[-1],
                         on_episode=lambda t: episodes.__setitem__(t.seed, t))
        latest.append(Reference(team, episodes))
        return value

    return val


def probe_groups(config: TrainConfig, parts: Parts) -> list[list[str]]:
    """Whose decisions the counterfactual re-runs replace: the trainable agents one by one (the
    whole team at once for ``central_global``; every agent, partners too, for the
    ``counterfactual`` critic, which credits every agent from its own re-runs)."""
    if config.critic_mode == "central_global":
        return [list(parts.trainable)]
    agents = list(parts.env.possible_agents) if config.critic_mode == "counterfactual" else parts.trainable
    return [[a] for a in agents]


def _now(fn: Callable[..., Any], *args: Any, **kw: Any) -> Future[Any]:
    """A call made at once, as a finished future (the serial form of ``pool.submit``)."""
    done: Future[Any] = Future()
    try:
        done.set_result(fn(*args, **kw))
    except BaseException as exc:  # noqa: BLE001 - raised by result()
        done.set_exception(exc)
    return done


def final_test(config: TrainConfig, parts: Parts, run: RunFolder, team: Callable[[Any], Any]) -> float | None:
    """The held-out test of the final team (``env -> policies``, e.g. ``parts.actors(policies)``),
    written to ``final/test.jsonl`` (rewritten on resume)."""
    from lang_pz.runs import append_jsonl, atomic_write

    values = evaluate(parts.envs, team, config.test_seeds, objective=parts.objective, executor=parts.executor)
    atomic_write(run.final_test, "")
    for i, (s, v) in enumerate(zip(config.test_seeds, values)):
        append_jsonl(run.final_test, {"episode": i, "policies": "final", "seed": s, "objective": round(v, 3)})
    return sum(values) / len(values) if values else None


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}"


def train(
    config: TrainConfig | None = None,
    *,
    resume: str | Path | None = None,
    backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
    critic: Critic | None = None,
    optimiser: TextualPolicyOptimiser | None = None,
    callbacks: Sequence[Callback] = (),
    progress: Callable[[str], None] | None = None,
) -> TrainResult:
    """Run (or continue) a training run: :func:`run_iteration` per iteration (with ``method:
    maskills``, a skill library instead: :func:`lang_pz.skills.loop.train_skills`).

    Args:
        config: the run configuration (not with ``resume``).
        resume: a run folder to continue: its ``config.json`` is used, completed iterations are
            kept, the interrupted one is redone (keeping its finished training episodes).
        backends / critic / optimiser: objects instead of the config's specs (see :func:`build`);
            ``config.json`` still records the specs, so pass the same objects again to resume.
        callbacks: :class:`~lang_pz.training.state.Callback` hooks (per episode, per iteration).
        progress: called with a short status line per iteration (default: silent); rollouts,
            critic and optimiser calls also show tqdm bars on stderr.

    Returns:
        The :class:`TrainResult` (also on disk in ``result.run_dir``).

    Raises:
        lang_pz.error.UnknownEnvironmentError / InvalidKwargError: bad env id, kwargs, agents,
            objective or policies (checked before anything is written).
        lang_pz.error.BackendError: a backend cannot be built or reached.
        lang_pz.error.RunDirError: a new run's folder is not empty, or ``resume`` is not a run.
        ValueError: both or neither of ``config`` and ``resume``.
    """
    say = progress or (lambda _msg: None)
    if (config is None) == (resume is None):
        raise ValueError("give exactly one of config= (a new run) or resume= (a run folder to continue)")
    method = config.method if config is not None else RunFolder(resume).load_config().get("method")  # type: ignore[arg-type]
    if method == "maskills":  # a skill library is the parameter: lang_pz.skills.loop composes the same steps
        if critic is not None or optimiser is not None:
            raise ValueError("critic= and optimiser= are LangMARL's; a maskills run takes a SkillCritic and a "
                             "SkillWriter: call lang_pz.skills.loop.train_skills(config, critic=..., writer=...)")
        from lang_pz.skills.loop import train_skills

        return train_skills(config, resume=resume, backends=backends, callbacks=callbacks, progress=progress)
    run, config, done = open_run(config, resume)
    parts = build(config, backends=backends, critic=critic, optimiser=optimiser)  # before anything is written
    if resume is None:
        run.create(config.model_dump_json(indent=2))

    momentum = Momentum(beta=config.momentum, min_weight=0.2) if config.momentum > 0 else None
    start = initial_policies(config, parts)
    state = TrainState.from_json(done[-1], momentum) if done else TrainState(start, momentum=momentum)
    result = TrainResult(run_dir=run.root, initial_policies=dict(start),
                         metrics=[IterationMetrics(**d["metrics"]) for d in done])
    if done:
        say(f"resuming {run.root} after {len(done)} completed iteration(s)")
    run.rewrite_metrics([d["metrics"] for d in done])
    for it in range(len(done), config.iterations):
        if config.max_llm_calls is not None and state.uncached_calls >= config.max_llm_calls:
            result.stopped = f"LLM-call budget reached ({state.uncached_calls} uncached calls >= {config.max_llm_calls})"
            say(f"stopping before iteration {it}: {result.stopped}")
            break
        log = run.begin(it)
        if log.kept:
            say(f"iteration {it}: kept {len(log.kept)} finished episode(s) of the interrupted attempt")
        m, state = run_iteration(config, parts, state, log, callbacks)
        result.metrics.append(m)
        verdict = {None: "no candidate", True: "accepted", False: "rejected"}[m.accepted]
        say(f"iteration {it}: train return {m.train_return:.1f}, validation {_num(m.val_return)} -> "
            f"{_num(m.candidate_val_return)} ({verdict}: {len(m.accepted_agents)} of {len(m.changed_agents)} "
            "changed agent(s))")
    run.finish(state.policies)
    result.final_policies = dict(state.policies)
    if config.test_seeds:
        result.final_test_return = final_test(config, parts, run, parts.actors(state.policies))
    parts.close()
    return result
