"""Skills and skill libraries on disk: read, validate, and write atomically.

A library folder (hand-written, or a snapshot a run keeps per iteration)::

    LIB/
      library.json               # written by lang_pz: versions, digests, history (optional)
      show-your-work/SKILL.md    # a folder with SKILL.md at the top: a skill the team shares
      solver/                    # a folder without SKILL.md: a scope (a role or an agent id)
        check-units/SKILL.md
      team/                      # the team's scope may also be spelled out
        ...

Hidden entries (``.git``) and loose files at the top (``README.md``) are ignored. A folder at
the top that holds neither ``SKILL.md`` nor skill folders is an error (a misspelt ``skill.md``
is the usual cause). Versions come from ``library.json``; a hand-written library has none, so
its skills are at version 1 and the library at version 0. A skill whose files no longer match
the digest in ``library.json`` (edited by hand) is read at its recorded version + 1.

Writing never leaves anything half-written: everything goes to a temporary sibling folder that
is renamed into place at the end (a failure removes it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lang_pz.error import SkillFormatError, SkillLibraryError
from lang_pz.skills.library import TEAM, LibraryEvent, SkillLibrary, SkillLimits
from lang_pz.skills.skill import SKILL_FILE, Skill, parse_skill_md, render_skill_md

#: The manifest a written library carries.
MANIFEST = "library.json"
MANIFEST_FORMAT = "lang_pz.skills/1"
#: Most bytes of resources one skill may carry.
MAX_RESOURCE_BYTES = 1_000_000


_ONE_SKILL = (
    "{folder} is one skill (it holds SKILL.md), not a library: give the folder that holds the skill folders, e.g. {parent}"
)


def is_skill_dir(path: Path) -> bool:
    """Whether ``path`` is a folder holding ``SKILL.md``."""
    return path.is_dir() and (path / SKILL_FILE).is_file()


def read_skill(folder: str | Path) -> Skill:
    """Read one skill folder (``SKILL.md`` and every other file in it as a resource).

    Raises:
        SkillFormatError: no ``SKILL.md``, text that is not UTF-8, a bad front matter field,
            a ``name`` other than the folder's, an empty body, or more than :data:`MAX_RESOURCE_BYTES` of
            resources; the message names the file and the field.
    """
    folder = Path(folder)
    md = folder / SKILL_FILE
    if not md.is_file():
        near = [p.name for p in folder.iterdir() if p.name.lower() == "skill.md"] if folder.is_dir() else []
        hint = f"; found {near[0]!r}: the file must be named exactly {SKILL_FILE}" if near else ""
        raise SkillFormatError(folder, None, f"is not a skill: it has no {SKILL_FILE}{hint}")
    try:
        text = md.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFormatError(md, None, f"is not UTF-8 text (byte {exc.start})") from None
    skill = parse_skill_md(text, md, folder_name=folder.name)
    if not skill.body.strip():
        raise SkillFormatError(
            md, "body", "is empty: below the front matter, write the instructions the agent sees once it names the skill"
        )
    resources: dict[str, bytes] = {}
    total = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p != md):
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") or part == "__pycache__" for part in rel.split("/")):
            continue
        resources[rel] = path.read_bytes()
        total += len(resources[rel])
        if total > MAX_RESOURCE_BYTES:
            raise SkillFormatError(
                path, None, f"the skill's resources exceed {MAX_RESOURCE_BYTES} bytes; keep large data out of skill folders"
            )
    return skill.evolve(resources=resources)


def _write_skill_files(skill: Skill, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SKILL_FILE).write_text(render_skill_md(skill), encoding="utf-8")
    for rel, data in skill.resources.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


@contextmanager
def _atomic_dir(target: Path, overwrite: bool) -> Iterator[Path]:
    """Yield a temporary sibling folder; on success it replaces ``target``, on failure it is removed."""
    target = Path(target)
    if target.exists() and not overwrite and (not target.is_dir() or any(target.iterdir())):
        raise SkillLibraryError(f"{target} already exists and is not empty; choose a new folder (or pass overwrite=True)")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()  # not tempfile.mkdtemp: its folder is private (0700); this one gets the umask's mode
    try:
        yield tmp
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, old / "x")
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_skill(skill: Skill, folder: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``skill`` as a folder (``SKILL.md`` and its resources), atomically.

    Args:
        skill: the skill.
        folder: the skill's folder; its name must be the skill's name.
        overwrite: replace an existing non-empty folder.

    Returns:
        ``folder``.

    Raises:
        SkillFormatError: the folder's name is not the skill's name.
        SkillLibraryError: the folder exists and is not empty, without ``overwrite``.
    """
    folder = Path(folder)
    if folder.name != skill.name:
        raise SkillFormatError(folder, "name", f"{skill.name!r} must equal the skill folder's name {folder.name!r}")
    with _atomic_dir(folder, overwrite) as tmp:
        _write_skill_files(skill, tmp)
    return folder


def _read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkillFormatError(
            path, None, f"is not valid JSON ({exc}); delete it to read the skills as hand-written (version 1 each)"
        ) from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise SkillFormatError(
            path, "format", f"must be {MANIFEST_FORMAT!r}, got {data.get('format') if isinstance(data, dict) else data!r}"
        )
    return data


def _scan(folder: Path, errors: list[str] | None = None) -> dict[str, dict[str, Skill]]:
    """Every skill of ``folder`` by scope; with ``errors``, bad skills are listed there and skipped."""
    scopes: dict[str, dict[str, Skill]] = {}

    def add(scope: str, skill_dir: Path) -> None:
        try:
            skill = read_skill(skill_dir)
        except SkillFormatError as exc:
            if errors is None:
                raise
            errors.append(str(exc))
            return
        if skill.name in scopes.setdefault(scope, {}):
            raise SkillLibraryError(
                f"{skill_dir}: scope {scope!r} has two skills named {skill.name!r} "
                f"(one at the top of {folder}, one in {folder / TEAM})"
            )
        scopes[scope][skill.name] = skill

    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if is_skill_dir(entry):
            add(TEAM, entry)
            continue
        subs = [p for p in sorted(entry.iterdir()) if p.is_dir() and not p.name.startswith(".")]
        if not subs:
            add(TEAM, entry)  # not a skill: explains the missing SKILL.md
        for sub in subs:
            add(entry.name, sub)
    return scopes


def read_library(folder: str | Path) -> SkillLibrary:
    """Read a library folder (layout in the module docstring), validating every skill.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
        SkillFormatError: a bad skill or manifest (the message names the file and the field).
        SkillLibraryError: two skills of one scope with one name, or ``folder`` is one skill's folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"skill library {folder} is not a folder; give a folder of skill folders (each holding a SKILL.md)"
        )
    if is_skill_dir(folder):
        raise SkillLibraryError(_ONE_SKILL.format(folder=folder, parent=folder.parent))
    manifest = _read_manifest(folder)
    recorded = manifest.get("skills", {})
    scopes = _scan(folder)
    for scope, skills in scopes.items():
        for name, skill in skills.items():
            rec = recorded.get(f"{scope}/{name}")
            if rec is not None:
                bump = 0 if rec.get("digest") == skill.digest() else 1
                skills[name] = skill.evolve(version=int(rec["version"]) + bump)
    history = tuple(LibraryEvent.from_json(e) for e in manifest.get("history", []))
    return SkillLibrary(scopes, int(manifest.get("version", 0)), history)


def write_library(library: SkillLibrary, folder: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``library`` as a folder (a snapshot): its skills, and ``library.json`` with the
    versions, digests and history, so that :func:`read_library` gives back an equal library.

    The team's skills go at the top, unless a team skill has the name of another scope (then
    into ``team/``). Written atomically (module docstring).

    Raises:
        SkillLibraryError: the folder exists and is not empty, without ``overwrite``.
    """
    folder = Path(folder)
    team_clash = set(library.scopes.get(TEAM, {})) & (set(library.scopes) - {TEAM})
    with _atomic_dir(folder, overwrite) as tmp:
        for scope, skill in library:
            base = tmp if scope == TEAM and not team_clash else tmp / scope
            _write_skill_files(skill, base / skill.name)
        data = {"format": MANIFEST_FORMAT, **library.to_json()}
        (tmp / MANIFEST).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return folder


def check_library(folder: str | Path, limits: SkillLimits | None = None) -> tuple[SkillLibrary | None, list[str]]:
    """Validate a library folder and report *every* problem (not only the first).

    Args:
        folder: the library folder.
        limits: bounds to check too (``None``: the format's rules only).

    Returns:
        ``(library, problems)``: the library if it could be read at all (``None`` otherwise),
        and one message per problem, each naming the file and the field or the bound.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return None, [f"{folder} is not a folder"]
    if is_skill_dir(folder):
        return None, [_ONE_SKILL.format(folder=folder, parent=folder.parent)]
    errors: list[str] = []
    try:
        _scan(folder, errors)
        library = read_library(folder) if not errors else None
    except (SkillFormatError, SkillLibraryError) as exc:
        return None, [*errors, str(exc)]
    if library is not None and limits is not None:
        errors += limits.problems(library)
    return library, errors
