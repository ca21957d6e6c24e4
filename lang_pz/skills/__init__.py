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

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import SkillCritic
from lang_pz.skills.diff import diff_libraries
from lang_pz.skills.evidence import skill_utilities
from lang_pz.skills.files import check_library, read_library, write_library
from lang_pz.skills.library import Scoping, SkillEdit, SkillLibrary, SkillLimits
from lang_pz.skills.operators import propose_edits
from lang_pz.skills.policy import SkillPolicy
from lang_pz.skills.skill import Skill
from lang_pz.skills.writer import SkillWriter

__all__ = [
    "Scoping",
    "Skill",
    "SkillCritic",
    "SkillEdit",
    "SkillLibrary",
    "SkillLimits",
    "SkillMemory",
    "SkillPolicy",
    "SkillWriter",
    "check_library",
    "diff_libraries",
    "propose_edits",
    "read_library",
    "skill_utilities",
    "write_library",
]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "Invocation": "lang_pz.skills.policy.Invocation",
    "LibraryDiff": "lang_pz.skills.diff.LibraryDiff",
    "LibraryEvent": "lang_pz.skills.edits.LibraryEvent",
    "ProposalRules": "lang_pz.skills.operators.ProposalRules",
    "Proposals": "lang_pz.skills.operators.Proposals",
    "Residual": "lang_pz.skills.critic.Residual",
    "SkillCriticReport": "lang_pz.skills.critic.SkillCriticReport",
    "SkillUtility": "lang_pz.skills.evidence.SkillUtility",
    "TEAM": "lang_pz.skills.library.TEAM",
    "UseCredit": "lang_pz.skills.critic.UseCredit",
    "check_name": "lang_pz.skills.skill.check_name",
    "consolidate": "lang_pz.skills.operators.consolidate",
    "induce": "lang_pz.skills.operators.induce",
    "invocations": "lang_pz.skills.policy.invocations",
    "parse_skill_md": "lang_pz.skills.skill.parse_skill_md",
    "prune": "lang_pz.skills.operators.prune",
    "read_skill": "lang_pz.skills.files.read_skill",
    "refine": "lang_pz.skills.operators.refine",
    "render_skill_md": "lang_pz.skills.skill.render_skill_md",
    "skill_policies": "lang_pz.skills.policy.skill_policies",
    "usage_counts": "lang_pz.skills.policy.usage_counts",
    "write_skill": "lang_pz.skills.files.write_skill",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
