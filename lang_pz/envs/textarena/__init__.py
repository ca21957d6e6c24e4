"""TextArena's games as language environments (``textarena/<game>-v0``; any game through
``textarena/<TextArena id>``): :mod:`~lang_pz.envs.textarena.bridge` makes one a PettingZoo AEC
env, :mod:`~lang_pz.envs.textarena.adapter` gives its text, :mod:`~lang_pz.envs.textarena.make`
checks the arguments."""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.envs.textarena.adapter import TextArenaAdapter
from lang_pz.envs.textarena.bridge import TextArenaAEC
from lang_pz.envs.textarena.make import make_textarena

__all__ = ["TextArenaAEC", "TextArenaAdapter", "make_textarena"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {"listed_moves": "lang_pz.envs.textarena.bridge.listed_moves"}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
