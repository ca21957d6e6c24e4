"""``make_env`` and the registered entry points of ``overcooked/<layout>-v0``."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from lang_pz.envs.checks import (
    check_api,
    check_bool,
    check_choice,
    check_int,
    check_number,
)
from lang_pz.envs.overcooked.core import LAYOUTS, OvercookedParallelEnv
from lang_pz.envs.overcooked.starts import START_SPLITS
from lang_pz.envs.overcooked.text import OvercookedAdapter
from lang_pz.error import InvalidKwargError
from lang_pz.registration import Api


def make_env(
    api: Api = "parallel",
    *,
    layout: str = "cramped_room",
    horizon: int = 400,
    actions: str = "primitive",
    shaping_factor: float = 0.0,
    strict: bool = False,
    render_mode: str | None = None,
    split: str | None = None,
) -> Any:
    """Make language Overcooked (see the module docstring for agents, spaces and rewards).

    Args:
        api: ``"parallel"`` or ``"aec"``.
        layout: a key of :data:`LAYOUTS` (fixed by the registered id).
        horizon: episode length in ticks (>= 1; the literature uses 400).
        actions: ``"primitive"`` (one tick per step) or ``"macro"`` (macro-actions run by
            overcooked_ai's planners; not to be confused with a MASkills skill library).
            ``"skills"``, its former name, is read as ``"macro"`` with a DeprecationWarning.
        shaping_factor: weight (>= 0) of the shaped reward; 1.0 gives the paper's units.
        strict: raise :class:`lang_pz.error.ActionParseError` on unreadable text.
        render_mode: ``None`` or ``"ansi"``.
        split: ``None`` (default): the layout's fixed start state, as in overcooked_ai and
            the literature; every seed plays the same game. ``"train"``, ``"validation"``,
            ``"test"``: the reset seed picks the start (both players' cells and facings) from
            that part of a disjoint partition; ``"all"``: from every start
            (:mod:`lang_pz.envs.overcooked.starts`). A training run sets it per phase
            (:func:`lang_pz.training.phases.default_phase_kwargs`).

    Raises:
        InvalidKwargError: a bad value (named in the message, with the valid ones).
        DependencyNotInstalled: overcooked-ai is missing; says how to install.
    """
    from pettingzoo.utils.conversions import parallel_to_aec

    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

    env_id = f"overcooked/{layout}-v0"
    check_api(env_id, api, ("parallel", "aec"))
    check_choice("layout", layout, tuple(LAYOUTS))
    check_int("horizon", horizon, 1)
    if actions == "skills":
        warnings.warn(
            "Overcooked's actions='skills' is now actions='macro' (a MASkills skill is something else); "
            "'skills' will stop working in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        actions = "macro"
    check_choice("actions", actions, ("primitive", "macro"))
    check_number("shaping_factor", shaping_factor)
    if shaping_factor < 0:
        raise InvalidKwargError(f"shaping_factor must be >= 0 (0 = sparse reward only), got {shaping_factor!r}")
    check_bool("strict", strict)
    check_choice("render_mode", render_mode, (None, "ansi"))
    check_choice("split", split, (None, *START_SPLITS))
    env = OvercookedParallelEnv(
        layout, horizon=horizon, actions=actions, shaping_factor=shaping_factor, render_mode=render_mode, split=split
    )
    adapter = OvercookedAdapter(actions)
    if api == "aec":
        return LanguageAECWrapper(parallel_to_aec(env), adapter, strict=strict)
    return LanguageParallelWrapper(env, adapter, strict=strict)


def _entry_point(layout: str) -> Callable[..., Any]:
    """``make_env`` with ``layout`` fixed: the registered entry point of one id."""

    def make(api: Api = "parallel", **kwargs: Any) -> Any:
        return make_env(api, layout=layout, **kwargs)

    sig = inspect.signature(make_env)
    make.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "layout"]
    )
    make.__name__ = make.__qualname__ = f"make_{layout}"
    make.__doc__ = f"Make language Overcooked on {layout} (see :func:`make_env`)."
    return make


make_cramped_room = _entry_point("cramped_room")
make_asymmetric_advantages = _entry_point("asymmetric_advantages")
make_coordination_ring = _entry_point("coordination_ring")
make_forced_coordination = _entry_point("forced_coordination")
make_counter_circuit = _entry_point("counter_circuit")
