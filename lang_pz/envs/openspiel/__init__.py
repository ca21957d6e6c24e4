"""OpenSpiel games (through Shimmy) as language environments: :mod:`lang_pz.envs.openspiel.games`
makes them, :mod:`lang_pz.envs.openspiel.adapter` gives their text."""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.envs.openspiel.adapter import OpenSpielAdapter
from lang_pz.envs.openspiel.games import make_openspiel

__all__ = ["OpenSpielAdapter", "make_openspiel"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {"NOTES": "lang_pz.envs.openspiel.games.NOTES", "move_words": "lang_pz.envs.openspiel.adapter.move_words"}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
