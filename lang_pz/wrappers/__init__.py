"""Wrappers that turn PettingZoo (AEC, parallel) and Gymnasium environments into language environments."""

from lang_pz.wrappers.aec import LanguageAECWrapper
from lang_pz.wrappers.gymnasium import LanguageGymWrapper
from lang_pz.wrappers.parallel import LanguageParallelWrapper

__all__ = ["LanguageAECWrapper", "LanguageGymWrapper", "LanguageParallelWrapper"]
