"""MASkills: a skill library as the parameter (:class:`MASkills`, ``method: maskills``).

The library itself (skills, scopes, files, the skill policy, critic and operators) is
:mod:`lang_pz.skills`; this package is the method that trains it.
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.methods.maskills.method import MASkills, SkillState, SkillTrainResult

__all__ = ["MASkills", "SkillState", "SkillTrainResult"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {"limits_of": "lang_pz.methods.maskills.method.limits_of"}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
