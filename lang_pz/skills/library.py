"""A skill library: skills by scope, versioned, changed only by explicit, invertible edits.

Scopes say who sees a skill: :data:`TEAM` (every agent), a role (e.g. ``solver``) or one
agent (e.g. ``piston_2``). An agent sees its own scope, its role's and the team's; a skill of
a narrower scope hides a same-named one of a wider scope (:meth:`SkillLibrary.visible`).
:class:`Scoping` maps agents to roles and says where new skills go (``mode``).

The library is immutable. Every change is a :class:`~lang_pz.skills.edits.SkillEdit` (the skills
it removes, as they are in the library, and the skills it adds; :mod:`lang_pz.skills.edits`) proposed by an operator
(:mod:`lang_pz.skills.operators`); :meth:`SkillLibrary.apply` returns a *new* library with the
library version + 1 and each changed skill's version + 1, and records the edit in ``history``.
Because an edit carries the skills it replaced, it can be undone: :meth:`SkillLibrary.rollback`
restores the previous version (content, skill versions, library version) and records the
rollback. This is the library side of MASkills' verify stage (Yao et al., EMNLP 2026
Findings: an edit is kept only if validation does not regress); the validation itself is the
training loop's ``accept`` step. Version numbers of a rolled-back candidate are reused by the
next accepted edit; ``history`` keeps both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lang_pz.error import SkillLibraryError
from lang_pz.skills.edits import (
    EDIT_OPS,
    EditOp,
    LibraryEvent,
    SkillEdit,
    same_edit,
    skill_from_json,
    skill_to_json,
)
from lang_pz.skills.skill import DESCRIPTION_MAX_CHARS, Skill

__all__ = [
    "EDIT_OPS",
    "TEAM",
    "EditOp",
    "LibraryEvent",
    "ScopeMode",
    "Scoping",
    "SkillEdit",
    "SkillLibrary",
    "SkillLimits",
    "library_from_json",
    "library_to_json",
    "skill_from_json",
    "skill_to_json",
]

#: The scope every agent sees.
TEAM = "team"
ScopeMode = Literal["team", "role", "agent"]


@dataclass(frozen=True)
class SkillLimits:
    """Bounds on a library, enforced by :meth:`SkillLibrary.apply` and by the operators.

    Attributes:
        max_skills: most skills in the whole library.
        max_skills_per_scope: most skills in one scope.
        max_description_chars: longest description (<= 1024, the format's limit).
        max_body_chars: longest body (the format recommends < 5,000 tokens; a 135M model's
            context is 4,096 tokens, so the default is short).

    Raises:
        ValueError: a bound < 1, or a description bound above the format's 1024.
    """

    max_skills: int = 24
    max_skills_per_scope: int = 8
    max_description_chars: int = 200
    max_body_chars: int = 1200

    def __post_init__(self) -> None:
        for k in ("max_skills", "max_skills_per_scope", "max_description_chars", "max_body_chars"):
            if getattr(self, k) < 1:
                raise ValueError(f"SkillLimits.{k} must be >= 1, got {getattr(self, k)}")
        if self.max_description_chars > DESCRIPTION_MAX_CHARS:
            raise ValueError(
                f"max_description_chars must be <= {DESCRIPTION_MAX_CHARS} (the Agent Skills "
                f"limit), got {self.max_description_chars}"
            )

    def skill_problems(self, skill: Skill) -> list[str]:
        """The bounds one skill breaks (description and body length)."""
        out = []
        if len(skill.description) > self.max_description_chars:
            out.append(
                f"{skill.name}: description has {len(skill.description)} characters; at most {self.max_description_chars}"
            )
        if len(skill.body) > self.max_body_chars:
            out.append(f"{skill.name}: body has {len(skill.body)} characters; at most {self.max_body_chars}")
        return out

    def edit_problems(self, edit: SkillEdit, result: SkillLibrary) -> list[str]:
        """The bounds ``edit`` breaks in ``result``: its added skills' lengths, and the sizes if it
        adds more skills than it removes (so a library already over a bound can still shrink)."""
        out = [p for s in edit.after for p in self.skill_problems(s)]
        if len(edit.after) > len(edit.before):
            if len(result) > self.max_skills:
                out.append(f"the library would have {len(result)} skills; at most {self.max_skills}")
            n = len(result.scopes.get(edit.scope, {}))
            if n > self.max_skills_per_scope:
                out.append(f"scope {edit.scope!r} would have {n} skills; at most {self.max_skills_per_scope}")
        return out

    def problems(self, library: SkillLibrary) -> list[str]:
        """Every bound ``library`` breaks, as messages naming the skill or scope (empty: none)."""
        out = []
        if len(library) > self.max_skills:
            out.append(f"the library has {len(library)} skills; at most {self.max_skills}")
        for scope, skills in library.scopes.items():
            if len(skills) > self.max_skills_per_scope:
                out.append(f"scope {scope!r} has {len(skills)} skills; at most {self.max_skills_per_scope}")
            out += [f"{scope}/{p}" for s in skills.values() for p in self.skill_problems(s)]
        return out


@dataclass(frozen=True)
class Scoping:
    """Who sees which scope, and where new skills go.

    Attributes:
        mode: ``"team"`` (new skills are shared by the team), ``"role"`` (they go to the
            agent's role) or ``"agent"`` (to the agent itself).
        roles: agent -> role (e.g. every piston -> ``"piston"``); an agent without one is its
            own role (the task envs' agents are roles already: ``solver``, ``verifier``).
    """

    mode: ScopeMode = "team"
    roles: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in ("team", "role", "agent"):
            raise ValueError(f"Scoping.mode must be 'team', 'role' or 'agent', got {self.mode!r}")

    def role(self, agent: str) -> str:
        return self.roles.get(agent, agent)

    def scopes(self, agent: str) -> tuple[str, ...]:
        """The scopes ``agent`` sees, narrowest first: itself, its role, the team."""
        return tuple(dict.fromkeys((agent, self.role(agent), TEAM)))

    def unseen(self, library: SkillLibrary, agents: Iterable[str]) -> list[str]:
        """The scopes of ``library`` that none of ``agents`` sees (their skills are never offered)."""
        seen = {sc for a in agents for sc in self.scopes(a)}
        return sorted(set(library.scopes) - seen)

    def home(self, agent: str) -> str:
        """The scope a new skill for ``agent`` goes to (per ``mode``)."""
        return {"team": TEAM, "role": self.role(agent), "agent": agent}[self.mode]


@dataclass(frozen=True)
class SkillLibrary:
    """Skills by scope, with a library version and the history of edits.

    Attributes:
        scopes: scope -> skill name -> :class:`Skill` (empty scopes are dropped).
        version: the library version (0 for a hand-written library never edited; + 1 per
            applied edit).
        history: applied edits and rollbacks, oldest first.

    Build one with :func:`lang_pz.skills.files.read_library` (from a folder) or directly,
    e.g. ``SkillLibrary({"team": {s.name: s}})``.

    Raises:
        SkillLibraryError: a skill stored under another name than its own.
    """

    scopes: Mapping[str, Mapping[str, Skill]] = field(default_factory=dict)
    version: int = 0
    history: tuple[LibraryEvent, ...] = ()

    def __post_init__(self) -> None:
        clean = {}
        for scope, skills in sorted(self.scopes.items()):
            if not isinstance(scope, str) or not scope.strip() or "/" in scope or scope.startswith("."):
                raise SkillLibraryError(f"scope {scope!r} must be a non-empty name without '/' or a leading '.'")
            wrong = [(k, s.name) for k, s in skills.items() if k != s.name]
            if wrong:
                raise SkillLibraryError(f"scope {scope!r} stores skill(s) under other names: {wrong}")
            if skills:
                clean[scope] = dict(sorted(skills.items()))
        object.__setattr__(self, "scopes", clean)
        object.__setattr__(self, "history", tuple(self.history))

    @classmethod
    def of(cls, skills: Sequence[Skill], scope: str = TEAM) -> SkillLibrary:
        """A library holding ``skills`` in one scope (default: shared by the team)."""
        return cls({scope: {s.name: s for s in skills}})

    def __len__(self) -> int:
        return sum(len(s) for s in self.scopes.values())

    def __iter__(self) -> Iterator[tuple[str, Skill]]:
        """``(scope, skill)`` pairs, scopes and names in sorted order."""
        for scope, skills in self.scopes.items():
            for skill in skills.values():
                yield scope, skill

    def get(self, scope: str, name: str) -> Skill:
        """The skill ``name`` of ``scope``.

        Raises:
            SkillLibraryError: no such skill (the message lists the scope's skills).
        """
        try:
            return self.scopes[scope][name]
        except KeyError:
            have = sorted(self.scopes.get(scope, {}))
            raise SkillLibraryError(
                f"no skill {name!r} in scope {scope!r} (it has: {have or 'nothing'}; scopes: {sorted(self.scopes)})"
            ) from None

    def visible(self, agent: str, scoping: Scoping | None = None) -> dict[str, tuple[str, Skill]]:
        """The skills ``agent`` sees: name -> ``(scope, skill)``, narrowest scope first wins."""
        out: dict[str, tuple[str, Skill]] = {}
        for scope in (scoping or Scoping()).scopes(agent):
            for name, skill in self.scopes.get(scope, {}).items():
                out.setdefault(name, (scope, skill))
        return dict(sorted(out.items()))

    # -- edits -----------------------------------------------------------------------------

    def apply(self, edit: SkillEdit, limits: SkillLimits | None = None) -> SkillLibrary:
        """The library after ``edit`` (``self`` is unchanged): version + 1, changed skills' versions + 1.

        An added skill that replaces a removed one of the same name gets that one's version
        + 1; a new name gets version 1.

        Raises:
            SkillLibraryError: a removed skill is not in the library as the edit saw it (a
                stale edit), an added name already exists in the scope, or the edit breaks
                ``limits`` (default :class:`SkillLimits`; :meth:`SkillLimits.edit_problems`).
        """
        current = dict(self.scopes.get(edit.scope, {}))
        for s in edit.before:
            have = current.get(s.name)
            if have is None or have != s:
                state = "is not there" if have is None else f"is at version {have.version} with other content"
                raise SkillLibraryError(
                    f"stale edit ({edit.summary()}): {edit.scope}/{s.name} {state}; propose the "
                    f"edit again against library version {self.version}"
                )
        removed = {s.name: s for s in edit.before}
        for s in edit.before:
            del current[s.name]
        after = []
        for s in edit.after:
            if s.name in current:
                raise SkillLibraryError(f"{edit.summary()}: scope {edit.scope!r} already has a skill {s.name!r}")
            after.append(s.evolve(version=removed[s.name].version + 1 if s.name in removed else 1))
            current[s.name] = after[-1]
        applied = SkillEdit(edit.op, edit.scope, edit.before, tuple(after), edit.reason, edit.evidence)
        new = SkillLibrary(
            {**self.scopes, edit.scope: current},
            self.version + 1,
            self.history + (LibraryEvent(self.version + 1, "edit", applied),),
        )
        problems = (limits or SkillLimits()).edit_problems(edit, new)
        if problems:
            raise SkillLibraryError(f"{edit.summary()} would break the library limits: {'; '.join(problems)}")
        return new

    def last_edit(self) -> SkillEdit | None:
        """The edit that made this version, not undone since (``None``: none, e.g. version 0 of a
        hand-written library). Rollbacks undo edits last-in first-out."""
        stack: list[SkillEdit] = []
        for event in self.history:
            if event.kind == "edit":
                stack.append(event.edit)
            elif stack:
                stack.pop()
        return stack[-1] if stack else None

    def rollback(self, edit: SkillEdit | None = None, note: str = "") -> SkillLibrary:
        """Undo the edit that made this version: the previous version's skills, skill versions and
        library version, with the rollback recorded in ``history``.

        Args:
            edit: the rejected edit, as proposed or as applied (``None``: the last applied one).
            note: why (e.g. ``"validation 0.40 < 0.55 - 0.05"``).

        Raises:
            SkillLibraryError: this version was not made by an edit (nothing to undo), or
                ``edit`` is not the edit that made it (undo the later edits first).
        """
        last = self.last_edit()
        if last is None:
            raise SkillLibraryError(f"library version {self.version} was not made by an edit; nothing to roll back")
        if edit is not None and not same_edit(edit, last):
            raise SkillLibraryError(
                f"cannot roll back {edit.summary()!r}: library version {self.version} was made "
                f"by {last.summary()!r}; roll back the later edits first"
            )
        current = {k: v for k, v in self.scopes.get(last.scope, {}).items() if k not in {s.name for s in last.after}}
        current.update({s.name: s for s in last.before})
        return SkillLibrary(
            {**self.scopes, last.scope: current},
            self.version - 1,
            self.history + (LibraryEvent(self.version - 1, "rollback", last, note),),
        )

    def to_json(self) -> dict[str, Any]:
        """Versions and history as JSON (the skills themselves are files: :mod:`lang_pz.skills.files`)."""
        return {
            "version": self.version,
            "skills": {f"{sc}/{s.name}": {"version": s.version, "digest": s.digest()} for sc, s in self},
            "history": [e.to_json() for e in self.history],
        }


def library_to_json(library: SkillLibrary) -> dict[str, Any]:
    """The whole library as JSON, skills' files included (a run's ``done.json`` keeps it for resume);
    inverse of :func:`library_from_json`."""
    return {
        "version": library.version,
        "scopes": {sc: [skill_to_json(s) for s in skills.values()] for sc, skills in library.scopes.items()},
        "history": [e.to_json() for e in library.history],
    }


def library_from_json(data: Mapping[str, Any]) -> SkillLibrary:
    """Inverse of :func:`library_to_json`."""
    scopes = {sc: {(s := skill_from_json(d)).name: s for d in skills} for sc, skills in data["scopes"].items()}
    return SkillLibrary(scopes, int(data["version"]), tuple(LibraryEvent.from_json(e) for e in data["history"]))
