"""The environment registry: ``register`` an id, ``make`` it, list it with ``registry``.

Modelled on ``gymnasium.envs.registration``: ids are ``family/name-vN``; ``make`` suggests
close ids for a typo, checks keyword arguments against the entry point's signature, and
turns a missing optional dependency into an error that names the extra to install.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lang_pz.error import (
    DependencyNotInstalled,
    InvalidKwargError,
    UnknownEnvironmentError,
)

Api = Literal["aec", "parallel", "gymnasium"]


@dataclass(frozen=True)
class EnvSpec:
    """A registered language environment.

    Attributes:
        id: ``family/name-vN``.
        entry_point: ``"module:function"``; the function takes ``api`` and keyword
            arguments and returns the environment.
        description: one line, shown by ``lang-pz envs``.
        apis: the APIs it can be made in; the first is the default.
        extra: the ``lang_pz`` extra that installs its optional dependencies, if any.
        kwargs: default keyword arguments.
        test_kwargs: keyword arguments that make compliance tests fast (e.g. fewer cycles).
    """

    id: str
    entry_point: str
    description: str
    apis: tuple[Api, ...] = ("parallel", "aec")
    extra: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    test_kwargs: dict[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., Any]:
        """Import the entry point.

        Raises:
            DependencyNotInstalled: the entry point's module needs a missing package.
        """
        module, _, attr = self.entry_point.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            hint = f"pip install 'lang_pz[{self.extra}]'" if self.extra else "reinstall lang_pz"
            raise DependencyNotInstalled(
                f"{self.id} needs {exc.name or 'a missing package'}, which is not installed: {hint}"
            ) from exc


#: Every registered environment, by id.
registry: dict[str, EnvSpec] = {}

#: Families whose every name is an environment (``openspiel/<game>``): prefix -> the spec
#: template; ``make("openspiel/liars_dice")`` calls its entry point with ``game="liars_dice"``.
families: dict[str, EnvSpec] = {}

#: The families whose names may end in ``-v0`` (lang_pz's version of the generic adapter):
#: ``openspiel/liars_dice-v0`` is ``openspiel/liars_dice``. Other families' names keep their
#: own versions (TextArena's ``textarena/Chess-v0`` is TextArena's id ``Chess-v0``).
versioned_families: set[str] = set()

_VERSION = re.compile(r"^(?P<name>.+)-v(?P<version>\d+)$")


def register(spec: EnvSpec) -> None:
    """Add ``spec`` to :data:`registry`.

    Raises:
        ValueError: the id is already registered.
    """
    if spec.id in registry:
        raise ValueError(f"environment id {spec.id!r} is already registered")
    registry[spec.id] = spec
    _mirror(spec)


def register_family(template: EnvSpec, *, versioned: bool = False) -> None:
    """Make every ``<template.id>/<name>`` an environment: its entry point gets ``game=<name>``
    (``template.id`` is the family, e.g. ``"openspiel"``). Such ids are not listed in
    :data:`registry`; :func:`spec` builds theirs on demand.

    Args:
        template: the family's spec (its ``id`` is the family prefix).
        versioned: the names are lang_pz's, version ``-v0`` (``<family>/<name>-v0`` is
            ``<family>/<name>``; another version is refused); ``False``: a name is passed whole.

    Raises:
        ValueError: the family is already registered.
    """
    if template.id in families:
        raise ValueError(f"environment family {template.id!r} is already registered")
    families[template.id] = template
    if versioned:
        versioned_families.add(template.id)


def _mirror(s: EnvSpec) -> None:
    """Register ``s`` in the registries users already know, with lang_pz's kwargs checks:
    ``gymnasium.make(id)`` for a Gymnasium id, ``pettingzoo.make("aec"/"parallel", id)`` for the
    others (PettingZoo >= 1.27 has a registry; older ones have none, and nothing is done)."""
    import functools

    if "gymnasium" in s.apis:
        import gymnasium

        if s.id not in gymnasium.registry:
            gymnasium.register(id=s.id, entry_point=functools.partial(make, s.id, api="gymnasium"))
    try:
        from pettingzoo import register as pz_register
    except ImportError:
        return
    for api in ("aec", "parallel"):
        # An API the env lacks is registered too, as an error that says how to get the env: PettingZoo's
        # own lookup would say "Namespace 'openspiel' not found" or list every id it has.
        creator = make if api in s.apis else _wrong_api
        pz_register(api, s.id, functools.partial(creator, s.id, api=api))


def _wrong_api(env_id: str, *, api: str, **kwargs: Any) -> Any:
    """``pettingzoo.make(api, env_id)`` for an env without that API: an error naming the ones it has.

    Raises:
        InvalidKwargError: always (:func:`api_error`).
    """
    raise api_error(env_id, api, registry[env_id].apis)


def api_error(env_id: str, api: str, apis: tuple[str, ...]) -> InvalidKwargError:
    """The error for ``env_id`` asked for in an ``api`` it lacks: the APIs it has and how to make it."""
    if apis == ("gymnasium",):
        how = f"it is single-agent: gymnasium.make({env_id!r}) or lang_pz.make({env_id!r})"
    elif api == "parallel":
        how = (
            f"it is turn-based: pettingzoo.make('aec', {env_id!r}) or lang_pz.make({env_id!r}, api='aec'); for a "
            "ParallelEnv in which only the agent to move acts, wrap that in "
            "pettingzoo.utils.conversions.turn_based_aec_to_parallel(env)"
        )
    else:
        how = f"pettingzoo.make({apis[0]!r}, {env_id!r}) or lang_pz.make({env_id!r}, api={apis[0]!r})"
    return InvalidKwargError(f"{env_id} has no {api!r} API (it supports api={list(apis)}); {how}")


def spec(env_id: str) -> EnvSpec:
    """The spec of ``env_id``.

    Raises:
        UnknownEnvironmentError: not registered; the message suggests close ids.
    """
    if not isinstance(env_id, str):
        raise UnknownEnvironmentError(
            f"an environment id is a str such as 'butterfly/pistonball-v0', got {env_id!r}; `lang-pz envs` lists them"
        )
    if env_id in registry:
        return registry[env_id]
    latest = _latest_version(env_id)
    if latest is not None:  # no version given: the highest registered one, as gymnasium.make and pettingzoo.make do
        return registry[latest]
    family, sep, name = env_id.partition("/")
    if sep and name and family in families:
        template = families[family]
        versioned = _VERSION.match(name) if family in versioned_families else None
        if versioned and versioned["version"] != "0":
            raise UnknownEnvironmentError(
                f"no environment {env_id!r}: the {family}/<name> family has version -v0 only; "
                f"make {family}/{versioned['name']}-v0 or {family}/{versioned['name']}"
            )
        name = versioned["name"] if versioned else name
        return EnvSpec(
            id=env_id,
            entry_point=template.entry_point,
            description=template.description,
            apis=template.apis,
            extra=template.extra,
            kwargs={**template.kwargs, "game": name},
        )
    close = _close_ids(env_id)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownEnvironmentError(f"no environment {env_id!r} is registered.{hint} `lang-pz envs` lists them.")


def canonical_id(env_id: str) -> str:
    """The registered id ``env_id`` names (``"classic/tictactoe"`` -> ``"classic/tictactoe-v0"``,
    ``"openspiel/liars_dice-v0"`` as it is), or ``env_id`` itself when it names none. Never raises:
    for lookups keyed by registered ids (zero-sum games, env families)."""
    try:
        return spec(env_id).id
    except UnknownEnvironmentError:
        return env_id


def _latest_version(env_id: str) -> str | None:
    """The registered ``env_id-vN`` with the highest ``N``, for an ``env_id`` without a version."""
    if _VERSION.match(env_id):
        return None
    found = [(int(m["version"]), i) for i in registry if (m := _VERSION.match(i)) and m["name"] == env_id]
    return max(found)[1] if found else None


def _close_ids(env_id: str) -> list[str]:
    """Registered ids close to ``env_id`` (case-insensitive), or whose ``name-vN`` is close to its
    last part (for a missing family); a cutoff of 0.7 keeps unrelated ids out of the hint."""
    query = env_id.lower()
    close = difflib.get_close_matches(query, list(registry), n=3, cutoff=0.7)
    if close:
        return close
    names: dict[str, list[str]] = {}
    for i in registry:  # several families may share a name (classic/ and textarena/tictactoe-v0)
        names.setdefault(i.split("/")[-1], []).append(i)
    close_names = difflib.get_close_matches(query.split("/")[-1], list(names), n=3, cutoff=0.7)
    return [i for n in close_names for i in names[n]][:3]


def make(env_id: str, *, api: Api | None = None, **kwargs: Any) -> Any:
    """Make a registered language environment.

    Args:
        env_id: a registered id, e.g. ``"butterfly/pistonball-v0"``; without its version
            (``"butterfly/pistonball"``) the highest registered version, as in ``gymnasium.make``;
            or a name of a family (``"openspiel/liars_dice"``, see :func:`register_family`).
        api: ``"parallel"``, ``"aec"`` or ``"gymnasium"``; default: the env's first API.
        **kwargs: passed to the environment (see ``lang-pz envs --verbose`` or its docstring).

    Returns:
        A PettingZoo ``ParallelEnv`` / ``AECEnv`` or a Gymnasium ``Env`` whose observations
        are ``{"text": str}`` and whose actions are ``str``.

    Raises:
        UnknownEnvironmentError: unknown ``env_id`` (with "did you mean").
        InvalidKwargError: an unknown keyword argument (with "did you mean") or an API the
            environment does not support.
        DependencyNotInstalled: an optional dependency is missing (names the extra).
    """
    s = spec(env_id)
    chosen = api or s.apis[0]
    if chosen not in s.apis:
        raise api_error(s.id, str(chosen), s.apis)
    fn = s.load()
    params = inspect.signature(fn).parameters
    valid = [p for p in params if p != "api" and params[p].kind is not inspect.Parameter.VAR_KEYWORD]
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())  # checks its own
    for key in kwargs:
        if key not in valid and not open_ended:
            close = difflib.get_close_matches(key, valid, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InvalidKwargError(f"{env_id} got an unexpected keyword argument {key!r}.{hint} Valid: {', '.join(valid)}")
    return fn(api=chosen, **{**s.kwargs, **kwargs})


def kwargs_of(env_id: str) -> dict[str, Any]:
    """The keyword arguments ``make(env_id)`` accepts, with their defaults."""
    fn = spec(env_id).load()
    return {
        name: (p.default if p.default is not inspect.Parameter.empty else None)
        for name, p in inspect.signature(fn).parameters.items()
        if name != "api" and p.kind is not inspect.Parameter.VAR_KEYWORD
    }
