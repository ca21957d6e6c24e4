"""One skill: the public Agent Skills format (``SKILL.md`` = YAML front matter + Markdown body).

A skill is a folder named after the skill, holding ``SKILL.md`` and optional resources beside it
(``scripts/``, ``references/``, ``assets/``, any files)::

    check-units/
      SKILL.md
      references/units.md

``SKILL.md`` starts with YAML front matter between ``---`` lines, then the body (the
instructions an agent sees once it invokes the skill)::

    ---
    name: check-units
    description: Check that the answer has the unit the question asks for. Use before answering.
    ---
    Read the question's last sentence ...

Front matter fields (the Agent Skills specification, as its reference validator ``skills-ref``
checks them):

==================  =========  ==================================================================
``name``            required   1-64 characters: lowercase ASCII letters, digits and hyphens; no
                               leading, trailing or doubled hyphen; equal to the folder's name
``description``     required   non-empty, at most 1024 characters: what the skill does and when
                               to use it (always shown to the agent: progressive disclosure)
``license``         optional   a string
``compatibility``   optional   non-empty, at most 500 characters
``metadata``        optional   a map of string keys to string values (quote numbers: ``"1.0"``)
``allowed-tools``   optional   a string (space-separated tool names)
==================  =========  ==================================================================

Any other field is an error. The specification allows Unicode lowercase letters in names;
lang_pz accepts ASCII only, because names are offered to models as grammar choices.
Front matter is parsed with PyYAML's safe loader (a key given twice is an error).
``skills-ref`` itself is not a dependency: it needs Python >= 3.11 and calls itself
"intended for demonstration purposes only".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from lang_pz.error import SkillFormatError

#: The file that makes a folder a skill.
SKILL_FILE = "SKILL.md"
#: Limits of the Agent Skills specification.
NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 1024
COMPATIBILITY_MAX_CHARS = 500
#: Front matter fields, in the order they are written.
FIELDS: tuple[str, ...] = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping key given twice (PyYAML keeps the last silently)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def check_name(name: Any, where: str = "<skill>") -> str:
    """``name`` if it is a valid skill name, else :class:`SkillFormatError` naming the rule broken.

    Args:
        name: the candidate name.
        where: the file or folder named in the error.
    """
    if not isinstance(name, str):
        raise SkillFormatError(where, "name", f"must be a string, got {type(name).__name__} {name!r}")
    if not name:
        raise SkillFormatError(where, "name", "is empty; give a name such as 'check-units'")
    if len(name) > NAME_MAX_CHARS:
        raise SkillFormatError(where, "name", f"{name[:20]!r}... has {len(name)} characters; at most {NAME_MAX_CHARS}")
    if not NAME_PATTERN.match(name):
        fix = "-".join(p for p in re.split(r"[^a-z0-9]+", name.lower()) if p)
        raise SkillFormatError(
            where,
            "name",
            f"{name!r} must be lowercase letters, digits and single hyphens, not at either end"
            + (f"; e.g. {fix!r}" if fix else ""),
        )
    return name


def _text(value: Any, where: str, key: str, limit: int, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        got = "nothing" if value is None else f"{type(value).__name__} {value!r}"
        raise SkillFormatError(
            where, key, f"must be a string, got {got}" + ("" if value is not None else "; it is required")
        )
    if not value.strip():
        raise SkillFormatError(where, key, "is empty" + ("; it is required" if required else "; remove it or fill it"))
    if len(value) > limit:
        raise SkillFormatError(where, key, f"has {len(value)} characters; at most {limit}")
    return value


@dataclass(frozen=True)
class Skill:
    """One skill in memory (validated on construction).

    Attributes:
        name: the skill's name (also its folder's name); see :func:`check_name`.
        description: what it does and when to use it (at most 1024 characters); shown to the
            agent in every prompt.
        body: the Markdown instructions, shown once the agent invokes the skill (leading and
            trailing whitespace removed).
        license, compatibility, allowed_tools: optional front matter fields (``None`` if absent).
        metadata: the optional string -> string map.
        resources: relative POSIX path -> bytes of every other file in the skill's folder.
        version: the skill's version in its library (1 for a new or hand-written skill; every
            accepted edit of the skill adds 1). Kept in the library's manifest, not in ``SKILL.md``.

    Raises:
        SkillFormatError: a field breaks the format (the message names the field).
    """

    name: str
    description: str
    body: str = ""
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    allowed_tools: str | None = None
    resources: Mapping[str, bytes] = field(default_factory=dict)
    version: int = 1

    def __post_init__(self) -> None:
        validate_fields(self.front_matter(), f"<skill {self.name!r}>")
        if not isinstance(self.body, str):
            raise SkillFormatError(f"<skill {self.name!r}>", None, f"body must be a string, got {self.body!r}")
        if not isinstance(self.version, int) or self.version < 1:
            raise SkillFormatError(f"<skill {self.name!r}>", None, f"version must be an int >= 1, got {self.version!r}")
        bad = [p for p in self.resources if p == SKILL_FILE or p.startswith("/") or ".." in p.split("/")]
        if bad:
            raise SkillFormatError(
                f"<skill {self.name!r}>",
                None,
                f"bad resource path(s) {bad}: relative paths inside the skill folder, other than {SKILL_FILE}",
            )
        object.__setattr__(self, "body", self.body.strip())
        object.__setattr__(self, "metadata", dict(self.metadata))
        object.__setattr__(self, "resources", dict(sorted(self.resources.items())))

    def front_matter(self) -> dict[str, Any]:
        """The front matter fields that are set, in :data:`FIELDS` order."""
        data = {
            "name": self.name,
            "description": self.description,
            "license": self.license,
            "compatibility": self.compatibility,
            "metadata": self.metadata or None,
            "allowed-tools": self.allowed_tools,
        }
        return {k: v for k, v in data.items() if v is not None}

    def evolve(self, **changes: Any) -> Skill:
        """A copy with some fields changed (validated again), e.g. ``skill.evolve(body=new)``."""
        return replace(self, **changes)

    def same_content(self, other: Skill) -> bool:
        """Whether both have the same files (everything but ``version``)."""
        return replace(self, version=1) == replace(other, version=1)

    def digest(self) -> str:
        """SHA-256 (hex) of the rendered ``SKILL.md`` and the resources: changes iff the content does."""
        h = hashlib.sha256(render_skill_md(self).encode())
        for path, data in self.resources.items():
            h.update(b"\0" + path.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()

    def card(self) -> str:
        """``name: description`` on one line (what the agent's prompt lists)."""
        return f"{self.name}: {' '.join(self.description.split())}"


def validate_fields(data: Any, where: str) -> None:
    """Check front matter ``data`` (a mapping from YAML) against the format.

    Raises:
        SkillFormatError: not a mapping, an unknown field, or a field breaking its rule; the
            message names ``where`` (the file) and the field.
    """
    if not isinstance(data, Mapping):
        raise SkillFormatError(where, None, f"the front matter must be a YAML mapping of fields, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in FIELDS]
    if unknown:
        hint = "; put extra information under 'metadata'" if any(k != "allowed_tools" for k in unknown) else ""
        raise SkillFormatError(
            where,
            unknown[0],
            f"is not an Agent Skills field (allowed: {', '.join(FIELDS)})"
            + ("; write 'allowed-tools'" if unknown[0] == "allowed_tools" else hint),
        )
    if "name" not in data:
        raise SkillFormatError(where, "name", "is missing; it is required")
    check_name(data["name"], where)
    _text(data.get("description"), where, "description", DESCRIPTION_MAX_CHARS, required=True)
    if "license" in data:
        _text(data["license"], where, "license", 10_000, required=True)
    if "compatibility" in data:
        _text(data["compatibility"], where, "compatibility", COMPATIBILITY_MAX_CHARS, required=True)
    if "allowed-tools" in data:
        _text(data["allowed-tools"], where, "allowed-tools", 10_000, required=True)
    meta = data.get("metadata")
    if "metadata" in data and not isinstance(meta, Mapping):
        raise SkillFormatError(where, "metadata", f"must be a map of strings to strings, got {meta!r}")
    for k, v in (meta or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise SkillFormatError(
                where, f"metadata.{k}", f'keys and values must be strings, got {k!r}: {v!r}; quote it, e.g. version: "1.0"'
            )


def parse_skill_md(text: str, where: str | Path = "<text>", folder_name: str | None = None) -> Skill:
    """Parse the text of a ``SKILL.md``.

    Args:
        text: the file's text (``\\r\\n`` line ends and a leading BOM are accepted).
        where: the file, for error messages.
        folder_name: the skill folder's name; the ``name`` field must equal it (``None``: not checked).

    Returns:
        The :class:`Skill` (version 1, no resources).

    Raises:
        SkillFormatError: no front matter, YAML that does not parse, or a bad field.
    """
    where = str(where)
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise SkillFormatError(
            where,
            None,
            "must start with a line '---', then the YAML front matter (name, description), then a line '---', then the body",
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SkillFormatError(where, None, "the front matter is not closed: add a line '---' after it")
    try:
        data = yaml.load("\n".join(lines[1:end]), Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillFormatError(where, None, f"the front matter is not valid YAML{at}: {problem}") from None
    validate_fields(data if data is not None else {}, where)
    if folder_name is not None and data["name"] != folder_name:
        raise SkillFormatError(
            where, "name", f"{data['name']!r} must equal the skill folder's name {folder_name!r}; rename one of them"
        )
    return Skill(
        name=data["name"],
        description=data["description"],
        body="\n".join(lines[end + 1 :]),
        license=data.get("license"),
        compatibility=data.get("compatibility"),
        metadata=data.get("metadata") or {},
        allowed_tools=data.get("allowed-tools"),
    )


def render_skill_md(skill: Skill) -> str:
    """The ``SKILL.md`` text of ``skill`` (inverse of :func:`parse_skill_md`)."""
    head = yaml.safe_dump(skill.front_matter(), sort_keys=False, allow_unicode=True, width=10_000)
    return f"---\n{head}---\n\n{skill.body}\n" if skill.body else f"---\n{head}---\n"
