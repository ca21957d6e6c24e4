"""The env of each phase of a run, and the check that the phases play disjoint episodes.

A run plays three *phases*: ``train`` (its training seeds), ``validation`` (the held-out seeds
that gate each update) and ``test`` (the held-out measure). A result is only held out if the
validation and test episodes are not training episodes: with one ``env_kwargs`` for every
phase, the task envs drew every phase's items from one split (9 of 20 HumanEval test items were
training items), and Overcooked, being deterministic, played the same episode for every seed.

How a run uses this module (the config field ``phase_env_kwargs`` of
:class:`~lang_pz.training.config.TrainConfig`, a ``dict[Literal['train', 'validation',
'test'], dict]`` of per-phase keyword arguments, default empty):

1. ``defaults = default_phase_kwargs(config.env_id)``: what the env itself needs to give each
   phase its own episodes, ``{phase: {"split": phase}}`` for every env whose make function takes
   a ``split`` (the task envs: disjoint item sets; Overcooked: disjoint start states); ``{}``
   for the others.
2. ``kwargs[phase] = phase_env_kwargs(config.env_kwargs, config.phase_env_kwargs, phase,
   defaults=defaults)``: the phase's ``lang_pz.make`` arguments. Precedence, lowest first: the
   defaults, ``env_kwargs`` (shared by all phases), ``phase_env_kwargs[phase]``.
3. ``check_phases(config.env_id, kwargs, {"train": all training seeds, "validation": ...,
   "test": ...})`` at the start of the run: it resets one env of each phase on each of its seeds,
   reads the item each plays (:func:`items_played`) and raises if two phases share one
   (:func:`check_disjoint`). It returns the items, to record in the run.

Pure functions: nothing here reads a config object or imports the training loop.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from lang_pz.error import InvalidKwargError

__all__ = [
    "FIRST_OBSERVATION",
    "PHASES",
    "Phase",
    "check_disjoint",
    "check_phases",
    "default_phase_kwargs",
    "items_played",
    "phase_env_kwargs",
]

Phase = Literal["train", "validation", "test"]
#: The phases of a run, in the order it plays them.
PHASES: tuple[Phase, Phase, Phase] = ("train", "validation", "test")
_FIX = (
    "give each phase its own episodes: leave 'split' (and 'index') out of env_kwargs so each phase "
    "gets split=<phase> (default_phase_kwargs), or set phase_env_kwargs={'train': {...}, "
    "'validation': {...}, 'test': {...}} with disjoint splits or data files"
)


def _check_phase(phase: Any, what: str) -> None:
    if phase not in PHASES:
        hint = " (did you mean 'validation'?)" if phase in ("val", "valid", "dev") else ""
        raise InvalidKwargError(f"{what} must be one of {list(PHASES)}, got {phase!r}{hint}")


def phase_env_kwargs(
    env_kwargs: Mapping[str, Any],
    per_phase: Mapping[str, Mapping[str, Any]] | None,
    phase: str,
    *,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``lang_pz.make`` keyword arguments of one phase of a run.

    Args:
        env_kwargs: the config's ``env_kwargs`` (every phase).
        per_phase: the config's ``phase_env_kwargs``: phase -> keyword arguments that replace
            ``env_kwargs``' for that phase only (e.g. ``{"test": {"split": "test", "data_dir":
            "/data/full"}}``); ``None`` or ``{}``: none.
        phase: ``"train"``, ``"validation"`` or ``"test"``.
        defaults: phase -> keyword arguments used where neither ``env_kwargs`` nor
            ``per_phase`` sets the key (:func:`default_phase_kwargs`).

    Returns:
        ``{**defaults[phase], **env_kwargs, **per_phase[phase]}`` (a new dict).

    Raises:
        InvalidKwargError: ``phase`` or a key of ``per_phase`` / ``defaults`` is not a phase, or
            a value is not a mapping with ``str`` keys (the message names it).
    """
    _check_phase(phase, "phase")
    layers: list[Mapping[str, Any]] = []
    for name, table in (("defaults", defaults), ("phase_env_kwargs", per_phase)):
        if table is None:
            layers.append({})
            continue
        if not isinstance(table, Mapping):
            raise InvalidKwargError(f"{name} must be a dict of phase -> keyword arguments, got {table!r}")
        for key, value in table.items():
            _check_phase(key, f"a key of {name}")
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                raise InvalidKwargError(f"{name}[{key!r}] must be a dict of keyword arguments, got {value!r}")
        layers.append(table.get(phase, {}))
    if not isinstance(env_kwargs, Mapping):
        raise InvalidKwargError(f"env_kwargs must be a dict of keyword arguments, got {env_kwargs!r}")
    return {**layers[0], **env_kwargs, **layers[1]}


def default_phase_kwargs(env_id: str) -> dict[str, dict[str, Any]]:
    """What ``env_id`` needs so that each phase plays its own episodes, without the user writing it.

    An env joins by taking a ``split`` keyword that accepts ``"train"``, ``"validation"`` and
    ``"test"`` and gives disjoint episodes for them (the task envs: item sets, see
    :func:`lang_pz.tasks.datasets.load_items`; Overcooked: start states, see
    :mod:`lang_pz.envs.overcooked.starts`).

    Returns:
        ``{"train": {"split": "train"}, "validation": {"split": "validation"}, "test":
        {"split": "test"}}`` for such an env; ``{}`` for others (their seeds alone must make the
        episodes differ: :func:`check_phases` says if they do not).

    Raises:
        UnknownEnvironmentError: ``env_id`` is not registered.
    """
    from lang_pz.registration import spec

    params = inspect.signature(spec(env_id).load()).parameters
    if "split" not in params:
        return {}
    return {phase: {"split": phase} for phase in PHASES}


#: How :func:`items_played` names an episode of an env without an ``item_id``.
FIRST_OBSERVATION = "first observation "


def _first_observations(env: Any, reset: Any) -> str:
    """A digest of what the agents first observe (for envs without an ``item_id``)."""
    if isinstance(reset, tuple):  # parallel / gymnasium: (observations, infos)
        seen: Any = reset[0]
    else:  # AEC
        seen = {a: env.observe(a) for a in env.agents}
    text = json.dumps(seen, sort_keys=True, default=repr)
    return FIRST_OBSERVATION + hashlib.sha256(text.encode()).hexdigest()[:12]


def items_played(env_id: str, env_kwargs: Mapping[str, Any], seeds: Sequence[int]) -> list[str]:
    """The item (episode identity) each of ``seeds`` plays in ``lang_pz.make(env_id, **env_kwargs)``.

    One env is made and reset once per seed. The item is the unwrapped env's ``item_id``
    attribute where it has one (task envs: the benchmark item's id, e.g. ``HumanEval/12``;
    Overcooked: the start state, e.g. ``cramped_room: player_0 (1,2) up, player_1 (3,1) up``),
    else a digest of the agents' first observations (two seeds with equal digests start
    identically).

    Returns:
        One id per seed, in order.

    Raises:
        what ``lang_pz.make`` raises for a bad ``env_id`` or ``env_kwargs``.
    """
    import lang_pz

    env = lang_pz.make(env_id, **env_kwargs)
    try:
        out = []
        for seed in seeds:
            reset = env.reset(seed=int(seed))
            item = getattr(env.unwrapped, "item_id", None)
            out.append(str(item) if item is not None else _first_observations(env, reset))
        return out
    finally:
        env.close()


def check_disjoint(train_items: Sequence[str], val_items: Sequence[str], test_items: Sequence[str]) -> None:
    """Raise if an item is played in two phases (repeats within one phase are allowed).

    Args:
        train_items, val_items, test_items: the items the phases play (:func:`items_played`);
            an empty list for a phase without seeds.

    Raises:
        InvalidKwargError: the phases share items; the message names each pair of phases, how
            many items they share and the first of them, and the fix.
    """
    sets = dict(zip(PHASES, (set(train_items), set(val_items), set(test_items))))
    clashes = []
    for i, a in enumerate(PHASES):
        for b in PHASES[i + 1 :]:
            shared = sorted(sets[a] & sets[b])
            if shared:
                shown = ", ".join(repr(x) for x in shared[:5]) + (", ..." if len(shared) > 5 else "")
                clashes.append(f"{a} and {b} share {len(shared)} of their items ({shown})")
    if clashes:
        raise InvalidKwargError("the phases of this run are not held out: " + "; ".join(clashes) + f". To fix it, {_FIX}")


def check_phases(
    env_id: str,
    kwargs_by_phase: Mapping[str, Mapping[str, Any]],
    seeds_by_phase: Mapping[str, Sequence[int]],
) -> dict[str, list[str]]:
    """The items each phase plays, checked disjoint: :func:`items_played` per phase, then
    :func:`check_disjoint`.

    An env that names its items (``item_id``: the task envs, Overcooked) must play disjoint
    ones, else this raises. For other envs only first observations can be compared, and an
    equal first observation does not make an equal episode when the randomness comes later (an
    opponent's or partner's seeded moves, random transitions): there a shared first observation
    is a :class:`UserWarning` (a deterministic env would replay training episodes), not an error.

    Args:
        env_id: the run's env.
        kwargs_by_phase: phase -> its ``lang_pz.make`` arguments (:func:`phase_env_kwargs`).
        seeds_by_phase: phase -> its seeds (all of a run's training seeds, its validation and
            test seeds); a phase missing or without seeds plays nothing.

    Returns:
        phase -> the items its seeds play, in seed order (worth recording with the run).

    Raises:
        InvalidKwargError: a key is not a phase, a phase with seeds has no kwargs, or the phases
            share items the env names (:func:`check_disjoint`).
    """
    for phase in (*kwargs_by_phase, *seeds_by_phase):
        _check_phase(phase, "a phase")
    played: dict[str, list[str]] = {}
    for phase in PHASES:
        seeds = list(seeds_by_phase.get(phase, []))
        if seeds and phase not in kwargs_by_phase:
            raise InvalidKwargError(f"phase {phase!r} has seeds but no env kwargs: give kwargs_by_phase[{phase!r}]")
        played[phase] = items_played(env_id, kwargs_by_phase[phase], seeds) if seeds else []
    try:
        check_disjoint(played["train"], played["validation"], played["test"])
    except InvalidKwargError as exc:
        if not any(item.startswith(FIRST_OBSERVATION) for items in played.values() for item in items):
            raise
        warnings.warn(
            f"{env_id}: phases start from identical first observations; if the env is deterministic from "
            f"there, validation and test replay training episodes. {exc}",
            UserWarning,
            stacklevel=2,
        )
    return played
