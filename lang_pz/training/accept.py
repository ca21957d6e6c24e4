"""The accept step: which candidates are kept, on evidence the system computes.

The step is generic over what is optimised: a candidate is a label and how to apply it
(:class:`Candidate`), so policy texts and skill-library edits go through the same code.

A candidate is accepted only if the objective on held-out seeds does not fall by more than
``tolerance`` (:func:`accepts`), either as one team update (``joint``) or label by label, largest
counterfactual gain first, each on top of those already accepted (``per_agent``)
(:func:`acceptance_groups`, :func:`accept`): the validated update of MASkills (optimise, then
verify on held-out items, roll back a regression), and the trust region of an update (what a
step keeps is decided by a measure it did not see, never by the model's words). A versioned
parameter (a skill library) also records each rejection (:attr:`Candidate.rollback`).

A method's gates before the optimiser (LangMARL's evidence gate) and what it remembers of
accepted updates (its momentum) are its own (:mod:`lang_pz.methods.langmarl.steps`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from lang_pz.error import LangPZError
from lang_pz.runs import IterationLog

#: The parameter a method optimises (policy texts, a skill library, ...).
P = TypeVar("P")


#: Relative slack of :func:`accepts`: the same returns summed in another order differ in their last
#: bits (-26.598532494758956 against -26.598532494758942), which is not a regression.
FLOAT_SLACK = 1e-9


def accepts(current: float | None, candidate: float | None, tolerance: float = 0.0) -> bool:
    """Whether a candidate's validation value is good enough: ``candidate >= current - tolerance``
    (a negative tolerance requires a gain), up to rounding (:data:`FLOAT_SLACK` relative to
    ``max(1, |current|)``). ``None`` on either side (no validation seeds) accepts unchecked."""
    if candidate is None or current is None:
        return True
    return candidate >= current - tolerance - FLOAT_SLACK * max(1.0, abs(current))


def acceptance_groups(
    changed: Sequence[str], rule: Literal["joint", "per_agent"], gains: Mapping[str, float | None] | None = None
) -> list[list[str]]:
    """The order in which candidates are validated: one group of every changed agent (``joint``),
    or one agent at a time, largest counterfactual gain first (``per_agent``; ties and agents
    without evidence keep their order).

    Raises:
        ValueError: an unknown rule.
    """
    if rule == "joint":
        return [list(changed)] if changed else []
    if rule == "per_agent":
        gains = gains or {}
        return [[a] for a in sorted(changed, key=lambda a: -(gains.get(a) or 0.0))]
    raise ValueError(f"acceptance must be 'joint' or 'per_agent', got {rule!r}")


@dataclass(frozen=True)
class Candidate(Generic[P]):
    """One proposed change of a method's parameter: a label and how to apply it.

    Attributes:
        label: what ``acceptance.jsonl`` and the metrics call it (an agent for a policy text,
            e.g. ``piston_1``; an edit for a skill library, e.g. ``refine team/push-up``).
        apply: ``parameter -> parameter`` with the change made (it must not modify its argument).
            It raises :class:`~lang_pz.error.LangPZError` when the change does not apply on top
            of the candidates kept before it; :func:`accept` then rejects it.
        rollback: ``(parameter, note) -> parameter`` with this change, applied last, undone and
            the rejection recorded (``note``: :func:`rejection_note`), for a parameter that keeps
            its history (a skill library: :meth:`~lang_pz.skills.SkillLibrary.rollback`);
            ``None``: a rejected change leaves no trace in the parameter.
    """

    label: str
    apply: Callable[[P], P]
    rollback: Callable[[P, str], P] | None = None


def policy_candidates(texts: Mapping[str, str]) -> list[Candidate[dict[str, str]]]:
    """agent -> candidate text as :class:`Candidate` objects over policy dicts (label: the agent)."""
    return [Candidate(agent, functools.partial(_with_policy, agent, text)) for agent, text in texts.items()]


def _with_policy(agent: str, text: str, policies: dict[str, str]) -> dict[str, str]:
    return {**policies, agent: text}


@dataclass
class Acceptance(Generic[P]):
    """What the accept step decided.

    Attributes:
        parameter: the parameter after the step (the accepted candidates applied, in order).
        value: its validation value (``None`` without validation seeds).
        accepted_labels: labels of the accepted candidates, in validation order.
        decisions: one record per validated group (``agents``: its labels, ``val_return``,
            ``candidate_val_return``, ``accepted``), as in ``acceptance.jsonl``.
        candidate_value: the last validated candidate's value, or the accepted value if any
            group was accepted (what the learning curve plots).
        after: the parameter after each decision, in order (a rejected group's is the one
            before it, with the rejection recorded if its candidates have a ``rollback``).
    """

    parameter: P
    value: float | None
    accepted_labels: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    candidate_value: float | None = None
    after: list[P] = field(default_factory=list)

    @property
    def accepted(self) -> bool | None:
        """``True`` if some candidate was accepted, ``False`` if all were rejected, ``None`` if
        there was no candidate."""
        return None if not self.decisions else bool(self.accepted_labels)


def accept(
    current: P,
    candidates: Sequence[Candidate[P]],
    value: float | None,
    validate: Callable[[P, str], float | None],
    *,
    groups: Sequence[Sequence[str]],
    tolerance: float = 0.0,
    log: IterationLog | None = None,
) -> Acceptance[P]:
    """Validate candidate groups in turn; keep each group that does not lower the validation
    value by more than ``tolerance`` (:func:`accepts`), on top of those already kept.

    Args:
        current: the current parameter (policy texts, a skill library, ...).
        candidates: the proposed changes (only those named in ``groups`` are used).
        value: the current parameter's validation value (``None``: accept unchecked).
        validate: ``(parameter, label) -> value`` (e.g. :func:`lang_pz.training.validation.validate`
            on the held-out seeds); called once per group whose candidates apply.
        groups: candidate labels, from :func:`acceptance_groups`.
        tolerance: see :func:`accepts`.
        log: each decision goes to ``acceptance.jsonl``.

    Returns:
        The :class:`Acceptance`. A group whose candidates do not apply together on top of those
        kept (``apply`` raised :class:`~lang_pz.error.LangPZError`) is rejected with value ``-inf``;
        a rejected group whose candidates all have a ``rollback`` is applied and rolled back, last
        first, so the parameter records it.

    Raises:
        LangPZError: a group names a label without a candidate.
    """
    by_label = {c.label: c for c in candidates}
    missing = sorted({a for g in groups for a in g} - set(by_label))
    if missing:
        raise LangPZError(f"acceptance groups name {missing}, which have no candidate (candidates: {sorted(by_label)})")
    result: Acceptance[P] = Acceptance(parameter=current, value=value)
    for group in groups:
        trial: P | None
        cand: float | None
        try:
            trial = functools.reduce(lambda p, label: by_label[label].apply(p), group, result.parameter)
        except LangPZError:
            trial, cand = None, float("-inf")
        else:
            cand = validate(trial, "candidate " + "+".join(group))
        ok = trial is not None and accepts(result.value, cand, tolerance)
        decision = {"agents": list(group), "val_return": result.value, "candidate_val_return": cand, "accepted": ok}
        result.decisions.append(decision)
        if log is not None:
            log.log("acceptance", decision)
        result.candidate_value = cand
        if ok and trial is not None:
            result.parameter, result.value = trial, cand
            result.accepted_labels += list(group)
        elif trial is not None:
            undo = [u for label in reversed(group) if (u := by_label[label].rollback) is not None]
            if len(undo) == len(group):  # a parameter that keeps its history records the rejection
                note = rejection_note(result.value, cand, tolerance)
                result.parameter = functools.reduce(lambda p, u: u(p, note), undo, trial)
        result.after.append(result.parameter)
    if result.accepted_labels:
        result.candidate_value = result.value
    return result


def rejection_note(current: float | None, candidate: float | None, tolerance: float) -> str:
    """Why a candidate was rejected, in words (recorded by a :attr:`Candidate.rollback`)."""
    cand, cur = (f"{x:.4g}" if x is not None else "none" for x in (candidate, current))
    return f"rolled back: validation {cand} < {cur} - tolerance {tolerance:g}"
