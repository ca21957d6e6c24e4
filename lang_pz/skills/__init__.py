"""Skill libraries that improve themselves (MASkills; Yao et al., "MASkills: Continual Skills
Optimization for Multi-Agent LLM Systems", EMNLP 2026 Findings).

The object optimised is a library of skills in the public Agent Skills format, not a policy
prompt. The pieces, each usable alone:

- :mod:`~lang_pz.skills.skill`: one skill (``SKILL.md``: YAML front matter + Markdown body);
- :mod:`~lang_pz.skills.library`: skills by scope (team / role / agent), versions, invertible
  edits, rollback, limits;
- :mod:`~lang_pz.skills.files`: libraries on disk (read, validate, atomic snapshots);
- :mod:`~lang_pz.skills.diff`: what changed between two libraries;
"""

from lang_pz.skills.files import read_library, read_skill, write_library, write_skill
from lang_pz.skills.library import TEAM, LibraryEvent, Scoping, SkillEdit, SkillLibrary, SkillLimits
from lang_pz.skills.skill import Skill, check_name, parse_skill_md, render_skill_md

__all__ = [
    "TEAM",
    "LibraryEvent",
    "Scoping",
    "Skill",
    "SkillEdit",
    "SkillLibrary",
    "SkillLimits",
    "check_name",
    "parse_skill_md",
    "read_library",
    "read_skill",
    "render_skill_md",
    "write_library",
    "write_skill",
]
