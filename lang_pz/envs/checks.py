"""Keyword-argument checks shared by the environment entry points.

Each raises :class:`lang_pz.error.InvalidKwargError` naming the argument and the bad value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lang_pz.error import InvalidKwargError


def check_bool(name: str, value: Any) -> None:
    """``value`` must be a real bool (the string ``"false"`` is not)."""
    if not isinstance(value, bool):
        raise InvalidKwargError(f"{name} must be True or False, got {value!r}")


def check_int(name: str, value: Any, low: int, high: int | None = None, *, optional: bool = False) -> None:
    """``value`` must be an int in ``[low, high]`` (no upper bound if ``high`` is None),
    or ``None`` when ``optional``."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f">= {low}"
        either = "None or " if optional else ""
        raise InvalidKwargError(f"{name} must be {either}an integer {bound}, got {value!r}")


def check_number(name: str, value: Any) -> None:
    """``value`` must be a finite int or float (not a bool, a string, NaN or infinity).

    Raises:
        InvalidKwargError: names ``name`` and the value; a string that reads as infinity or NaN
            (``"inf"`` from ``--kw x=inf``) is called not finite.
    """
    if isinstance(value, str) and value.strip().lower().lstrip("+-.") in ("inf", "infinity", "nan"):
        raise InvalidKwargError(f"{name} must be a finite number, got {value!r}; give a real value such as 0.1")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidKwargError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise InvalidKwargError(f"{name} must be a finite number, got {value!r}; give a real value such as 0.1")


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    """``value`` must be one of ``allowed``."""
    if value not in allowed:
        raise InvalidKwargError(f"{name} must be one of {list(allowed)}, got {value!r}")


def check_api(env_id: str, api: str, allowed: Sequence[str]) -> None:
    """``api`` must be one the environment supports."""
    if api not in allowed:
        raise InvalidKwargError(f"{env_id} supports api={list(allowed)}, got api={api!r}")
