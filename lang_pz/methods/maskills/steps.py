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
                              candidate edits (writer failures logged and recorded)
:func:`edit_candidates`       labelled edits as candidates of :func:`lang_pz.training.accept`
:func:`edit_events`           each decided edit's fate: ``skill_edits.jsonl`` and the memory
===========================  ================================================================

Edits go through the generic :func:`lang_pz.training.accept`: the parameter is the library, each
candidate an edit that applies itself and, when rejected, is rolled back with the validation
values behind it (:func:`edit_candidates`, :meth:`SkillLibrary.rollback`), so the library that
step returns is the one kept and its history records every rollback.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lang_pz.error import LangPZError, SkillLibraryError
from lang_pz.methods.data import Proposal
from lang_pz.objectives import Objective
from lang_pz.runs import append_jsonl
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import SkillCritic, SkillCriticReport
from lang_pz.skills.evidence import SkillUtility, WithheldSkill, invoked_pairs, shared_utilities
from lang_pz.skills.library import Scoping, SkillEdit, SkillLibrary, SkillLimits
from lang_pz.skills.operators import ProposalRules, SkillWriter, propose_edits
from lang_pz.skills.team import SkillTeamSpec
from lang_pz.training.accept import Acceptance, Candidate, rejection_note
from lang_pz.training.parts import Context
from lang_pz.training.state import Failure
from lang_pz.training.steps import rerun
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
    ctx: Context, team: SkillTeamSpec, trajectory: Trajectory, *, max_reruns: int | None = None
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
    utilities = rerun(ctx, team, plans)
    for u in utilities:
        ctx.record("counterfactuals", {"episode": trajectory.episode, "kind": "withheld_skill", **u.as_dict()})
    return SkillEvidence(trajectory.episode, tuple(utilities))


def shared_evidence(
    ctx: Context, trajectory: Trajectory, library: SkillLibrary, objective: Objective, baseline: float | None
) -> SkillEvidence:
    """The ablation without per-invocation credit (:func:`~lang_pz.skills.evidence.shared_utilities`
    against ``baseline``, the current library's validation value, 0 without one); logged to
    ``counterfactuals.jsonl`` (``kind: shared_outcome``), not shown to the critic."""
    utilities = shared_utilities(trajectory, library, objective, baseline or 0.0)
    for u in utilities:
        ctx.record("counterfactuals", {"episode": trajectory.episode, "kind": "shared_outcome", **u.as_dict()})
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


def _record(ctx: Context, record: dict[str, Any]) -> None:
    if ctx.log is not None:
        append_jsonl(ctx.log.files.skill_edits, record)


@dataclass
class EditProposal(Proposal[SkillLibrary]):
    """The candidates of the propose stage and the edits behind them (label -> edit)."""

    edits: dict[str, SkillEdit] = field(default_factory=dict)


def propose_library_edits(
    ctx: Context,
    library: SkillLibrary,
    memory: SkillMemory,
    writer: SkillWriter,
    *,
    scoping: Scoping | None = None,
    rules: ProposalRules | None = None,
) -> dict[str, SkillEdit]:
    """Candidate edits from the aggregated evidence (:func:`~lang_pz.skills.operators.propose_edits`),
    each checked against the writer's limits on its own.

    Each edit is logged to ``skill_edits.jsonl`` (``event: proposed``, with the skills before and
    after); a planned edit whose writer failed, or that breaks the limits, to
    ``optimiser_errors.jsonl`` and ``ctx.failures`` (stage ``skill writer``).

    Returns:
        label -> edit, in proposal order.
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
        _record(ctx, {"event": "proposed", "label": label, "library_version": library.version, **e.to_json()})
    for plan, error in failed:
        ctx.fail(Failure("skill writer", plan, error), "optimiser_errors", {"edit": plan, "error": error})
    return edits


def edit_candidates(edits: Mapping[str, SkillEdit], limits: SkillLimits | None = None) -> list[Candidate[SkillLibrary]]:
    """Labelled edits as :class:`~lang_pz.training.accept.Candidate` objects over libraries: each
    applies its edit within ``limits`` (a :class:`~lang_pz.error.SkillLibraryError` when it does
    not apply on top of the edits kept before it, which the accept step rejects) and, rejected,
    rolls it back with the note of why (:meth:`SkillLibrary.rollback`: the history records it)."""
    return [
        Candidate(label, functools.partial(_applied, e, limits), functools.partial(_rolled_back, e))
        for label, e in edits.items()
    ]


def _applied(edit: SkillEdit, limits: SkillLimits | None, library: SkillLibrary) -> SkillLibrary:
    return library.apply(edit, limits)


def _rolled_back(edit: SkillEdit, library: SkillLibrary, note: str) -> SkillLibrary:
    return library.rollback(edit, note)


def edit_events(
    ctx: Context,
    edits: Mapping[str, SkillEdit],
    decision: Acceptance[SkillLibrary],
    *,
    tolerance: float = 0.0,
    memory: SkillMemory | None = None,
) -> list[dict[str, Any]]:
    """Each decided edit's fate, in validation order: ``kept``, or ``rolled_back`` to the previous
    version (the accept step rolled it back: :func:`edit_candidates`), with the library version
    after its group and both validation values, to ``skill_edits.jsonl`` and, with a ``memory``,
    :meth:`SkillMemory.commit` (a rolled-back direction is forgotten).

    Returns:
        The outcome records.
    """
    events = []
    for d, library in zip(decision.decisions, decision.after):
        cur, cand, kept = d["val_return"], d["candidate_val_return"], bool(d["accepted"])
        if not kept:
            note = rejection_note(cur, cand, tolerance)
        elif cand is None or cur is None:
            note = "kept unvalidated (skill_rollback is off, or no validation_seeds)"
        else:
            note = f"kept: validation {cand:.4g} >= {cur:.4g} - tolerance {tolerance:g}"
        for label in d["agents"]:
            rec = {
                "event": "kept" if kept else "rolled_back",
                "label": label,
                "library_version": library.version,
                "val_return": cur,
                "candidate_val_return": cand,
                "note": note,
            }
            events.append(rec)
            _record(ctx, rec)
            if memory is not None:
                memory.commit(edits[label], kept)
    return events
