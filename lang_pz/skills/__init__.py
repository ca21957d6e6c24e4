"""Skill libraries that improve themselves (MASkills; Yao et al., "MASkills: Continual Skills
Optimization for Multi-Agent LLM Systems", EMNLP 2026 Findings).

The object optimised is a library of skills in the public Agent Skills format, not a policy
prompt; the loop is LangMARL's four stages with a library as the parameter. The pieces, each
usable alone (the training loop composes them):

- :mod:`~lang_pz.skills.skill`: one skill (``SKILL.md``: YAML front matter + Markdown body);
- :mod:`~lang_pz.skills.library`: skills by scope (team / role / agent), versions, limits
  and rollback;
- :mod:`~lang_pz.skills.edits`: the invertible edits a library applies and records;
- :mod:`~lang_pz.skills.files`: libraries on disk (read, check, atomic snapshots);
- :mod:`~lang_pz.skills.diff`: what changed between two libraries;
- :mod:`~lang_pz.skills.policy`: a policy that invokes skills by name and then sees the body
  (decentralised rollout; every invocation recorded per step);
- :mod:`~lang_pz.skills.evidence`: measured utility per skill from withheld-skill re-runs;
- :mod:`~lang_pz.skills.critic`: credit per skill use and per-agent residuals, in language;
- :mod:`~lang_pz.skills.aggregate`: evidence summed over a batch, with a decayed memory;
- :mod:`~lang_pz.skills.operators`: refine, induce, consolidate, prune, and ``propose_edits``;
- :mod:`~lang_pz.skills.writer`: the LLM call that writes a skill's text for those operators;
- :mod:`~lang_pz.skills.team`: ``env -> team`` of skill policies on a library (picklable);
- :mod:`~lang_pz.skills.transfer`: a library evaluated unchanged on another env (``lang-pz skills eval``).

The method that trains a library, ``lang_pz.training.train(config)`` with ``method: maskills``,
is :mod:`lang_pz.methods.maskills`. The last two import :mod:`lang_pz.training`; import them by
module.
"""

from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import Residual, SkillCritic, SkillCriticReport, UseCredit
from lang_pz.skills.diff import LibraryDiff, diff_libraries
from lang_pz.skills.evidence import SkillUtility, skill_utilities
from lang_pz.skills.files import (
    check_library,
    read_library,
    read_skill,
    write_library,
    write_skill,
)
from lang_pz.skills.library import (
    TEAM,
    LibraryEvent,
    Scoping,
    SkillEdit,
    SkillLibrary,
    SkillLimits,
)
from lang_pz.skills.operators import (
    ProposalRules,
    Proposals,
    consolidate,
    induce,
    propose_edits,
    prune,
    refine,
)
from lang_pz.skills.policy import (
    Invocation,
    SkillPolicy,
    invocations,
    skill_policies,
    usage_counts,
)
from lang_pz.skills.skill import Skill, check_name, parse_skill_md, render_skill_md
from lang_pz.skills.writer import SkillWriter

__all__ = [
    "TEAM",
    "Invocation",
    "LibraryDiff",
    "LibraryEvent",
    "ProposalRules",
    "Proposals",
    "Residual",
    "Scoping",
    "Skill",
    "SkillCritic",
    "SkillCriticReport",
    "SkillEdit",
    "SkillLibrary",
    "SkillLimits",
    "SkillMemory",
    "SkillPolicy",
    "SkillUtility",
    "SkillWriter",
    "UseCredit",
    "check_library",
    "check_name",
    "consolidate",
    "diff_libraries",
    "induce",
    "invocations",
    "parse_skill_md",
    "propose_edits",
    "prune",
    "read_library",
    "read_skill",
    "refine",
    "render_skill_md",
    "skill_policies",
    "skill_utilities",
    "usage_counts",
    "write_library",
    "write_skill",
]
