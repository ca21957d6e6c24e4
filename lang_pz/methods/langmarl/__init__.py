"""LangMARL: text policies as the parameter (:class:`LangMARL`, ``method: langmarl``), and its own
steps (:mod:`lang_pz.methods.langmarl.steps`)."""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.methods.langmarl.method import LangMARL
from lang_pz.methods.langmarl.steps import LangMARLState

__all__ = ["LangMARL", "LangMARLState"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "AgentGradient": "lang_pz.methods.langmarl.steps.AgentGradient",
    "Directions": "lang_pz.methods.langmarl.steps.Directions",
    "commit_momentum": "lang_pz.methods.langmarl.steps.commit_momentum",
    "evidence_gate": "lang_pz.methods.langmarl.steps.evidence_gate",
    "gradients": "lang_pz.methods.langmarl.steps.gradients",
    "propose": "lang_pz.methods.langmarl.steps.propose",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
