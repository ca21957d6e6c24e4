"""Continuous actions of several numbers as text an LLM can write: named components.

A Box action of ``n`` numbers gets one name per number (the environment's own where it has them,
e.g. MPE's ``left``, ``right``, ``down``, ``up``; ``a0`` ... otherwise) and is written as
``name=value`` pairs::

    left=0 right=0.8 down=0 up=0.3

:func:`parse_components` also takes ``name: value`` or a JSON object ``{"left": 0, ...}``, and a
plain list of ``n`` numbers in the components' order. Components left out take their
``default`` when one is given (MPE: 0, "no push"), else the reply is refused. A refusal says what
was wrong: the names it does not know, the components missing, a value outside its range
(named, with the range), a number that is not finite, or a name given twice.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lang_pz.error import ActionParseError

_PAIR = re.compile(
    r"([A-Za-z_][\w.]*)\s*[=:]\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf)", flags=re.IGNORECASE
)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.3g}"


@dataclass(frozen=True)
class Components:
    """The named numbers of a Box action.

    Attributes:
        names: one name per number, in the action vector's order (distinct, case-insensitive).
        low / high: each number's bounds.
        default: the value of a component a reply leaves out (``None``: every one is required).
        meaning: optional one-line meaning of the action, shown before the format.
        example: an example reply for the action line (default: every component at its midpoint).
    """

    names: tuple[str, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    default: float | None = None
    meaning: str = ""
    example: str = ""

    def __post_init__(self) -> None:
        if not (len(self.names) == len(self.low) == len(self.high)) or not self.names:
            raise ValueError(f"components need one name, low and high per number; got {self.names}, {self.low}, {self.high}")
        if len({n.lower() for n in self.names}) != len(self.names):
            raise ValueError(f"component names must be distinct: {self.names}")

    @classmethod
    def of_box(
        cls, space: Any, names: Sequence[str] | None = None, default: float | None = None, meaning: str = ""
    ) -> Components:
        """The components of Box ``space`` (flattened), named ``names`` or ``a0`` ... ``a{n-1}``."""
        low = np.broadcast_to(space.low, space.shape).ravel()
        high = np.broadcast_to(space.high, space.shape).ravel()
        n = low.size
        return cls(
            tuple(names) if names is not None else tuple(f"a{i}" for i in range(n)),
            tuple(float(x) for x in low),
            tuple(float(x) for x in high),
            default,
            meaning,
        )

    def as_info(self) -> list[list[Any]]:
        """``[[name, low, high], ...]``: the form of ``info["action_components"]``."""
        return [[n, lo, hi] for n, lo, hi in zip(self.names, self.low, self.high)]

    def describe(self) -> str:
        """The action line: the meaning, each component with its range, and an example."""
        ranges = ", ".join(f"{n} ({_fmt(lo)} to {_fmt(hi)})" for n, lo, hi in zip(self.names, self.low, self.high))
        example = self.example or " ".join(
            f"{n}={_fmt(_example(lo, hi))}" for n, lo, hi in zip(self.names, self.low, self.high)
        )
        left_out = f" Components left out are {_fmt(self.default)}." if self.default is not None else ""
        meaning = f"{self.meaning} " if self.meaning else ""
        return f"Action: {meaning}Write name=value for each of {ranges}, e.g. {example}.{left_out}"

    def text(self, values: Sequence[float] | np.ndarray) -> str:
        """``values`` written as the format (what :meth:`parse` reads back to the same numbers)."""
        return " ".join(f"{n}={float(v):.6g}" for n, v in zip(self.names, np.ravel(values)))

    def parse(self, text: Any) -> np.ndarray:
        """The action vector (float64) that ``text`` names (module docstring).

        Raises:
            ActionParseError: not a str, unknown or repeated names, missing components, values out
                of range or not finite, or a plain list of the wrong length.
        """
        if not isinstance(text, str):
            raise ActionParseError(text, f"expected a str action, got {type(text).__name__}")
        pairs = _pairs(text)
        if pairs is None:
            return self._parse_list(text)
        index = {n.lower(): i for i, n in enumerate(self.names)}
        unknown = sorted({k for k, _ in pairs if k.lower() not in index})
        if unknown:
            raise ActionParseError(text, f"unknown component(s) {unknown}; the components are {list(self.names)}")
        seen: dict[int, float] = {}
        for key, value in pairs:
            i = index[key.lower()]
            if i in seen:
                raise ActionParseError(text, f"{self.names[i]} is given twice; give each component once")
            seen[i] = value
        missing = [n for i, n in enumerate(self.names) if i not in seen]
        if missing and self.default is None:
            raise ActionParseError(text, f"missing component(s) {missing}; write name=value for each of {list(self.names)}")
        values = [seen.get(i, self.default if self.default is not None else 0.0) for i in range(len(self.names))]
        return self._checked(text, values)

    def _parse_list(self, text: str) -> np.ndarray:
        numbers = [float(m) for m in _NUMBER.findall(text)]
        if len(numbers) != len(self.names):
            raise ActionParseError(
                text,
                f"expected name=value for {list(self.names)} (or {len(self.names)} numbers "
                f"in that order), found {len(numbers)} number(s) and no name=value",
            )
        return self._checked(text, numbers)

    def _checked(self, text: str, values: Sequence[float]) -> np.ndarray:
        for n, v, lo, hi in zip(self.names, values, self.low, self.high):
            if not math.isfinite(v):
                raise ActionParseError(text, f"{n}={v} is not a finite number")
            if v < lo or v > hi:
                raise ActionParseError(text, f"{n}={_fmt(v)} is outside its range {_fmt(lo)} to {_fmt(hi)}")
        return np.asarray(values, dtype=np.float64)


def _example(lo: float, hi: float) -> float:
    if math.isfinite(lo) and math.isfinite(hi):
        return round((lo + hi) / 2, 2)
    return 0.0 if lo <= 0 <= hi else (lo if math.isfinite(lo) else hi)


def _pairs(text: str) -> list[tuple[str, float]] | None:
    """``(name, value)`` pairs of a ``name=value`` reply or a JSON object; ``None`` if it has none."""
    s = text.strip()
    if s.startswith("{") and s.endswith("}"):
        try:
            obj = json.loads(s)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict) and "action" in obj and isinstance(obj["action"], (str, dict)):
            inner = obj["action"]
            return _pairs(inner if isinstance(inner, str) else json.dumps(inner))
        if (
            isinstance(obj, dict)
            and obj
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj.values())
        ):
            return [(str(k), float(v)) for k, v in obj.items()]
    found = [(k, float(v)) for k, v in _PAIR.findall(s.replace('"', ""))]
    return found or None
