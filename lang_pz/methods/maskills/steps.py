"""The steps of a MASkills iteration of its own; every other step is :mod:`lang_pz.training`'s.

===========================  ================================================================
:func:`gather_skill_evidence` withheld-skill re-runs of one episode (through the shared
                              runner :func:`lang_pz.training.steps.rerun`) -> utility per skill
:func:`shared_evidence`       the ablation without per-invocation credit: every skill shown
                              shares the episode's outcome (no re-run)
:class:`LibraryCritic`        the :class:`~lang_pz.skills.critic.SkillCritic` behind the
                              ``Critic`` interface, so :func:`lang_pz.training.assess` runs it
                              (failures logged to ``critic_errors.jsonl``, never defaulted)
:func:`propose_library_edits` the four operators on the aggregated evidence -> labelled
                              candidate edits (writer failures logged and counted)
:func:`edit_candidates`       labelled edits as candidates of :func:`lang_pz.training.accept`
:func:`library_validator`     ``(library, label) -> value``: its ``validate`` argument
:func:`settle`                each validated edit kept, or applied and rolled back with a note
===========================  ================================================================

Edits go through the generic :func:`lang_pz.training.accept`: the parameter is the library,
each candidate an edit that applies itself (:func:`edit_candidates`), and its ``validate`` plays
a library on the held-out seeds (:func:`library_validator`). A rejected edit is then applied and
rolled back (:func:`settle`, :meth:`SkillLibrary.rollback`), so the library's history records
the rollback and the validation values behind it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lang_pz.error import LangPZError, SkillLibraryError
from lang_pz.executor import EnvPool, Executor
from lang_pz.objectives import Objective
from lang_pz.runs import IterationLog, append_jsonl
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import SkillCritic, SkillCriticReport
from lang_pz.skills.evidence import SkillUtility, WithheldSkill, invoked_pairs, shared_utilities
from lang_pz.skills.library import Scoping, SkillEdit, SkillLibrary, SkillLimits
from lang_pz.skills.operators import ProposalRules, SkillWriter, propose_edits
from lang_pz.skills.team import SkillTeamSpec
from lang_pz.training.accept import Acceptance, Candidate
from lang_pz.training.steps import rerun, validate
from lang_pz.trajectory import Trajectory


@dataclass(frozen=True)
class SkillEvidence:
    """Computed evidence about one episode's skills.

    Attributes:
        episode: the episode.
        utilities: one :class:`SkillUtility` per measured ``(agent, skill)``.
        rerun: whether they were measured by re-runs (the ablation's shared outcome is not a
            re-run, so the critic is not shown it).
    """

    episode: int
    utilities: tuple[SkillUtility, ...] = ()
    rerun: bool = True

    def shown(self) -> list[SkillUtility]:
        """What :func:`lang_pz.training.assess` hands the critic with the episode
        (:class:`~lang_pz.critics.base.EpisodeEvidence`): the re-runs' utilities."""
        return list(self.utilities) if self.rerun else []


def gather_skill_evidence(
    envs: EnvPool | Any,
    team: SkillTeamSpec,
    trajectory: Trajectory,
    objective: Objective,
    *,
    max_reruns: int | None = None,
    log: IterationLog | None = None,
    executor: Executor | None = None,
) -> SkillEvidence:
    """Re-run ``trajectory``'s seed once per invoked ``(agent, skill)`` with the skill withheld
    from that agent (:class:`~lang_pz.skills.evidence.WithheldSkill`), most-invoked first, at most
    ``max_reruns``, through the shared re-run runner (:func:`lang_pz.training.steps.rerun`).
    Each utility is logged to ``counterfactuals.jsonl`` (``kind: withheld_skill``).

    Raises:
        LangPZError: the trajectory has no seed (a re-run must replay the same seed).
    """
    if trajectory.seed is None:
        raise LangPZError(f"episode {trajectory.episode} has no seed; a withheld-skill re-run needs the same seed")
    plans = [(trajectory, WithheldSkill(a, s)) for a, s in invoked_pairs(trajectory, max_reruns)]
    utilities = rerun(envs, team, plans, objective=objective, executor=executor)
    if log is not None:
        for u in utilities:
            log.log("counterfactuals", {"episode": trajectory.episode, "kind": "withheld_skill", **u.as_dict()})
    return SkillEvidence(trajectory.episode, tuple(utilities))


def shared_evidence(
    trajectory: Trajectory,
    library: SkillLibrary,
    objective: Objective,
    baseline: float | None,
    *,
    log: IterationLog | None = None,
) -> SkillEvidence:
    """The ablation without per-invocation credit (:func:`~lang_pz.skills.evidence.shared_utilities`
    against ``baseline``, the current library's validation value, 0 without one); logged to
    ``counterfactuals.jsonl`` (``kind: shared_outcome``), not shown to the critic."""
    utilities = shared_utilities(trajectory, library, objective, baseline or 0.0)
    if log is not None:
        for u in utilities:
            log.log("counterfactuals", {"episode": trajectory.episode, "kind": "shared_outcome", **u.as_dict()})
    return SkillEvidence(trajectory.episode, tuple(utilities), rerun=False)


class LibraryCritic:
    """A :class:`~lang_pz.skills.critic.SkillCritic` judging episodes of ``library``: a
    :class:`lang_pz.critics.base.Critic` over skill utilities and skill reports
    (``counterfactuals``: the episode's :meth:`SkillEvidence.shown`; ``policies``: unused)."""

    mode = "skills"

    def __init__(self, critic: SkillCritic, library: SkillLibrary) -> None:
        self.critic, self.library = critic, library

    def assess(
        self, trajectory: Trajectory, policies: Mapping[str, str] | None = None, counterfactuals: Sequence[SkillUtility] = ()
    ) -> SkillCriticReport:
        """See :meth:`SkillCritic.assess`."""
        return self.critic.assess(trajectory, self.library, list(counterfactuals))


def edit_label(edit: SkillEdit) -> str:
    """A short name of an edit, e.g. ``refine team/push-up`` (the reason left out)."""
    return edit.summary().split(": ", 1)[0]


def _record(log: IterationLog | None, record: dict[str, Any]) -> None:
    if log is not None:
        append_jsonl(log.files.skill_edits, record)


def propose_library_edits(
    library: SkillLibrary,
    memory: SkillMemory,
    writer: SkillWriter,
    *,
    scoping: Scoping | None = None,
    rules: ProposalRules | None = None,
    log: IterationLog | None = None,
) -> tuple[dict[str, SkillEdit], int]:
    """Candidate edits from the aggregated evidence (:func:`~lang_pz.skills.operators.propose_edits`),
    each checked against the writer's limits on its own.

    Each edit is logged to ``skill_edits.jsonl`` (``event: proposed``, with the skills before and
    after); a planned edit whose writer failed, or that breaks the limits, to
    ``optimiser_errors.jsonl`` and counted.

    Returns:
        ``(label -> edit, in proposal order; number of failures)``.
    """
    props = propose_edits(library, memory, writer, scoping=scoping, rules=rules)
    failed = list(props.failed)
    edits: dict[str, SkillEdit] = {}
    for e in props.edits:
        try:
            library.apply(e, writer.limits)
        except SkillLibraryError as exc:
            failed.append((edit_label(e), str(exc)))
            continue
        label = edit_label(e)
        while label in edits:
            label += "'"
        edits[label] = e
        _record(log, {"event": "proposed", "label": label, "library_version": library.version, **e.to_json()})
    if log is not None:
        for plan, error in failed:
            log.log("optimiser_errors", {"edit": plan, "error": error})
    return edits, len(failed)


def edit_candidates(edits: Mapping[str, SkillEdit], limits: SkillLimits | None = None) -> list[Candidate[SkillLibrary]]:
    """Labelled edits as :class:`~lang_pz.training.accept.Candidate` objects over libraries: each
    applies its edit within ``limits`` (a :class:`~lang_pz.error.SkillLibraryError` when it does
    not apply on top of the edits kept before it, which the accept step rejects)."""
    return [Candidate(label, functools.partial(_applied, e, limits)) for label, e in edits.items()]


def _applied(edit: SkillEdit, limits: SkillLimits | None, library: SkillLibrary) -> SkillLibrary:
    return library.apply(edit, limits)


def library_validator(
    envs: EnvPool | Any,
    team: SkillTeamSpec,
    seeds: Sequence[int],
    *,
    objective: Objective | None = None,
    enabled: bool = True,
    log: IterationLog | None = None,
    executor: Executor | None = None,
) -> Callable[[SkillLibrary, str], float | None]:
    """The ``validate`` of :func:`lang_pz.training.accept` for library edits: ``(library, label)``
    -> the objective of ``team`` on ``library`` on the held-out ``seeds``
    (:func:`lang_pz.training.validate`).

    With ``enabled=False`` (the ablation without rollback) nothing is played and ``None`` is
    returned, which :func:`~lang_pz.training.accept` accepts unchecked.
    """

    def val(library: SkillLibrary, label: str) -> float | None:
        if not enabled:
            return None
        return validate(
            envs, team.with_library(library), seeds, objective=objective, log=log, label=label, executor=executor
        )

    return val


def settle(
    library: SkillLibrary,
    edits: Mapping[str, SkillEdit],
    decision: Acceptance,
    *,
    limits: SkillLimits | None = None,
    tolerance: float = 0.0,
    memory: SkillMemory | None = None,
    log: IterationLog | None = None,
) -> tuple[SkillLibrary, list[dict[str, Any]]]:
    """The library after the accept step: each validated group of edits applied in order; a
    rejected group is applied and then rolled back, last edit first, to the previous version,
    with a note of the validation values (:meth:`SkillLibrary.rollback`; the history records it).

    Each outcome goes to ``skill_edits.jsonl`` (``event: kept`` or ``rolled_back``, the library
    version after it, both validation values) and, with a ``memory``, to
    :meth:`SkillMemory.commit` (a rolled-back direction is forgotten).

    Returns:
        ``(the library, the outcome records)``.
    """
    lib, events = library, []
    for d in decision.decisions:
        group, cur, cand = list(d["agents"]), d["val_return"], d["candidate_val_return"]
        for label in group:
            lib = lib.apply(edits[label], limits)
        if d["accepted"]:
            note = (
                "kept unvalidated (skill_rollback is off, or no validation_seeds)"
                if cand is None or cur is None
                else f"kept: validation {cand:.4g} >= {cur:.4g} - tolerance {tolerance:g}"
            )
        else:
            note = f"rolled back: validation {cand:.4g} < {cur:.4g} - tolerance {tolerance:g}"
            for label in reversed(group):
                lib = lib.rollback(edits[label], note)
        for label in group:
            rec = {
                "event": "kept" if d["accepted"] else "rolled_back",
                "label": label,
                "library_version": lib.version,
                "val_return": cur,
                "candidate_val_return": cand,
                "note": note,
            }
            events.append(rec)
            _record(log, rec)
            if memory is not None:
                memory.commit(edits[label], bool(d["accepted"]))
    return lib, events
