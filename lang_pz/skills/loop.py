"""``train(config)`` with ``method: maskills``: a skill library trained by lang_pz's public steps.

MASkills (Yao et al., "MASkills: Continual Skills Optimization for Multi-Agent LLM Systems",
EMNLP 2026 Findings) is LangMARL's loop with a skill library as the parameter. One iteration
(:func:`run_skill_iteration`), each line a public step::

    validate (test)        held-out test of the iteration's library: the learning curve
    collect                decentralised rollouts: SkillPolicy agents name a skill, see its body, act
    gather_skill_evidence  withheld-skill re-runs of the same seeds: measured utility per invoked skill
    assess                 the skill critic per episode (per-use contribution, per-agent residual)
    SkillMemory.update     aggregation across trajectories, skills, agents and topologies, decayed
    propose_library_edits  refine / induce / consolidate / prune, within the limits
    accept                 each edit validated on held-out seeds (generic accept, acceptance_groups)
    settle                 kept, or rolled back to the previous version with the rollback recorded

``collect``, ``validate``, ``assess``, ``accept``, ``acceptance_groups``, ``iteration_metrics``,
``UsageMeter``, the run folder, the budget (``max_llm_calls``, uncached calls), ``test_seeds``
and the per-role usage are :mod:`lang_pz.training`'s, unchanged: the skill choice and act
requests are the actor's, the skill critic is the critic's and the skill writer the optimiser's
role. In ``metrics.jsonl`` a skill run's ``changed_agents`` / ``accepted_agents`` hold edit
labels (e.g. ``refine team/push-up``). The run folder also holds each iteration's library
(``iter_NNN/skills``), its edits and their fate (``skill_edits.jsonl``) and the memory
(``skill_memory.json``); ``done.json`` holds the library after the iteration, so ``--resume``
continues from there (:mod:`lang_pz.runs`).

Ablations (config): ``skill_credit: episode`` (no per-invocation credit: every skill shown
shares the episode's outcome and is judged by the critic), ``skill_rollback: false`` (every
edit kept unvalidated).

Executors: episodes and validation run on any executor (the :class:`SkillTeamSpec` pickles with
its library); withheld-skill re-runs run on local threads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lang_pz.backends import LLMBackend
from lang_pz.error import InvalidKwargError, RunDirError, SkillLibraryError
from lang_pz.runs import IterationLog, RunFolder, atomic_write
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import SkillCritic
from lang_pz.skills.files import read_library, write_library
from lang_pz.skills.library import Scoping, SkillLibrary, SkillLimits, library_from_json, library_to_json
from lang_pz.skills.operators import ProposalRules, SkillWriter
from lang_pz.skills.steps import (
    LibraryCritic,
    gather_skill_evidence,
    library_validator,
    propose_library_edits,
    settle,
    shared_evidence,
)
from lang_pz.skills.team import SkillTeamSpec, embedded_actor
from lang_pz.training.accept import accept, acceptance_groups
from lang_pz.training.config import TrainConfig
from lang_pz.training.checks import role_backends
from lang_pz.training.loop import Parts, build, final_test, initial_policies
from lang_pz.training.state import (
    Callback,
    IterationMetrics,
    TrainResult,
    TrainState,
    UsageMeter,
    iteration_metrics,
    open_run,
)
from lang_pz.training.steps import assess, collect, validate


@dataclass
class SkillState(TrainState):
    """:class:`~lang_pz.training.state.TrainState` of a skills run: ``policies`` are the agents' base
    instructions (unchanged by training), plus the library and the aggregated evidence."""

    library: SkillLibrary = field(default_factory=SkillLibrary)
    memory: SkillMemory = field(default_factory=SkillMemory)

    def to_json(self) -> dict[str, Any]:
        """The ``done.json`` fields (besides ``metrics``); the memory is its own file."""
        return {**super().to_json(), "library": library_to_json(self.library)}


@dataclass
class SkillParts:
    """What a skills run is made of besides :class:`~lang_pz.training.loop.Parts`.

    Attributes:
        parts: env, environment pool, executor, role meters, objective, config, agents.
        critic: the skill critic (critic role).
        writer: the skill writer of refine / induce / consolidate (optimiser role).
        scoping: who sees which scope, where induced skills go.
        limits: library and skill bounds.
        rules: when each operator runs.
        start: the starting library.
    """

    parts: Parts
    critic: SkillCritic
    writer: SkillWriter
    scoping: Scoping
    limits: SkillLimits
    rules: ProposalRules
    start: SkillLibrary

    def team(self, library: SkillLibrary, policies: Mapping[str, str]) -> SkillTeamSpec:
        """``env -> team``: the trainable LLM agents on ``library``, the other text agents plain
        LLM policies, fixed partners as configured."""
        p = self.parts
        return SkillTeamSpec(dict(policies), p.config, p.meters["actor"], library=library, scoping=self.scoping,
                             skilled=tuple(p.trainable))


def limits_of(config: TrainConfig) -> SkillLimits:
    """The :class:`SkillLimits` of a config."""
    return SkillLimits(config.max_skills, config.max_skills_per_scope, config.max_skill_description_chars,
                       config.max_skill_body_chars)


def build_skills(config: TrainConfig, *, backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
                 critic: SkillCritic | None = None, writer: SkillWriter | None = None,
                 start: SkillLibrary | None = None) -> SkillParts:
    """Build (and check) every part of a skills run; nothing is written.

    With every role on the embedded model and the local executor, the actor gets two model
    instances (:func:`~lang_pz.skills.team.embedded_actor`: skill choices on one, actions on the
    other, so each keeps its prompt prefix).

    Args:
        config: the run's config (``method: maskills``).
        backends / critic / writer: objects instead of the config's specs.
        start: the starting library (default: read from ``config.skills``, or empty).

    Raises:
        SkillFormatError / SkillLibraryError / FileNotFoundError: ``config.skills`` is not a
            valid library within the limits (the message names the file and the field or bound),
            or has a scope folder that names no agent or role of the env.
        InvalidKwargError: ``skill_roles`` names an agent the env does not have; and
            everything :func:`lang_pz.training.build` raises.
    """
    limits = limits_of(config)
    if start is None:
        start = read_library(config.skills) if config.skills else SkillLibrary()
    problems = limits.problems(start)
    if problems:
        raise SkillLibraryError(f"starting library {config.skills}: {'; '.join(problems)}; shorten the skills or "
                                "raise max_skills / max_skills_per_scope / max_skill_description_chars / "
                                "max_skill_body_chars")
    given = role_backends(backends)
    if "actor" not in given and config.executor == "local" and config.backend_spec("actor") == "embedded":
        given["actor"] = embedded_actor("embedded", config.backend_options.get("embedded", {}))
    parts = build(config, backends=given or None)
    unknown = sorted(set(config.skill_roles) - set(parts.env.possible_agents))
    if unknown:
        raise InvalidKwargError(f"skill_roles names {unknown}, which are not agents of {config.env_id}; its agents "
                                f"are {list(parts.env.possible_agents)}")
    per_step = max(20, min(200, config.critic_max_prompt_chars // config.critic_max_prompt_steps))
    critic = critic or SkillCritic(
        parts.meters["critic"], max_attempts=config.critic_max_attempts, max_prompt_steps=config.critic_max_prompt_steps,
        max_state_chars=per_step, temperature=config.critic_temperature, retry_temperature=config.retry_temperature,
        seed=config.seed, attribution="invoked" if config.skill_credit == "invocation" else "offered")
    writer = writer or SkillWriter(parts.meters["optimiser"], limits=limits, max_attempts=config.optimiser_max_attempts,
                                   temperature=config.optimiser_temperature,
                                   retry_temperature=config.retry_temperature, seed=config.seed)
    scoping = Scoping(config.skill_scoping, dict(config.skill_roles))
    unseen = scoping.unseen(start, parts.env.possible_agents)
    if unseen:
        raise SkillLibraryError(f"starting library {config.skills}: scope folder(s) {unseen} name no agent or role of "
                                f"{config.env_id} (its agents: {list(parts.env.possible_agents)}), so their skills "
                                "would never be offered; rename or remove them, or map agents to roles with skill_roles")
    sp = SkillParts(parts, critic, writer, scoping, limits, ProposalRules(max_edits=config.max_skill_edits), start)
    sp.team(start, initial_policies(config, parts))(parts.env)  # every policy is buildable now
    return sp


def run_skill_iteration(config: TrainConfig, sp: SkillParts, state: SkillState, log: IterationLog,
                        callbacks: Sequence[Callback] = ()) -> tuple[IterationMetrics, SkillState]:
    """One skills iteration (module docstring); writes the iteration's files, ``done.json`` last.

    Returns:
        ``(its metrics, the state after it)``.
    """
    cfg, parts, it, meter = config, sp.parts, log.iteration, UsageMeter(sp.parts.meters, log)
    envs, ex, objective = parts.envs, parts.executor, parts.objective
    log.files.skill_edits.unlink(missing_ok=True)  # a redone iteration writes its edits again
    log.write_policies(state.policies)
    write_library(state.library, log.files.skills, overwrite=True)
    team = sp.team(state.library, state.policies)

    tested = validate(envs, team, cfg.test_seeds, objective=objective, log=log, label="current", test=True, executor=ex)
    validating = cfg.skill_rollback and bool(cfg.validation_seeds)
    value = state.value
    if value is None and validating:
        value = validate(envs, team, cfg.validation_seeds, objective=objective, log=log, label="current", executor=ex)
    trajectories = collect(envs, team, cfg.training_seeds(it), cfg.episode_numbers(it), log=log, executor=ex,
                           on_episode=lambda t: [c.on_episode(it, t) for c in callbacks], desc=f"iter {it} episodes")
    if cfg.skill_credit == "invocation":
        evidence = [gather_skill_evidence(envs, team, t, objective, max_reruns=cfg.skill_reruns, log=log, executor=ex)
                    for t in trajectories]
    else:
        evidence = [shared_evidence(t, state.library, objective, value, log=log) for t in trajectories]
    reports, critic_failures = assess(LibraryCritic(sp.critic, state.library), trajectories, state.policies, evidence,
                                      log=log, executor=ex)
    memory = state.memory.update(state.library, trajectories, reports, [u for e in evidence for u in e.utilities])
    edits, writer_failures = propose_library_edits(state.library, memory, sp.writer, scoping=sp.scoping,
                                                   rules=sp.rules, log=log)
    labels = list(edits)
    validate_edits = library_validator(envs, team, cfg.validation_seeds, edits, objective=objective, limits=sp.limits,
                                       enabled=validating, log=log, executor=ex)
    decision = accept({}, {k: e.summary() for k, e in edits.items()}, value, validate_edits,
                      groups=acceptance_groups(labels, cfg.acceptance_rule), tolerance=cfg.tolerance, log=log)
    library, events = settle(state.library, edits, decision, limits=sp.limits, tolerance=cfg.tolerance,
                             memory=memory, log=log)

    metrics = iteration_metrics(it, trajectories, value, decision, labels, {}, critic_failures, writer_failures,
                                meter, tested)
    new = SkillState(dict(state.policies), decision.value, None, state.calls + metrics.spent_calls,
                     state.uncached_calls + metrics.spent_uncached_calls, library=library, memory=memory)
    atomic_write(log.files.skill_memory, json.dumps(memory.to_json(), indent=1))
    log.done({"metrics": asdict(metrics), **new.to_json(), "skill_events": events})
    for c in callbacks:
        c.on_iteration(metrics, new)
    return metrics, new


@dataclass
class SkillTrainResult(TrainResult):
    """A finished skills run: :class:`~lang_pz.training.state.TrainResult` and the libraries before and after."""

    initial_library: SkillLibrary = field(default_factory=SkillLibrary)
    final_library: SkillLibrary = field(default_factory=SkillLibrary)


def _resumed_state(run: RunFolder, done: list[dict[str, Any]]) -> SkillState:
    last, path = done[-1], run.iteration(len(done) - 1).skill_memory
    try:
        mem = SkillMemory.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunDirError(f"{path} cannot be read ({exc}); delete iteration {len(done) - 1}'s done.json to redo it")
    return SkillState(dict(last["policies"]), last["val_return_next"], None, last["calls_total"],
                      last.get("uncached_calls_total", last["calls_total"]), library=library_from_json(last["library"]),
                      memory=mem)


def train_skills(
    config: TrainConfig | None = None,
    *,
    resume: str | Path | None = None,
    backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
    critic: SkillCritic | None = None,
    writer: SkillWriter | None = None,
    callbacks: Sequence[Callback] = (),
    progress: Callable[[str], None] | None = None,
) -> SkillTrainResult:
    """Run (or continue) a skills run: :func:`run_skill_iteration` per iteration, as
    :func:`lang_pz.training.train` does for text policies (it calls this for ``method: maskills``).

    Args:
        config: the run's config (not with ``resume``).
        resume: a run folder to continue (its ``config.json``; the starting library from its
            ``iter_000/skills``, the current one from the last ``done.json``).
        backends / critic / writer: objects instead of the config's specs.
        callbacks: per-episode and per-iteration hooks (``state`` is a :class:`SkillState`).
        progress: called with a status line per iteration.

    Returns:
        The :class:`SkillTrainResult` (also on disk: ``final/skills``, ``final/test.jsonl``).

    Raises:
        ValueError: both or neither of ``config`` and ``resume``, or a config whose method is
            not ``maskills``; and everything :func:`build_skills` raises (before anything is
            written) or :func:`lang_pz.training.train` raises for its run folder.
    """
    say = progress or (lambda _msg: None)
    run, config, done = open_run(config, resume)
    start = read_library(run.iteration(0).skills) if resume is not None and run.iteration(0).skills.is_dir() else None
    if config.method != "maskills":
        raise ValueError(f"train_skills trains skill libraries (method 'maskills'); this config's method is "
                         f"{config.method!r}: use lang_pz.training.train")
    sp = build_skills(config, backends=backends, critic=critic, writer=writer, start=start)
    if resume is None:
        run.create(config.model_dump_json(indent=2))
    parts, policies = sp.parts, initial_policies(config, sp.parts)
    fresh = SkillState(policies, library=sp.start, memory=SkillMemory(beta=config.momentum, min_weight=0.2))
    state = _resumed_state(run, done) if done else fresh
    result = SkillTrainResult(run_dir=run.root, initial_policies=dict(policies), initial_library=sp.start,
                              metrics=[IterationMetrics(**d["metrics"]) for d in done])
    if done:
        say(f"resuming {run.root} after {len(done)} completed iteration(s)")
    run.rewrite_metrics([d["metrics"] for d in done])
    try:
        for it in range(len(done), config.iterations):
            if config.max_llm_calls is not None and state.uncached_calls >= config.max_llm_calls:
                result.stopped = (f"LLM-call budget reached ({state.uncached_calls} uncached calls >= "
                                  f"{config.max_llm_calls})")
                say(f"stopping before iteration {it}: {result.stopped}")
                break
            log = run.begin(it)
            if log.kept:
                say(f"iteration {it}: kept {len(log.kept)} finished episode(s) of the interrupted attempt")
            m, state = run_skill_iteration(config, sp, state, log, callbacks)
            result.metrics.append(m)
            say(f"iteration {it}: train return {m.train_return:.1f}, validation {_num(m.val_return)} -> "
                f"{_num(m.candidate_val_return)}; {len(m.accepted_agents)} of {len(m.changed_agents)} edit(s) kept, "
                f"library version {state.library.version} ({len(state.library)} skill(s))")
        run.finish(state.policies)
        write_library(state.library, run.final_skills, overwrite=True)
        result.final_policies, result.final_library = dict(state.policies), state.library
        if config.test_seeds:
            result.final_test_return = final_test(config, parts, run, sp.team(state.library, state.policies))
    finally:
        parts.close()
    return result


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


__all__ = ["SkillParts", "SkillState", "SkillTrainResult", "build_skills", "limits_of", "run_skill_iteration",
           "train_skills"]
