"""Self-improvement methods :func:`lang_pz.training.train` drives, picked by ``config.method``.

- :class:`~lang_pz.methods.base.Method`: the interface (parameter, parts, state, the stages of the
  one iteration skeleton; :class:`~lang_pz.methods.base.Proposal`: what the propose stage makes);
- :class:`~lang_pz.methods.langmarl.LangMARL` (``langmarl``): text policies;
- :class:`~lang_pz.methods.maskills.MASkills` (``maskills``): a skill library.

:func:`register_method` adds another (selectable by name in a config and on the command line);
:func:`method_class` finds one by name, :func:`registered` lists them
(:mod:`lang_pz.training.registry`).
"""

from lang_pz.methods.base import Method
from lang_pz.methods.data import IterationData, Proposal
from lang_pz.methods.langmarl import LangMARL
from lang_pz.methods.maskills import MASkills
from lang_pz.training.registry import method_class, register_method, registered

__all__ = ["IterationData", "LangMARL", "MASkills", "Method", "Proposal", "method_class", "register_method", "registered"]
