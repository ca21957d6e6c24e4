"""MPE2's particle worlds as language environments: :mod:`lang_pz.envs.mpe.make` makes them,
:mod:`lang_pz.envs.mpe.adapter` gives their text; :mod:`lang_pz.envs.mpe.family` gives any MPE2
scenario's text to an MPE2 env wrapped without an adapter."""

from lang_pz.envs.mpe.adapter import (
    MOVE_COMPONENTS,
    MOVES,
    MPEAdapter,
    colour,
    where,
    words,
)
from lang_pz.envs.mpe.family import MPEFamilyAdapter
from lang_pz.envs.mpe.make import (
    make_simple_reference,
    make_simple_speaker_listener,
    make_simple_spread,
)

__all__ = [
    "MOVES",
    "MOVE_COMPONENTS",
    "MPEAdapter",
    "MPEFamilyAdapter",
    "colour",
    "make_simple_reference",
    "make_simple_speaker_listener",
    "make_simple_spread",
    "where",
    "words",
]
