"""MPE2's particle worlds as language environments: :mod:`lang_pz.envs.mpe.make` makes them,
:mod:`lang_pz.envs.mpe.adapter` gives their text."""

from lang_pz.envs.mpe.adapter import (
    MOVE_COMPONENTS,
    MOVES,
    MPEAdapter,
    colour,
    where,
    words,
)
from lang_pz.envs.mpe.make import (
    make_simple_reference,
    make_simple_speaker_listener,
    make_simple_spread,
)

__all__ = [
    "MOVES",
    "MOVE_COMPONENTS",
    "MPEAdapter",
    "colour",
    "make_simple_reference",
    "make_simple_speaker_listener",
    "make_simple_spread",
    "where",
    "words",
]
