"""``lang-pz train``'s settings from the command line: ``--set KEY=VALUE`` pairs, laid over a
config file's, and the notes about method settings given flat (deprecated: a method's setting
is written in its section, ``langmarl: {critic_mode: ...}`` or ``--set langmarl.critic_mode=...``;
:mod:`lang_pz.training.layout`)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from lang_pz.cli.common import given_twice, yaml_value
from lang_pz.configfile import where

__all__ = ["flat_notes", "merge_set", "set_fields"]


def flat_notes(fields: Mapping[str, Any], run_method: str, config: Path | None = None, flag: bool = False) -> list[str]:
    """One note per method setting given flat in a config file's ``fields`` (``config``: that
    file, for its line numbers), or with ``flag=True`` in ``--set`` pairs (:func:`set_fields`):
    the text of the DeprecationWarning ``TrainConfig`` gives (which the command line keeps quiet,
    saying it once here instead)."""
    from lang_pz.training.config import TrainConfig
    from lang_pz.training.layout import flat_key_note, flat_method_keys

    flat = flat_method_keys({**fields, "method": run_method}, TrainConfig.model_fields)
    notes = []
    for key, method in flat.items():
        place = f"--set {key}={fields[key]!r}" if flag else where(config, key) if config is not None else key
        notes.append(f"{place}: {flat_key_note(key, method, run_method)}")
    return notes


def _field(key: str) -> Any:
    """The pydantic field of a setting name (flat or ``method.name``), or ``None``."""
    from lang_pz.training.config import TrainConfig, setting_names
    from lang_pz.training.registry import sections

    where = setting_names().get(key)
    if where is None:
        return None
    return (sections()[where] if where else TrainConfig).model_fields[key.rpartition(".")[2]]


def set_fields(pairs: list[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs as config settings (``KEY`` common, or a method's: flat or
    ``maskills.KEY``): values are YAML, except that a text field takes the value as written (``No``,
    ``Stay: wait`` stay text) and YAML's null (``null``, ``~``, empty) unsets an optional text field.

    Raises:
        ValueError: a pair without ``=``, an unknown field (with a did-you-mean), a value that is
            not valid YAML, or a key given twice (``--set k=a --set k=b``, as ``--kw`` refuses it:
            :func:`lang_pz.cli.common.given_twice`).
    """
    from lang_pz.training.config import setting_names

    out: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set needs KEY=VALUE, got {pair!r} (e.g. --set {pair}=VALUE)")
        if key.strip() in seen:
            raise ValueError(f"--set {given_twice(key.strip(), seen[key.strip()], pair)}")
        seen[key.strip()] = value
        field = _field(key)
        if field is None:
            close = difflib.get_close_matches(key, list(setting_names()), n=1)
            raise ValueError(
                f"--set {pair!r}: {key!r} is not a TrainConfig field"
                f"{f'; did you mean {close[0]!r}' if close else ''} (see --help)"
            )
        annotation = str(field.annotation)
        if annotation == "str | None" and value.strip() in ("", "~", "null", "Null", "NULL"):
            parsed = None
        elif annotation in ("<class 'str'>", "str | None"):
            parsed = value
        else:
            try:
                parsed = yaml_value(value, f"--set {key}")
            except typer.BadParameter as exc:
                raise ValueError(exc.message) from None
        method, dot, name = key.rpartition(".")
        if dot:
            out.setdefault(method, {})[name] = parsed
        else:
            out[key] = parsed
    return out


def merge_set(fields: dict[str, Any], settings: dict[str, Any], config: Path | None = None) -> list[str]:
    """Lay ``--set`` settings (from :func:`set_fields`) over ``fields`` (a config file's), in place.

    A method's setting joins that method's section when the file has one. ``--set METHOD.KEY``
    where the file gives ``KEY`` flat (``examples/demo.yaml``'s ``critic_mode:``) replaces the
    flat value: the command line wins, and one note per such key says so.

    Returns:
        The notes (to print once each).
    """
    from lang_pz.training.config import setting_names
    from lang_pz.training.registry import sections

    names, methods = setting_names(), sections()
    notes = []
    where = f" of {config}" if config is not None else ""
    for key, value in settings.items():
        section = fields.get(key if key in methods else names[key])
        if key in methods:
            for name in value:
                if name in fields:  # given flat in the file, now in the section: the command line wins
                    old = fields.pop(name)
                    notes.append(f"--set {key}.{name}={value[name]!r} replaces {name}: {old!r}{where}")
            fields[key] = {**section, **value} if isinstance(section, dict) else value
        elif names[key] and isinstance(section, dict):
            section[key] = value
        else:
            fields[key] = value
    return notes
