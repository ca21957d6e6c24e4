"""MPE2's cooperative particle worlds as language environments: ``mpe/<scenario>-v0``.

=====================  =====================================================================
Agents                 simple_spread: ``agent_0`` ... ``agent_{N-1}``; simple_speaker_listener:
                       ``speaker_0`` (cannot move), ``listener_0`` (cannot speak);
                       simple_reference: ``agent_0``, ``agent_1`` (both move and speak)
API                    parallel and AEC (MPE2's own)
Observation            ``{"text": str}``: the agent's own observation vector in words and
                       numbers (:mod:`lang_pz.envs.mpe.adapter`), then the action line
Action                 discrete: a move word (``up``), a message word (``green``) or both
                       (``up and say green``); continuous: named components from 0 to 1
                       (``left=0 right=0.8 down=0 up=0.3``; left-out components are 0)
Reward                 MPE2's (spread: minus the distances from each landmark to its closest
                       agent, minus collisions; speaker-listener and reference: minus the
                       listener's distance to its goal), shared by the team
Fallback               discrete: ``stay`` (or the first word); continuous: zeros (no push)
=====================  =====================================================================

MPE2 1.1.1 (MPE left PettingZoo in 1.25); Lowe et al., "Multi-Agent Actor-Critic for Mixed
Cooperative-Competitive Environments", NeurIPS 2017 (the scenarios).
"""

from __future__ import annotations

from typing import Any

from lang_pz.envs.checks import check_api, check_bool, check_int, check_number
from lang_pz.envs.mpe.adapter import (
    MPEAdapter,
    ReferenceAdapter,
    SpeakerListenerAdapter,
    SpreadAdapter,
)
from lang_pz.error import InvalidKwargError
from lang_pz.registration import Api


def _wrap(module: Any, adapter: MPEAdapter, api: Api, strict: bool, **kwargs: Any) -> Any:
    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

    if api == "parallel":
        return LanguageParallelWrapper(module.parallel_env(**kwargs), adapter, strict=strict)
    return LanguageAECWrapper(module.env(**kwargs), adapter, strict=strict)


def _common(env_id: str, api: str, max_cycles: Any, continuous_actions: Any, strict: Any) -> None:
    check_api(env_id, api, ("parallel", "aec"))
    check_int("max_cycles", max_cycles, 1)
    check_bool("continuous_actions", continuous_actions)
    check_bool("strict", strict)


def make_simple_spread(
    api: Api = "parallel",
    *,
    N: int = 3,
    local_ratio: float = 0.5,
    max_cycles: int = 25,
    continuous_actions: bool = False,
    strict: bool = False,
) -> Any:
    """simple_spread: ``N`` agents cover ``N`` landmarks (module docstring).

    Args:
        N: agents and landmarks (MPE2's name).
        local_ratio: weight of each agent's own collision penalty against the shared reward.
        max_cycles: steps per episode.
        continuous_actions: named components instead of move words.
        strict: raise :class:`lang_pz.error.ActionParseError` on unreadable text.

    Raises:
        InvalidKwargError: a value of the wrong type or out of range (named).
    """
    _common("mpe/simple_spread", api, max_cycles, continuous_actions, strict)
    check_int("N", N, 1, 20)
    check_number("local_ratio", local_ratio)
    if not 0 <= local_ratio <= 1:
        raise InvalidKwargError(f"local_ratio must be from 0 to 1, got {local_ratio!r}")
    from mpe2 import simple_spread_v3

    return _wrap(
        simple_spread_v3,
        SpreadAdapter(continuous_actions),
        api,
        strict,
        N=N,
        local_ratio=local_ratio,
        max_cycles=max_cycles,
        continuous_actions=continuous_actions,
    )


def make_simple_speaker_listener(
    api: Api = "parallel", *, max_cycles: int = 25, continuous_actions: bool = False, strict: bool = False
) -> Any:
    """simple_speaker_listener: the speaker names the goal landmark's colour, the listener goes there.

    Raises:
        InvalidKwargError: a value of the wrong type or out of range (named).
    """
    _common("mpe/simple_speaker_listener", api, max_cycles, continuous_actions, strict)
    from mpe2 import simple_speaker_listener_v4

    return _wrap(
        simple_speaker_listener_v4,
        SpeakerListenerAdapter(continuous_actions),
        api,
        strict,
        max_cycles=max_cycles,
        continuous_actions=continuous_actions,
    )


def make_simple_reference(
    api: Api = "parallel",
    *,
    local_ratio: float = 0.5,
    max_cycles: int = 25,
    continuous_actions: bool = False,
    strict: bool = False,
) -> Any:
    """simple_reference: two agents, each knowing the other's goal colour, move and tell each other.

    Raises:
        InvalidKwargError: a value of the wrong type or out of range (named).
    """
    _common("mpe/simple_reference", api, max_cycles, continuous_actions, strict)
    check_number("local_ratio", local_ratio)
    if not 0 <= local_ratio <= 1:
        raise InvalidKwargError(f"local_ratio must be from 0 to 1, got {local_ratio!r}")
    from mpe2 import simple_reference_v3

    return _wrap(
        simple_reference_v3,
        ReferenceAdapter(continuous_actions),
        api,
        strict,
        local_ratio=local_ratio,
        max_cycles=max_cycles,
        continuous_actions=continuous_actions,
    )
