"""Methods by name: what ``config.method`` (``lang-pz train --method``) names, each a
:class:`MethodSpec`: the model of its config section and the :class:`~lang_pz.methods.Method`
class that runs it.

==============  ===============================================================================
``langmarl``    text policies (:class:`~lang_pz.methods.langmarl.LangMARL`, section ``langmarl:``)
``maskills``    a skill library (:class:`~lang_pz.methods.maskills.MASkills`, section ``maskills:``)
==============  ===============================================================================

:func:`register_method` adds one (usable as a class decorator): after it, ``method: NAME`` in a
config, ``--method NAME`` on the command line and ``train(config)`` run it, and its settings
live in the config's ``NAME:`` section, checked by its ``settings_model``. A config's
``imports:`` names the module that registers it, so a command line (and ``--resume``) finds it.
The built-in methods are registered by entry point (``module:Class``), as environments are
(:mod:`lang_pz.registration`), so a config can be checked without importing the methods.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from lang_pz.error import InvalidKwargError
from lang_pz.training.sections import LangMARLConfig, MASkillsConfig

if TYPE_CHECKING:
    from lang_pz.methods.base import Method


@dataclass(frozen=True)
class MethodSpec:
    """One registered method.

    Attributes:
        name: what ``config.method`` names.
        settings: the model of its config section (``None``: it has no settings of its own).
        entry_point: its :class:`~lang_pz.methods.Method` class, or ``"module:Class"``.
        description: a few words for help texts.
    """

    name: str
    settings: type[BaseModel] | None
    entry_point: type[Method[Any, Any]] | str
    description: str

    def load(self) -> type[Method[Any, Any]]:
        """The method class (its module imported for an entry point)."""
        if not isinstance(self.entry_point, str):
            return self.entry_point
        module, _, attr = self.entry_point.partition(":")
        cls: type[Method[Any, Any]] = getattr(importlib.import_module(module), attr)
        return cls


_METHODS: dict[str, MethodSpec] = {
    "langmarl": MethodSpec(
        "langmarl", LangMARLConfig, "lang_pz.methods.langmarl.method:LangMARL", "text policies (LangMARL)"
    ),
    "maskills": MethodSpec(
        "maskills", MASkillsConfig, "lang_pz.methods.maskills.method:MASkills", "a skill library (MASkills)"
    ),
}


def register_method(cls: type[Method[Any, Any]], description: str | None = None) -> type[Method[Any, Any]]:
    """Register ``cls`` under ``cls.name``, its section's model ``cls.settings_model`` (usable as a
    class decorator; ``description``: default, the first line of its docstring).

    Raises:
        InvalidKwargError: another class is registered under that name.
    """
    have = _METHODS.get(cls.name)
    if have is not None and have.entry_point not in (cls, f"{cls.__module__}:{cls.__qualname__}"):
        raise InvalidKwargError(f"method {cls.name!r} is already registered ({have.entry_point}); give yours another name")
    words = description or (cls.__doc__ or cls.name).strip().splitlines()[0].rstrip(".")
    _METHODS[cls.name] = MethodSpec(cls.name, cls.settings_model, cls, words)
    return cls


def method_spec(name: str) -> MethodSpec:
    """The method registered as ``name``.

    Raises:
        InvalidKwargError: no method has that name (the message lists the registered ones).
    """
    if name not in _METHODS:
        raise InvalidKwargError(f"unknown method {name!r}; registered: {', '.join(_METHODS)}")
    return _METHODS[name]


def method_class(name: str) -> type[Method[Any, Any]]:
    """The class of the method registered as ``name`` (:meth:`MethodSpec.load`).

    Raises:
        InvalidKwargError: no method has that name.
    """
    return method_spec(name).load()


def registered() -> list[str]:
    """The registered method names, in registration order."""
    return list(_METHODS)


def sections() -> dict[str, type[BaseModel]]:
    """method -> the model of its config section, for the methods that have one."""
    return {n: s.settings for n, s in _METHODS.items() if s.settings is not None}


def described() -> str:
    """``name (description), ...`` of the registered methods, for help texts."""
    return ", ".join(f"{n} ({s.description})" for n, s in _METHODS.items())
