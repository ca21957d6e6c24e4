"""TextArena's games as language environments (``textarena/<game>-v0``; any game through
``textarena/<TextArena id>``): :mod:`~lang_pz.envs.textarena.bridge` makes one a PettingZoo AEC
env, :mod:`~lang_pz.envs.textarena.adapter` gives its text, :mod:`~lang_pz.envs.textarena.make`
checks the arguments."""

from lang_pz.envs.textarena.adapter import TextArenaAdapter
from lang_pz.envs.textarena.bridge import TextArenaAEC, listed_moves
from lang_pz.envs.textarena.make import make_textarena

__all__ = ["TextArenaAEC", "TextArenaAdapter", "listed_moves", "make_textarena"]
