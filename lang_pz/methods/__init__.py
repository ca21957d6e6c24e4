"""Self-improvement methods :func:`lang_pz.training.train` drives, picked by ``config.method``.

- :class:`~lang_pz.methods.base.Method`: the interface (parameter, parts, state, the stages of the
  one iteration skeleton; :class:`~lang_pz.methods.base.Proposal`: what the propose stage makes);
- :class:`~lang_pz.methods.langmarl.LangMARL` (``langmarl``): text policies;
- :class:`~lang_pz.methods.maskills.MASkills` (``maskills``): a skill library.

:func:`register_method` adds another (selectable by name in a config and on the command line);
:func:`method_class` finds one by name, :func:`registered` lists them
(:mod:`lang_pz.training.registry`).
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.methods.base import Method
from lang_pz.methods.data import Proposal
from lang_pz.methods.langmarl import LangMARL
from lang_pz.methods.maskills import MASkills
from lang_pz.training.registry import register_method

__all__ = ["LangMARL", "MASkills", "Method", "Proposal", "register_method"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "IterationData": "lang_pz.methods.data.IterationData",
    "method_class": "lang_pz.training.registry.method_class",
    "registered": "lang_pz.training.registry.registered",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
