"""OpenSpiel games (through Shimmy) as language environments: :mod:`lang_pz.envs.openspiel.games`
makes them, :mod:`lang_pz.envs.openspiel.adapter` gives their text."""

from lang_pz.envs.openspiel.adapter import OpenSpielAdapter, move_words
from lang_pz.envs.openspiel.games import NOTES, make_openspiel

__all__ = ["NOTES", "OpenSpielAdapter", "make_openspiel", "move_words"]
