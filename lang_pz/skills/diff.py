"""What changed between two skill libraries: added, removed and changed skills, with unified diffs.

``lang-pz skills diff A B`` prints :meth:`LibraryDiff.render` of two library folders (e.g. two
iterations' snapshots in a run folder).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from lang_pz.skills.library import SkillLibrary
from lang_pz.skills.skill import Skill


@dataclass(frozen=True)
class SkillChange:
    """One skill present in both libraries with different content.

    Attributes:
        scope, name: which skill.
        old_version, new_version: its versions in the two libraries.
        description_diff: unified diff of the descriptions (empty if equal).
        body_diff: unified diff of the bodies (empty if equal).
        fields: other front matter fields that differ (``license``, ``metadata`` ...).
        resources: resource paths added, removed or changed.
    """

    scope: str
    name: str
    old_version: int
    new_version: int
    description_diff: str = ""
    body_diff: str = ""
    fields: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()


@dataclass(frozen=True)
class LibraryDiff:
    """The difference from library ``a`` to library ``b``.

    Attributes:
        old_version, new_version: the two library versions.
        added: ``(scope, skill)`` in ``b`` only.
        removed: ``(scope, skill)`` in ``a`` only.
        changed: skills in both with different content.
    """

    old_version: int
    new_version: int
    added: tuple[tuple[str, Skill], ...] = ()
    removed: tuple[tuple[str, Skill], ...] = ()
    changed: tuple[SkillChange, ...] = field(default_factory=tuple)

    @property
    def empty(self) -> bool:
        """Whether the libraries hold the same skills with the same content."""
        return not (self.added or self.removed or self.changed)

    def render(self, a_label: str = "a", b_label: str = "b") -> str:
        """Human-readable text: a summary line, then each added / removed / changed skill."""
        lines = [
            f"library {a_label} (version {self.old_version}) -> {b_label} (version {self.new_version}): "
            f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed"
        ]
        for scope, s in self.added:
            lines += [
                f"+ added {scope}/{s.name} (version {s.version}): {s.description}",
                *(f"+   {line}" for line in s.body.splitlines()),
            ]
        for scope, s in self.removed:
            lines.append(f"- removed {scope}/{s.name} (version {s.version}): {s.description}")
        for c in self.changed:
            lines.append(f"~ changed {c.scope}/{c.name} (version {c.old_version} -> {c.new_version})")
            if c.fields:
                lines.append(f"  front matter fields changed: {', '.join(c.fields)}")
            if c.resources:
                lines.append(f"  resources changed: {', '.join(c.resources)}")
            for diff in (c.description_diff, c.body_diff):
                lines += [f"  {line}" for line in diff.splitlines()]
        return "\n".join(lines) + "\n"


def _udiff(old: str, new: str, label: str) -> str:
    if old == new:
        return ""
    return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{label}", f"b/{label}", lineterm="", n=2))


def diff_skills(scope: str, a: Skill, b: Skill) -> SkillChange | None:
    """The change from ``a`` to ``b`` (same skill), or ``None`` if their content is equal."""
    if a.same_content(b):
        return None
    fa, fb = a.front_matter(), b.front_matter()
    fields = tuple(k for k in dict.fromkeys([*fa, *fb]) if k not in ("name", "description") and fa.get(k) != fb.get(k))
    res = tuple(p for p in sorted(set(a.resources) | set(b.resources)) if a.resources.get(p) != b.resources.get(p))
    where = f"{scope}/{a.name}"
    return SkillChange(
        scope,
        a.name,
        a.version,
        b.version,
        _udiff(a.description, b.description, f"{where} description"),
        _udiff(a.body, b.body, f"{where}/SKILL.md body"),
        fields,
        res,
    )


def diff_libraries(a: SkillLibrary, b: SkillLibrary) -> LibraryDiff:
    """Compare two libraries skill by skill (a skill is identified by its scope and name).

    Returns:
        The :class:`LibraryDiff` from ``a`` to ``b``.
    """
    ka = {(sc, s.name): s for sc, s in a}
    kb = {(sc, s.name): s for sc, s in b}
    changed = [c for k in sorted(ka.keys() & kb.keys()) if (c := diff_skills(k[0], ka[k], kb[k])) is not None]
    return LibraryDiff(
        a.version,
        b.version,
        added=tuple((k[0], kb[k]) for k in sorted(kb.keys() - ka.keys())),
        removed=tuple((k[0], ka[k]) for k in sorted(ka.keys() - kb.keys())),
        changed=tuple(changed),
    )
