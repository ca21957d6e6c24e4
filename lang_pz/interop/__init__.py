"""Bridges from lang_pz's language environments to the RL libraries people already use.

=================================  =========================================================
:func:`to_vector_env`              parallel envs: ``Discrete`` actions (``Box`` vectors for
                                   continuous envs), numeric infos, and ``observation=``
                                   ``"vector"`` (encoded text), ``"raw"`` (the env's own, e.g.
                                   Pistonball's image: :class:`RawObservations`) or ``"text"``
                                   (:mod:`lang_pz.interop.wrappers`): what SB3, TorchRL, RLlib
                                   and CleanRL train on
:func:`to_masked_aec_env`          turn-based (AEC) games in PettingZoo's action-mask convention,
                                   indexes in the game's own numbering, text (``keep_text``)
                                   listing moves as ``index: move`` (:mod:`lang_pz.interop.aec`):
                                   what MaskablePPO, Tianshou, AgileRL and PettingZoo's LangChain
                                   agents index
:class:`HashedBagOfWords`          the default text -> vector encoder (order and values kept);
                                   :class:`FunctionEncoder` wraps your own
                                   (:mod:`lang_pz.interop.encoders`)
:func:`register_text_spaces`       Gymnasium vector utilities on Text: SuperSuit vector envs
                                   work, ``AsyncVectorEnv(shared_memory=True)`` fails loudly
:func:`sb3_vec_env`                a Stable-Baselines3 VecEnv over every agent (SuperSuit)
:func:`torchrl_env`                a TorchRL ``PettingZooWrapper``
:func:`register_rllib_env`         a Ray Tune env name for RLlib (the ``rllib`` extra); ``api="aec"``
                                   for turn-based games with RLlib's action-masking module
=================================  =========================================================

Extras: ``pip install 'lang_pz[sb3]'`` (stable-baselines3, sb3-contrib, torch 2.13.0 CPU),
``'lang_pz[torchrl]'`` (torchrl, tensordict, torch 2.13.0 CPU), ``'lang_pz[tianshou]'``
(tianshou 0.5.0, the version PettingZoo's tutorials use), ``'lang_pz[rllib]'`` (RLlib 2.60 without its
gymnasium pin). ``docs/interop.md`` shows each of PettingZoo's tutorials (SB3, Tianshou, CleanRL,
RLlib, AgileRL, LangChain) as a diff of the env constructor; ``tests/interop`` runs them shortened.
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.interop.aec import to_masked_aec_env
from lang_pz.interop.encoders import FunctionEncoder, HashedBagOfWords
from lang_pz.interop.rllib import register_rllib_env
from lang_pz.interop.torchrl import torchrl_env
from lang_pz.interop.vector import register_text_spaces, sb3_vec_env
from lang_pz.interop.wrappers import RawObservations, to_vector_env

__all__ = [
    "FunctionEncoder",
    "HashedBagOfWords",
    "RawObservations",
    "register_rllib_env",
    "register_text_spaces",
    "sb3_vec_env",
    "to_masked_aec_env",
    "to_vector_env",
    "torchrl_env",
]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "BoxActions": "lang_pz.interop.wrappers.BoxActions",
    "DiscreteActions": "lang_pz.interop.wrappers.DiscreteActions",
    "EncodeObservations": "lang_pz.interop.wrappers.EncodeObservations",
    "GymBoxActions": "lang_pz.interop.gym.GymBoxActions",
    "GymDiscreteActions": "lang_pz.interop.gym.GymDiscreteActions",
    "GymEncodeObservations": "lang_pz.interop.gym.GymEncodeObservations",
    "HashedBagOfWordsV1": "lang_pz.interop.encoders.HashedBagOfWordsV1",
    "MaskedAECEnv": "lang_pz.interop.aec.MaskedAECEnv",
    "NumericInfos": "lang_pz.interop.wrappers.NumericInfos",
    "TextEncoder": "lang_pz.interop.encoders.TextEncoder",
    "action_words": "lang_pz.interop.wrappers.action_words",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
