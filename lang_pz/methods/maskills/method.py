"""MASkills: a skill library as the parameter, trained by lang_pz's shared steps.

MASkills (Yao et al., "MASkills: Continual Skills Optimization for Multi-Agent LLM Systems",
EMNLP 2026 Findings) is LangMARL's loop with a skill library as the parameter: the same
iteration (:meth:`lang_pz.methods.Method.iteration`), with these stages::

    play        held-out test, current validation, decentralised rollouts: SkillPolicy agents
                name a skill, see its body, act
    evidence    withheld-skill re-runs of the same seeds: measured utility per invoked skill
    assess      the skill critic per episode (per-use contribution, per-agent residual)
    gradients   SkillMemory.update: aggregation across trajectories, skills, agents and
                topologies, decayed
    propose     refine / induce / consolidate / prune, within the limits (the skill writer)
    accept      each edit validated on held-out seeds, a regression rolled back to the previous
                version with the rollback recorded (the shared accept step)
    commit      each edit's fate to skill_edits.jsonl and the memory

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

Validation answers from the previous validation's episodes where nothing changed, as LangMARL's
does (:func:`lang_pz.training.validation.validator`). That is sound for libraries: only a plain
:class:`~lang_pz.policies.llm.LLMPolicy` is replayed, and only a request its policy sent in the
reference episode; a :class:`~lang_pz.skills.policy.SkillPolicy` (whose requests show the
library, which the candidate changes) is never replayed, so only the text agents outside the
library (``trainable_agents`` a subset) are answered from the record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lang_pz.backends import LLMBackend
from lang_pz.error import InvalidKwargError, RunDirError, SkillLibraryError
from lang_pz.methods.base import Method, Proposal
from lang_pz.methods.maskills.steps import (
    EditProposal,
    LibraryCritic,
    SkillEvidence,
    edit_candidates,
    edit_events,
    gather_skill_evidence,
    propose_library_edits,
    shared_evidence,
)
from lang_pz.runs import IterationLog, RunFolder, atomic_write
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import SkillCritic
from lang_pz.skills.files import read_library, write_library
from lang_pz.skills.library import Scoping, SkillLibrary, SkillLimits, library_from_json, library_to_json
from lang_pz.skills.operators import ProposalRules, SkillWriter
from lang_pz.skills.team import SkillTeamSpec, embedded_actor
from lang_pz.training.accept import Acceptance
from lang_pz.training.checks import role_backends
from lang_pz.training.config import MASkillsConfig, TrainConfig
from lang_pz.training.parts import Context, Parts
from lang_pz.training.players import Team
from lang_pz.training.state import IterationMetrics, TrainResult, TrainState
from lang_pz.training.steps import Batch, assess


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


class MASkills(Method[SkillState, SkillLibrary]):
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
    settings_model = MASkillsConfig
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
    def backends_for(
        cls, config: TrainConfig, backends: LLMBackend | Mapping[str, LLMBackend] | None
    ) -> LLMBackend | Mapping[str, LLMBackend] | None:
        """With every role on the embedded model and the local executor, the actor gets two model
        instances (:func:`~lang_pz.skills.team.embedded_actor`: skill choices on one, actions on the
        other, so each keeps its prompt prefix)."""
        given = role_backends(backends)
        if "actor" not in given and config.executor == "local" and config.backend_spec("actor") == "embedded":
            given["actor"] = embedded_actor("embedded", config.backend_options.get("embedded", {}))
        return given or None

    @classmethod
    def assemble(  # type: ignore[override]  # base's **objects: the names in objects
        cls,
        parts: Parts,
        *,
        run: RunFolder | None = None,
        critic: SkillCritic | None = None,
        writer: SkillWriter | None = None,
        start: SkillLibrary | None = None,
    ) -> MASkills:
        """The skill critic, the writer and the starting library on ``parts``, checked.

        Args:
            parts: the shared parts of a ``method: maskills`` config.
            run: the run being resumed: its starting library is its ``iter_000/skills``.
            critic: a skill critic object instead of the config's spec.
            writer: a writer object instead of the config's spec.
            start: the starting library (default: ``run``'s, else read from ``config.maskills.skills``, or empty).

        Raises:
            SkillFormatError / SkillLibraryError / FileNotFoundError: ``config.maskills.skills`` is not a
                valid library within the limits (the message names the file and the field or bound),
                or has a scope folder that names no agent or role of the env.
            InvalidKwargError: ``skill_roles`` names an agent the env does not have.
        """
        config = parts.config
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
        method.library_team(start, parts.initial_policies())(parts.env)  # every policy is buildable now
        return method

    def library_team(self, library: SkillLibrary, policies: Mapping[str, str]) -> SkillTeamSpec:
        """``env -> team``: the trainable LLM agents on ``library``, the other text agents plain
        LLM policies, fixed partners as configured."""
        p = self.parts
        return SkillTeamSpec(
            dict(policies), p.config, p.meters["actor"], library=library, scoping=self.scoping, skilled=tuple(p.trainable)
        )

    def parameter(self, state: SkillState) -> SkillLibrary:
        return state.library

    def with_parameter(self, state: SkillState, parameter: SkillLibrary) -> SkillState:
        return replace(state, library=parameter)

    def team_for(self, state: SkillState, parameter: SkillLibrary) -> SkillTeamSpec:
        return self.library_team(parameter, state.policies)

    def start(self) -> SkillState:
        return SkillState(
            self.parts.initial_policies(),
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
        return SkillState(**SkillState.fields_of(last), library=library_from_json(last["library"]), memory=mem)

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

    def begin(self, state: SkillState, log: IterationLog) -> None:
        """The policies and the library this iteration plays (a redone iteration writes its edits again)."""
        log.files.skill_edits.unlink(missing_ok=True)
        super().begin(state, log)
        write_library(state.library, log.files.skills, overwrite=True)

    def validation_seeds(self) -> Sequence[int]:
        """The validation seeds, none with ``skill_rollback: false`` (every edit kept unvalidated)."""
        return self.config.validation_seeds if settings(self.config).skill_rollback else []

    def evidence(self, state: SkillState, team: Team, batch: Batch, ctx: Context) -> list[SkillEvidence]:
        """Withheld-skill re-runs per episode, or (``skill_credit: episode``) the shared outcome."""
        cfg, p = settings(self.config), self.parts
        if cfg.skill_credit == "invocation":
            assert isinstance(team, SkillTeamSpec)
            return [gather_skill_evidence(ctx, team, t, max_reruns=cfg.skill_reruns) for t in batch.trajectories]
        return [shared_evidence(ctx, t, state.library, p.objective, batch.value) for t in batch.trajectories]

    def assess(self, state: SkillState, batch: Batch, evidence: Sequence[SkillEvidence], ctx: Context) -> list[Any]:
        """The skill critic per episode of the state's library (:class:`LibraryCritic`)."""
        return assess(ctx, LibraryCritic(self.critic, state.library), batch.trajectories, state.policies, evidence)

    def gradients(
        self,
        state: SkillState,
        batch: Batch,
        evidence: Sequence[SkillEvidence],
        reports: Sequence[Any],
        ctx: Context,
    ) -> SkillMemory:
        """The evidence aggregated across trajectories, skills, agents and topologies, decayed
        (:meth:`SkillMemory.update`; the state's memory is unchanged)."""
        utilities = [u for e in evidence for u in e.utilities]
        return state.memory.update(state.library, batch.trajectories, reports, utilities)

    def propose(self, state: SkillState, gradients: SkillMemory, ctx: Context) -> EditProposal:
        """Refine / induce / consolidate / prune edits from the memory (the skill writer)."""
        edits = propose_library_edits(ctx, state.library, gradients, self.writer, scoping=self.scoping, rules=self.rules)
        return EditProposal(edit_candidates(edits, self.limits), edits=edits)

    def commit(
        self,
        state: SkillState,
        gradients: SkillMemory,
        proposal: Proposal[SkillLibrary],
        decision: Acceptance[SkillLibrary],
        metrics: IterationMetrics,
        ctx: Context,
    ) -> tuple[SkillState, dict[str, Any]]:
        """Each edit's fate (:func:`~lang_pz.methods.maskills.steps.edit_events`, into the memory),
        the memory's file, then the next state."""
        assert isinstance(proposal, EditProposal)
        events = edit_events(ctx, proposal.edits, decision, tolerance=self.config.tolerance, memory=gradients)
        if ctx.log is not None:
            atomic_write(ctx.log.files.skill_memory, json.dumps(gradients.to_json(), indent=1))
        new, extra = super().commit(replace(state, memory=gradients), gradients, proposal, decision, metrics, ctx)
        return new, {**extra, "skill_events": events}
