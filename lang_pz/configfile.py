"""Reading YAML config files (``lang-pz train --config``, ``lang-pz bench --config``) with errors
that name the file and the line.

:func:`load_yaml` turns a malformed file into ``FILE:LINE:COLUMN: what YAML expected``;
:func:`where` gives ``FILE:LINE`` of a key (``where(path, "envs", 0, "kwarg")``) for errors
about what a well-formed file holds, such as an unknown key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from lang_pz.error import InvalidKwargError

__all__ = ["ConfigFileError", "load_yaml", "safe_load", "where"]


class ConfigFileError(InvalidKwargError, ValueError):
    """A config file that cannot be read or parsed, or that holds something invalid; the message
    starts with ``FILE`` or ``FILE:LINE``. An :class:`~lang_pz.error.InvalidKwargError` (what
    a bad setting raised before) and a ``ValueError``."""


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that also reads exponent floats without a dot (``1e3``, ``-2e-1``) as
    numbers, as YAML 1.2 and JSON do (YAML 1.1, PyYAML's, reads them as strings)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, except that ``1e3`` is the float 1000.0, not the string ``"1e3"``
    (``.inf`` and ``.nan`` stay YAML's infinity and NaN; ``inf`` stays a string).

    Raises:
        yaml.YAMLError: ``text`` is not valid YAML.
    """
    return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: safe


def load_yaml(path: str | Path) -> Any:
    """The YAML (or JSON) document in ``path``; an empty file is ``None``.

    Raises:
        ConfigFileError: the file cannot be read (names it and why) or is not valid YAML
            (``FILE:LINE:COLUMN: problem``, lines and columns from 1, as YAML reports them).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigFileError(f"{p}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"{p}: cannot be read: {exc}") from None
    try:
        return safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigFileError(f"{p}:{_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """``LINE:COLUMN: problem (context)`` of a YAML error, or its text when it has no position."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    what = f"{problem} ({context})" if context else str(problem)
    if mark is None:
        return f" {what}"
    return f"{mark.line + 1}:{mark.column + 1}: {what}"


def where(path: str | Path, *keys: str | int) -> str:
    """``FILE:LINE`` of the node at ``keys`` (mapping keys and list indices; the line of the last
    key itself when it is a mapping key), or ``FILE`` when the file cannot be read or has no such
    node. Never raises."""
    try:
        node: Any = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return str(path)
    line = None
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            hit = next(((k, v) for k, v in node.value if k.value == str(key)), None)
            if hit is None:
                return str(path)
            line, node = hit[0].start_mark.line, hit[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line
        else:
            return str(path)
    if line is None and node is not None:
        line = node.start_mark.line
    return f"{path}:{line + 1}" if line is not None else str(path)
