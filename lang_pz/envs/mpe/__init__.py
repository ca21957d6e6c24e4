"""MPE2's particle worlds as language environments: :mod:`lang_pz.envs.mpe.make` makes them,
:mod:`lang_pz.envs.mpe.adapter` gives their text; :mod:`lang_pz.envs.mpe.family` gives any MPE2
scenario's text to an MPE2 env wrapped without an adapter."""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.envs.mpe.adapter import MPEAdapter
from lang_pz.envs.mpe.family import MPEFamilyAdapter
from lang_pz.envs.mpe.make import (
    make_simple_reference,
    make_simple_speaker_listener,
    make_simple_spread,
)

__all__ = ["MPEAdapter", "MPEFamilyAdapter", "make_simple_reference", "make_simple_speaker_listener", "make_simple_spread"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "MOVES": "lang_pz.envs.mpe.adapter.MOVES",
    "MOVE_COMPONENTS": "lang_pz.envs.mpe.adapter.MOVE_COMPONENTS",
    "colour": "lang_pz.envs.mpe.adapter.colour",
    "where": "lang_pz.envs.mpe.adapter.where",
    "words": "lang_pz.envs.mpe.adapter.words",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
