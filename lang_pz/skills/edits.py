"""Edits of a skill library: each change, with the skills it replaced, so it can be undone.

A :class:`SkillEdit` is proposed by an operator (:mod:`lang_pz.skills.operators`) and applied
or rolled back by :class:`~lang_pz.skills.library.SkillLibrary`, which records each as a
:class:`LibraryEvent` in its history. Edits and events are JSON-able (a skill as its
``SKILL.md`` text and base64 resources: :func:`skill_to_json`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lang_pz.error import SkillLibraryError
from lang_pz.skills.skill import Skill, parse_skill_md, render_skill_md

__all__ = ["EDIT_OPS", "EditOp", "LibraryEvent", "SkillEdit", "same_edit", "skill_from_json", "skill_to_json"]

EditOp = Literal["refine", "induce", "consolidate", "prune"]
EDIT_OPS: tuple[str, ...] = ("refine", "induce", "consolidate", "prune")


@dataclass(frozen=True)
class SkillEdit:
    """One proposed change of a library (nothing is applied until
    :meth:`~lang_pz.skills.library.SkillLibrary.apply`).

    Attributes:
        op: ``refine`` (one skill replaced by an edited one of the same name), ``induce`` (one
            new skill), ``consolidate`` (several skills replaced by one merged skill) or
            ``prune`` (skills removed).
        scope: the scope it changes.
        before: the skills it removes, exactly as they are in the library it was proposed for.
        after: the skills it adds (their ``version`` is assigned by
            :meth:`~lang_pz.skills.library.SkillLibrary.apply`).
        reason: why, in words (shown in reports and the history).
        evidence: JSON-able facts it rests on (counts, measured utilities, critic verdicts).

    Raises:
        SkillLibraryError: the shape does not fit ``op`` (e.g. a refine that renames).
    """

    op: EditOp
    scope: str
    before: tuple[Skill, ...] = ()
    after: tuple[Skill, ...] = ()
    reason: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", tuple(self.before))
        object.__setattr__(self, "after", tuple(self.after))
        b, a = len(self.before), len(self.after)
        ok = {
            "refine": b == 1 and a == 1 and self.before[0].name == self.after[0].name,
            "induce": b == 0 and a == 1,
            "consolidate": b >= 2 and a == 1,
            "prune": b >= 1 and a == 0,
        }
        if self.op not in ok:
            raise SkillLibraryError(f"unknown edit op {self.op!r}; one of {', '.join(EDIT_OPS)}")
        if not ok[self.op]:
            raise SkillLibraryError(
                f"a {self.op} edit cannot remove {[s.name for s in self.before]} and add {[s.name for s in self.after]}"
            )

    def summary(self) -> str:
        """One line, e.g. ``refine team/check-units`` or ``consolidate solver/a + b -> c``."""
        if self.op == "consolidate":
            names = " + ".join(s.name for s in self.before) + f" -> {self.after[0].name}"
        else:
            names = ", ".join(s.name for s in (self.after or self.before))
        return f"{self.op} {self.scope}/{names}" + (f": {self.reason}" if self.reason else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "scope": self.scope,
            "before": [skill_to_json(s) for s in self.before],
            "after": [skill_to_json(s) for s in self.after],
            "reason": self.reason,
            "evidence": dict(self.evidence),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SkillEdit:
        return cls(
            op=data["op"],
            scope=data["scope"],
            before=tuple(skill_from_json(s) for s in data["before"]),
            after=tuple(skill_from_json(s) for s in data["after"]),
            reason=data.get("reason", ""),
            evidence=data.get("evidence", {}),
        )


def skill_to_json(skill: Skill) -> dict[str, Any]:
    """``{"version", "skill_md", "resources" (base64)}``: a skill as JSON (the history stores edits so)."""
    return {
        "version": skill.version,
        "skill_md": render_skill_md(skill),
        "resources": {p: base64.b64encode(b).decode() for p, b in skill.resources.items()},
    }


def skill_from_json(data: Mapping[str, Any]) -> Skill:
    """Inverse of :func:`skill_to_json`."""
    s = parse_skill_md(data["skill_md"], "<library history>")
    return s.evolve(
        version=int(data["version"]), resources={p: base64.b64decode(b) for p, b in data.get("resources", {}).items()}
    )


@dataclass(frozen=True)
class LibraryEvent:
    """One entry of a library's history.

    Attributes:
        version: the library version the event produced.
        kind: ``"edit"`` (an applied edit) or ``"rollback"`` (an edit undone).
        edit: the edit applied or undone, with the versions its skills got.
        note: why it was rolled back (empty for edits).
    """

    version: int
    kind: Literal["edit", "rollback"]
    edit: SkillEdit
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "kind": self.kind, "edit": self.edit.to_json(), "note": self.note}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LibraryEvent:
        return cls(int(data["version"]), data["kind"], SkillEdit.from_json(data["edit"]), data.get("note", ""))


def same_edit(a: SkillEdit, b: SkillEdit) -> bool:
    """``a`` is ``b`` as proposed or as applied (added skills' versions aside)."""
    return (
        (a.op, a.scope, a.before) == (b.op, b.scope, b.before)
        and len(a.after) == len(b.after)
        and all(x.same_content(y) for x, y in zip(a.after, b.after))
    )
