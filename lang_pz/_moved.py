"""Names a package no longer exports: still importable from it for one release, with a warning.

A package's ``__all__`` lists its entry points; a helper that left it stays importable from the
module that defines it, and from the package through the package's ``__getattr__``, which warns
(:class:`DeprecationWarning`) with the one import path that remains::

    _MOVED = {"load_items": "lang_pz.tasks.datasets.load_items"}
    __getattr__ = moved_getattr(__name__, _MOVED)

The same ``__getattr__`` serves a package's lazy names (imported on first use, no warning):
``lazy={"CodeTaskEnv": "lang_pz.tasks.code_env"}``. ``tests/test_moved.py`` checks that the
repository imports no moved name.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["caller_stacklevel", "moved_getattr"]


def _resolve(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def moved_getattr(package: str, moved: Mapping[str, str], lazy: Mapping[str, str] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``.

    Args:
        package: the package's name (``__name__``).
        moved: old name -> the full dotted path it is imported from now (the defining module's, or a
            new name: ``{"Team": "lang_pz.bench.BenchTeam"}``); reading the old name warns.
        lazy: name -> the module it is imported from on first use, without a warning.
    """
    lazy = dict(lazy or {})

    def __getattr__(name: str) -> Any:
        if name in lazy:
            return getattr(importlib.import_module(lazy[name]), name)
        if name in moved:
            new = moved[name]
            module, _, new_name = new.rpartition(".")
            warnings.warn(
                f"{package}.{name} moved: use `from {module} import {new_name}` "
                f"({package} no longer exports it; the old name goes in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            return _resolve(new)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def caller_stacklevel() -> int:
    """The ``stacklevel`` of :func:`warnings.warn` that names the first caller outside lang_pz
    (and pydantic, whose validators call lang_pz's), counted from the function calling this one:
    a warning raised deep in a validator points at the user's line."""
    import pydantic

    skipped = tuple(os.path.dirname(p) + os.sep for p in (__file__, pydantic.__file__))
    frame = sys._getframe(2)  # the caller of the function that calls this one
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(skipped):
        frame = frame.f_back
        level += 1
    return level
