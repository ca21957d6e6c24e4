"""MASkills: a skill library as the parameter (:class:`MASkills`, ``method: maskills``).

The library itself (skills, scopes, files, the skill policy, critic and operators) is
:mod:`lang_pz.skills`; this package is the method that trains it.
"""

from lang_pz.methods.maskills.method import MASkills, SkillState, SkillTrainResult, limits_of

__all__ = ["MASkills", "SkillState", "SkillTrainResult", "limits_of"]
