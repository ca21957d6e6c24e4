"""Adapters registered once for a whole family of third-party environments, found by the raw env's name.

A language wrapper given no adapter (``LanguageParallelWrapper(pursuit_v5.parallel_env())``) asks
:func:`adapter_for` for one. It looks up the raw environment's keys (:func:`keys_of`, most specific
first): its ``metadata["name"]`` (``pursuit_v5``), that name without its version (``pursuit``),
and the module of its class and that module's parents (``mpe2.simple_tag.simple_tag``,
``mpe2.simple_tag``, ``mpe2``). The first key registered with :func:`register_adapter` gives the
adapter; otherwise it is the generic :class:`lang_pz.text.adapter.LanguageAdapter`.

Registered here (entry points are import strings: nothing is imported until an env of the family
is wrapped):

=========================  ================================================================
``mpe2``                   every MPE2 scenario (:mod:`lang_pz.envs.mpe.family`)
``knights_archers_zombies``  KAZ's vector observation (:mod:`lang_pz.envs.kaz`)
``pursuit``                SISL pursuit (:mod:`lang_pz.envs.sisl`)
``multiwalker``            SISL multiwalker (:mod:`lang_pz.envs.sisl`)
``waterworld``             SISL waterworld (PettingZoo <= 1.24; :mod:`lang_pz.envs.sisl`)
=========================  ================================================================
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from lang_pz.error import InvalidKwargError
from lang_pz.text.adapter import LanguageAdapter

#: key -> factory: ``"module:attribute"`` (imported on first use) or a callable; it takes the
#: wrapped environment and returns its adapter.
ADAPTERS: dict[str, str | Callable[[Any], LanguageAdapter]] = {}
_VERSION = re.compile(r"_v\d+$")


def register_adapter(key: str, factory: str | Callable[[Any], LanguageAdapter], *, replace: bool = False) -> None:
    """Give the environments whose :func:`keys_of` include ``key`` the adapter ``factory(env)`` makes.

    Args:
        key: a metadata name with or without its version (``"pursuit"``), or a module prefix
            (``"mpe2"``).
        factory: ``"module:attribute"`` (imported when first used) or a callable taking the env.
        replace: replace an adapter registered under ``key`` already.

    Raises:
        InvalidKwargError: ``key`` is empty or registered already (and not ``replace``), or a string
            ``factory`` is not of the form ``"module:attribute"``.
    """
    if not isinstance(key, str) or not key:
        raise InvalidKwargError(f"an adapter key is a non-empty str such as 'pursuit' or 'mpe2', got {key!r}")
    if key in ADAPTERS and not replace:
        raise InvalidKwargError(f"an adapter is registered for {key!r} already ({ADAPTERS[key]!r}); pass replace=True")
    if isinstance(factory, str) and factory.count(":") != 1:
        raise InvalidKwargError(f"an adapter factory string is 'module:attribute', got {factory!r}")
    ADAPTERS[key] = factory


def keys_of(env: Any) -> list[str]:
    """The registry keys of ``env``'s raw environment, most specific first (module docstring)."""
    raw = getattr(env, "unwrapped", env)
    keys: list[str] = []
    name = (getattr(raw, "metadata", None) or {}).get("name")
    if isinstance(name, str) and name:
        keys += [name, _VERSION.sub("", name)]
    module = type(raw).__module__ or ""
    parts = module.split(".")
    keys += [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    return list(dict.fromkeys(k for k in keys if k))


def _load(factory: str | Callable[[Any], LanguageAdapter]) -> Callable[[Any], LanguageAdapter]:
    if callable(factory):
        return factory
    module, _, attr = factory.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def adapter_for(env: Any) -> LanguageAdapter:
    """The adapter registered for ``env``'s family (:func:`keys_of`), else the generic one."""
    for key in keys_of(env):
        factory = ADAPTERS.get(key)
        if factory is not None:
            return _load(factory)(env)
    return LanguageAdapter()


register_adapter("mpe2", "lang_pz.envs.mpe.family:family_adapter")
register_adapter("knights_archers_zombies", "lang_pz.envs.kaz:KAZAdapter.for_env")
register_adapter("pursuit", "lang_pz.envs.sisl:PursuitAdapter.for_env")
register_adapter("multiwalker", "lang_pz.envs.sisl:MultiwalkerAdapter.for_env")
register_adapter("waterworld", "lang_pz.envs.sisl:WaterworldAdapter.for_env")
