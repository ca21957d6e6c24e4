"""Wrappers that turn PettingZoo (AEC, parallel) and Gymnasium environments into language environments.

:mod:`lang_pz.wrappers.lazy` holds the layer that lets an environment skip observations its
text never reads (:class:`~lang_pz.wrappers.lazy.ObserveOnDemand`).
"""

from lang_pz.wrappers.aec import LanguageAECWrapper
from lang_pz.wrappers.gymnasium import LanguageGymWrapper
from lang_pz.wrappers.parallel import LanguageParallelWrapper

__all__ = ["LanguageAECWrapper", "LanguageGymWrapper", "LanguageParallelWrapper"]
