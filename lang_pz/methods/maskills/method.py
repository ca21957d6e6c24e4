"""MASkills: a skill library as the parameter, trained by lang_pz's shared steps.

MASkills (Yao et al., "MASkills: Continual Skills Optimization for Multi-Agent LLM Systems",
EMNLP 2026 Findings) is LangMARL's loop with a skill library as the parameter. One iteration
(:meth:`MASkills.iteration`), each line a step::

    play_batch             held-out test, current validation, decentralised rollouts: SkillPolicy
                           agents name a skill, see its body, act
    evidence               withheld-skill re-runs of the same seeds: measured utility per invoked skill
    assess                 the skill critic per episode (per-use contribution, per-agent residual)
    SkillMemory.update     aggregation across trajectories, skills, agents and topologies, decayed
    propose_library_edits  refine / induce / consolidate / prune, within the limits
    accept                 each edit validated on held-out seeds (generic accept, acceptance_groups)
    settle                 kept, or rolled back to the previous version with the rollback recorded

The run folder, the budget (``max_llm_calls``, uncached calls), ``test_seeds`` and the per-role
usage are :func:`lang_pz.training.train`'s, unchanged: the skill choice and act requests are the
actor's, the skill critic is the critic's and the skill writer the optimiser's role. In
``metrics.jsonl`` a skill run's ``changed_agents`` / ``accepted_agents`` hold edit labels (e.g.
``refine team/push-up``). The run folder also holds each iteration's library
(``iter_NNN/skills``), its edits and their fate (``skill_edits.jsonl``) and the memory
(``skill_memory.json``); ``done.json`` holds the library after the iteration, so ``--resume``
continues from there (:mod:`lang_pz.runs`).

Ablations (config): ``skill_credit: episode`` (no per-invocation credit: every skill shown
shares the episode's outcome and is judged by the critic), ``skill_rollback: false`` (every
edit kept unvalidated).

Executors: episodes, withheld-skill re-runs and validation run on any executor (the
:class:`SkillTeamSpec` pickles with its library).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lang_pz.backends import LLMBackend
from lang_pz.error import InvalidKwargError, RunDirError, SkillLibraryError
from lang_pz.methods.base import Method
from lang_pz.methods.maskills.steps import (
    LibraryCritic,
    SkillEvidence,
    edit_candidates,
    gather_skill_evidence,
    library_validator,
    propose_library_edits,
    settle,
    shared_evidence,
)
from lang_pz.runs import IterationLog, RunFolder, atomic_write
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import SkillCritic
from lang_pz.skills.files import read_library, write_library
from lang_pz.skills.library import Scoping, SkillLibrary, SkillLimits, library_from_json, library_to_json
from lang_pz.skills.operators import ProposalRules, SkillWriter
from lang_pz.skills.team import SkillTeamSpec, embedded_actor
from lang_pz.training.accept import accept, acceptance_groups
from lang_pz.training.checks import role_backends
from lang_pz.training.config import MASkillsConfig, TrainConfig
from lang_pz.training.parts import Parts, build, initial_policies
from lang_pz.training.state import Callback, IterationMetrics, TrainResult, TrainState, UsageMeter, iteration_metrics
from lang_pz.training.steps import Batch, assess, play_batch, validate


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
class SkillTrainResult(TrainResult):
    """A finished skills run: :class:`~lang_pz.training.state.TrainResult` and the libraries before and after."""

    initial_library: SkillLibrary = field(default_factory=SkillLibrary)
    final_library: SkillLibrary = field(default_factory=SkillLibrary)


def settings(config: TrainConfig) -> MASkillsConfig:
    """``config``'s ``maskills`` section (:meth:`~lang_pz.training.config.TrainConfig.settings_of`)."""
    return config.settings_of("maskills")


def limits_of(config: TrainConfig) -> SkillLimits:
    """The :class:`SkillLimits` of a config."""
    ms = settings(config)
    return SkillLimits(ms.max_skills, ms.max_skills_per_scope, ms.max_skill_description_chars, ms.max_skill_body_chars)


class MASkills(Method[SkillState]):
    """A skill library as the parameter (module docstring).

    Attributes:
        critic: the skill critic (critic role).
        writer: the skill writer of refine / induce / consolidate (optimiser role).
        scoping: who sees which scope, where induced skills go.
        limits: library and skill bounds.
        rules: when each operator runs.
        start_library: the starting library.
    """

    name = "maskills"
    objects = ("critic", "writer")

    def __init__(
        self,
        parts: Parts,
        critic: SkillCritic,
        writer: SkillWriter,
        scoping: Scoping,
        limits: SkillLimits,
        rules: ProposalRules,
        start_library: SkillLibrary,
    ) -> None:
        super().__init__(parts)
        self.critic, self.writer, self.scoping, self.limits = critic, writer, scoping, limits
        self.rules, self.start_library = rules, start_library

    @classmethod
    def build(  # type: ignore[override]  # base's **objects: the names in objects
        cls,
        config: TrainConfig,
        *,
        backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
        run: RunFolder | None = None,
        critic: SkillCritic | None = None,
        writer: SkillWriter | None = None,
        start: SkillLibrary | None = None,
    ) -> MASkills:
        """Build (and check) every part of a skills run; nothing is written.

        With every role on the embedded model and the local executor, the actor gets two model
        instances (:func:`~lang_pz.skills.team.embedded_actor`: skill choices on one, actions on the
        other, so each keeps its prompt prefix).

        Args:
            config: the run's config (``method: maskills``).
            backends: backend objects instead of the config's specs.
            critic: a skill critic object instead of the config's spec.
            writer: a writer object instead of the config's spec.
            run: the run being resumed: its starting library is its ``iter_000/skills``.
            start: the starting library (default: ``run``'s, else read from ``config.maskills.skills``, or empty).

        Raises:
            SkillFormatError / SkillLibraryError / FileNotFoundError: ``config.maskills.skills`` is not a
                valid library within the limits (the message names the file and the field or bound),
                or has a scope folder that names no agent or role of the env.
            InvalidKwargError: ``skill_roles`` names an agent the env does not have; and
                everything :func:`lang_pz.training.build` raises.
        """
        ms, limits = settings(config), limits_of(config)
        if start is None and run is not None and run.iteration(0).skills.is_dir():
            start = read_library(run.iteration(0).skills)
        if start is None:
            start = read_library(ms.skills) if ms.skills else SkillLibrary()
        problems = limits.problems(start)
        if problems:
            raise SkillLibraryError(
                f"starting library {ms.skills}: {'; '.join(problems)}; shorten the skills or "
                "raise max_skills / max_skills_per_scope / max_skill_description_chars / "
                "max_skill_body_chars"
            )
        given = role_backends(backends)
        if "actor" not in given and config.executor == "local" and config.backend_spec("actor") == "embedded":
            given["actor"] = embedded_actor("embedded", config.backend_options.get("embedded", {}))
        parts = build(config, backends=given or None)
        unknown = sorted(set(ms.skill_roles) - set(parts.env.possible_agents))
        if unknown:
            raise InvalidKwargError(
                f"skill_roles names {unknown}, which are not agents of {config.env_id}; its agents "
                f"are {list(parts.env.possible_agents)}"
            )
        per_step = max(20, min(200, config.critic_max_prompt_chars // config.critic_max_prompt_steps))
        critic = critic or SkillCritic(
            parts.meters["critic"],
            max_attempts=config.critic_max_attempts,
            max_prompt_steps=config.critic_max_prompt_steps,
            max_state_chars=per_step,
            temperature=config.critic_temperature,
            retry_temperature=config.retry_temperature,
            seed=config.seed,
            attribution="invoked" if ms.skill_credit == "invocation" else "offered",
        )
        writer = writer or SkillWriter(
            parts.meters["optimiser"],
            limits=limits,
            max_attempts=config.optimiser_max_attempts,
            temperature=config.optimiser_temperature,
            retry_temperature=config.retry_temperature,
            seed=config.seed,
        )
        scoping = Scoping(ms.skill_scoping, dict(ms.skill_roles))
        unseen = scoping.unseen(start, parts.env.possible_agents)
        if unseen:
            raise SkillLibraryError(
                f"starting library {ms.skills}: scope folder(s) {unseen} name no agent or role "
                f"of {config.env_id} (its agents: {list(parts.env.possible_agents)}), so their "
                "skills would never be offered; rename or remove them, or map agents to roles "
                "with skill_roles"
            )
        method = cls(parts, critic, writer, scoping, limits, ProposalRules(max_edits=ms.max_skill_edits), start)
        method.library_team(start, initial_policies(config, parts))(parts.env)  # every policy is buildable now
        return method

    def library_team(self, library: SkillLibrary, policies: Mapping[str, str]) -> SkillTeamSpec:
        """``env -> team``: the trainable LLM agents on ``library``, the other text agents plain
        LLM policies, fixed partners as configured."""
        p = self.parts
        return SkillTeamSpec(
            dict(policies), p.config, p.meters["actor"], library=library, scoping=self.scoping, skilled=tuple(p.trainable)
        )

    def team(self, state: SkillState) -> SkillTeamSpec:
        return self.library_team(state.library, state.policies)

    def start(self) -> SkillState:
        return SkillState(
            initial_policies(self.config, self.parts),
            library=self.start_library,
            memory=SkillMemory(beta=self.config.momentum, min_weight=0.2),
        )

    def restore(self, run: RunFolder, done: Sequence[dict[str, Any]]) -> SkillState:
        last, path = done[-1], run.iteration(len(done) - 1).skill_memory
        try:
            mem = SkillMemory.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RunDirError(
                f"{path} cannot be read ({exc}); delete iteration {len(done) - 1}'s done.json to redo it"
            ) from exc
        return SkillState(
            dict(last["policies"]),
            last["val_return_next"],
            None,
            last["calls_total"],
            last.get("uncached_calls_total", last["calls_total"]),
            library=library_from_json(last["library"]),
            memory=mem,
        )

    def result(self, run_dir: Path, start: SkillState, metrics: list[IterationMetrics]) -> SkillTrainResult:
        return SkillTrainResult(
            run_dir=run_dir, initial_policies=dict(start.policies), initial_library=self.start_library, metrics=metrics
        )

    def finish(self, run: RunFolder, state: SkillState, result: TrainResult) -> None:
        super().finish(run, state, result)
        write_library(state.library, run.final_skills, overwrite=True)
        if isinstance(result, SkillTrainResult):
            result.final_library = state.library

    def summary(self, metrics: IterationMetrics, state: SkillState) -> str:
        return (
            f"{len(metrics.accepted_agents)} of {len(metrics.changed_agents)} edit(s) kept, library version "
            f"{state.library.version} ({len(state.library)} skill(s))"
        )

    # -- the stages of one iteration -------------------------------------------------------

    @property
    def validating(self) -> bool:
        """Whether edits are validated (and rolled back on a regression): ``skill_rollback`` and
        validation seeds."""
        return settings(self.config).skill_rollback and bool(self.config.validation_seeds)

    def evidence(self, state: SkillState, team: SkillTeamSpec, batch: Batch, log: IterationLog) -> list[SkillEvidence]:
        """Withheld-skill re-runs per episode, or (``skill_credit: episode``) the shared outcome."""
        cfg, p = settings(self.config), self.parts
        if cfg.skill_credit == "invocation":
            return [
                gather_skill_evidence(
                    p.envs, team, t, p.objective, max_reruns=cfg.skill_reruns, log=log, executor=p.executor
                )
                for t in batch.trajectories
            ]
        return [shared_evidence(t, state.library, p.objective, batch.value, log=log) for t in batch.trajectories]

    def iteration(
        self, state: SkillState, log: IterationLog, callbacks: Sequence[Callback] = ()
    ) -> tuple[IterationMetrics, SkillState]:
        cfg, p, it = self.config, self.parts, log.iteration
        meter = UsageMeter(p.meters, log)
        log.files.skill_edits.unlink(missing_ok=True)  # a redone iteration writes its edits again
        log.write_policies(state.policies)
        write_library(state.library, log.files.skills, overwrite=True)
        team = self.team(state)

        def current() -> float | None:
            if not self.validating:
                return None
            return validate(
                p.envs, team, cfg.validation_seeds, objective=p.objective, log=log, label="current", executor=p.executor
            )

        batch = play_batch(
            p.envs,
            team,
            cfg.training_seeds(it),
            cfg.episode_numbers(it),
            value=state.value if state.value is not None else current,
            test_seeds=cfg.test_seeds,
            objective=p.objective,
            log=log,
            executor=p.executor,
            on_episode=self.on_episode(it, callbacks),
            desc=f"iter {it} episodes",
        )
        evidence = self.evidence(state, team, batch, log)
        reports, critic_failures = assess(
            LibraryCritic(self.critic, state.library),
            batch.trajectories,
            state.policies,
            evidence,
            log=log,
            executor=p.executor,
        )
        memory = state.memory.update(state.library, batch.trajectories, reports, [u for e in evidence for u in e.utilities])
        edits, writer_failures = propose_library_edits(
            state.library, memory, self.writer, scoping=self.scoping, rules=self.rules, log=log
        )
        validate_library = library_validator(
            p.envs, team, cfg.validation_seeds, objective=p.objective, enabled=self.validating, log=log, executor=p.executor
        )
        decision = accept(
            state.library,
            edit_candidates(edits, self.limits),
            batch.value,
            validate_library,
            groups=acceptance_groups(list(edits), cfg.acceptance_rule),
            tolerance=cfg.tolerance,
            log=log,
        )
        library, events = settle(
            state.library, edits, decision, limits=self.limits, tolerance=cfg.tolerance, memory=memory, log=log
        )
        metrics = iteration_metrics(
            iteration=it,
            trajectories=batch.trajectories,
            value=batch.value,
            decision=decision,
            changed=list(edits),
            critic_failures=critic_failures,
            optimiser_failures=writer_failures,
            meter=meter,
            test_value=batch.tested,
        )
        new = SkillState(dict(state.policies), decision.value, None, **state.spent(metrics), library=library, memory=memory)
        atomic_write(log.files.skill_memory, json.dumps(memory.to_json(), indent=1))
        self.conclude(log, metrics, new, callbacks, skill_events=events)
        return metrics, new
