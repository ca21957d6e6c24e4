"""Bridges from lang_pz's language environments to the RL libraries people already use.

=================================  =========================================================
:func:`to_vector_env`              vector observations, ``Discrete`` actions (``Box`` vectors
                                   for continuous envs), numeric infos
                                   (:mod:`lang_pz.interop.wrappers`): what SB3, TorchRL and
                                   RLlib train on
:func:`to_masked_aec_env`          turn-based (AEC) envs in PettingZoo's action-mask convention
                                   (:mod:`lang_pz.interop.aec`): what MaskablePPO, Tianshou and
                                   PettingZoo's LangChain agents index
:class:`HashedBagOfWords`          the default text -> vector encoder (order and values kept);
                                   :class:`FunctionEncoder` wraps your own
                                   (:mod:`lang_pz.interop.encoders`)
:func:`register_text_spaces`       Gymnasium vector utilities on Text: SuperSuit vector envs
                                   work, ``AsyncVectorEnv(shared_memory=True)`` fails loudly
:func:`sb3_vec_env`                a Stable-Baselines3 VecEnv over every agent (SuperSuit)
:func:`torchrl_env`                a TorchRL ``PettingZooWrapper``
:func:`register_rllib_env`         a Ray Tune env name for RLlib (the ``rllib`` extra)
=================================  =========================================================

Extras: ``pip install 'lang_pz[sb3]'`` (stable-baselines3, sb3-contrib, torch 2.13.0 CPU),
``'lang_pz[torchrl]'`` (torchrl, tensordict, torch 2.13.0 CPU), ``'lang_pz[tianshou]'``
(tianshou 0.5.0, the version PettingZoo's tutorials use), ``'lang_pz[rllib]'`` (RLlib 2.60 without its
gymnasium pin). The tutorials are
``examples/interop_*.py``; PettingZoo's own SB3 action-mask, Tianshou and LangChain tutorials
run on the classic games with only the env constructor changed (``tests/interop/test_interop_tutorials.py``).
"""

from lang_pz.interop.aec import MaskedAECEnv, to_masked_aec_env
from lang_pz.interop.encoders import FunctionEncoder, HashedBagOfWords, HashedBagOfWordsV1, TextEncoder
from lang_pz.interop.gym import GymBoxActions, GymDiscreteActions, GymEncodeObservations
from lang_pz.interop.rllib import register_rllib_env
from lang_pz.interop.torchrl import torchrl_env
from lang_pz.interop.vector import register_text_spaces, sb3_vec_env
from lang_pz.interop.wrappers import (
    BoxActions,
    DiscreteActions,
    EncodeObservations,
    NumericInfos,
    RawObservations,
    action_words,
    to_vector_env,
)

__all__ = [
    "BoxActions",
    "DiscreteActions",
    "EncodeObservations",
    "FunctionEncoder",
    "GymBoxActions",
    "GymDiscreteActions",
    "GymEncodeObservations",
    "HashedBagOfWords",
    "HashedBagOfWordsV1",
    "MaskedAECEnv",
    "NumericInfos",
    "RawObservations",
    "TextEncoder",
    "action_words",
    "register_rllib_env",
    "register_text_spaces",
    "sb3_vec_env",
    "to_masked_aec_env",
    "to_vector_env",
    "torchrl_env",
]
