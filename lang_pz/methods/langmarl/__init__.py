"""LangMARL: text policies as the parameter (:class:`LangMARL`, ``method: langmarl``), and its own
steps (:mod:`lang_pz.methods.langmarl.steps`)."""

from lang_pz.methods.langmarl.method import LangMARL
from lang_pz.methods.langmarl.steps import (
    AgentGradient,
    Directions,
    LangMARLState,
    commit_momentum,
    evidence_gate,
    gradients,
    propose,
)

__all__ = [
    "AgentGradient",
    "Directions",
    "LangMARL",
    "LangMARLState",
    "commit_momentum",
    "evidence_gate",
    "gradients",
    "propose",
]
