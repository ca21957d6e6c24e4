"""Observations as text an agent can read: named parts, and every number up to a documented size.

:func:`describe` renders a value of a Gymnasium space for an LLM to read (the generic
:class:`lang_pz.text.adapter.LanguageAdapter`'s observation text):

* Dict: one ``key: value`` line per entry (a multi-line value indented under its key); Tuple:
  ``0: ...``, ``1: ...``; Discrete, MultiDiscrete and MultiBinary: integers; Text: the string.
* Box: its bounds once (``each from -1 to 1``, ``unbounded``), then its numbers (3 significant
  digits), named where labels are known (:class:`Labels`: :class:`Fields` names the parts of a
  vector, ``hull angle: 0.012``; :class:`Table` names the rows and columns of a matrix), else laid
  out by shape: a vector as a list, a matrix one row a line, an image-like array (last axis of 4
  or fewer) one grid per channel, any other array one grid per leading index. Runs of all-zero
  rows are one line (``rows 5-26: all 0``): nothing is lost.
* Every number is written while the array's text fits in :data:`MAX_NUMBERS_CHARS` characters.
  A larger array (an image) is shown reduced: the mean of each block of values, laid out as
  above, under a line giving its shape, the block size and its minimum and maximum: a coarse
  picture of where the values are, never only statistics of them.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

#: Characters the numbers of one array may take in an observation before the array is shown
#: reduced (block means): 4,000 characters, about 1,500 tokens, well under lang_pz's
#: 8,192-character observations, with room for the header and the action line.
MAX_NUMBERS_CHARS = 4000
_MAX_CHANNELS = 4  # an array whose last axis is this small is drawn one grid per channel


def fmt(x: float) -> str:
    """``x`` in at most 3 significant digits (integers up to 15 digits as integers)."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.3g}"


class Labels(abc.ABC):
    """Names for the numbers of a Box observation (one implementation per layout:
    :class:`Fields` for a vector, :class:`Table` for a matrix)."""

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """How many numbers the labels name."""

    @abc.abstractmethod
    def render(self, values: np.ndarray) -> str:
        """``values`` (flattened, :attr:`size` numbers) as named text."""


@dataclass(frozen=True)
class Fields(Labels):
    """Named parts of a vector, in order: ``(name, count)``; a part of 2 or 3 numbers is written
    ``name: (x, y)``, longer ones as a list. Build with :meth:`of`."""

    parts: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, *parts: str | tuple[str, int]) -> Fields:
        """``Fields.of("hull angle", ("velocity (x, y)", 2))``: a str is one number.

        Raises:
            ValueError: a count below 1.
        """
        out = tuple((p, 1) if isinstance(p, str) else (str(p[0]), int(p[1])) for p in parts)
        bad = [p for p in out if p[1] < 1]
        if bad:
            raise ValueError(f"every part of a Fields layout names at least one number, got {bad}")
        return cls(out)

    @property
    def size(self) -> int:
        return sum(n for _, n in self.parts)

    def render(self, values: np.ndarray) -> str:
        flat, lines, i = np.ravel(values), [], 0
        for name, n in self.parts:
            chunk = flat[i : i + n]
            i += n
            shown = fmt(chunk[0]) if n == 1 else "(" + ", ".join(fmt(v) for v in chunk) + ")"
            lines.append(f"{name}: {shown}" if n <= 3 else f"{name}: [{', '.join(fmt(v) for v in chunk)}]")
        return "\n".join(lines)


@dataclass(frozen=True)
class Table(Labels):
    """A matrix with named rows and columns: a header line, then one aligned line per row; runs
    of all-zero rows (``absent``: what the environment documents such a row to mean) are one line."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    absent: str = "all 0"

    @property
    def size(self) -> int:
        return len(self.rows) * len(self.columns)

    def render(self, values: np.ndarray) -> str:
        grid = np.asarray(values, dtype=float).reshape(len(self.rows), len(self.columns))
        return _table(grid, list(self.rows), list(self.columns), self.absent)


def _table(grid: np.ndarray, rows: Sequence[str], columns: Sequence[str] | None, absent: str = "all 0") -> str:
    cells = [[fmt(v) for v in row] for row in grid]
    widths = [max([len(c[j]) for c in cells] + [len(columns[j]) if columns else 0]) for j in range(grid.shape[1])]
    pad = max(len(r) for r in rows) if rows else 0
    lines = [" " * (pad + 2) + "  ".join(c.rjust(w) for c, w in zip(columns, widths))] if columns else []
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and not np.any(grid[j]):
            j += 1
        if j - i >= 2:  # a run of zero rows: one line
            lines.append(f"{rows[i]} to {rows[j - 1]}: {absent}")
            i = j
            continue
        lines.append(f"{(rows[i] + ':').ljust(pad + 1)} " + "  ".join(c.rjust(w) for c, w in zip(cells[i], widths)))
        i += 1
    return "\n".join(lines)


def _grid(arr: np.ndarray) -> str:
    """A 2-D array, one row a line (``row i: ...``)."""
    return _table(arr, [f"row {i}" for i in range(arr.shape[0])], None)


def _layout(arr: np.ndarray) -> str:
    """An unlabelled array laid out by its shape (module docstring)."""
    if arr.ndim == 0:
        return fmt(arr.item())
    if arr.ndim == 1:
        return "[" + ", ".join(fmt(v) for v in arr) + "]"
    if arr.ndim == 2:
        return _grid(arr)
    if arr.ndim == 3 and arr.shape[-1] <= _MAX_CHANNELS:
        return "\n".join(f"channel {c}:\n{_grid(arr[..., c])}" for c in range(arr.shape[-1]))
    return "\n".join(f"[{', '.join(map(str, idx))}, :, :]:\n{_grid(arr[idx])}" for idx in np.ndindex(*arr.shape[:-2]))


def _block_means(arr: np.ndarray, blocks: Sequence[int]) -> np.ndarray:
    out = arr.astype(float)
    for axis, b in enumerate(blocks):
        if b > 1:
            starts = np.arange(0, out.shape[axis], b)
            counts = np.diff(np.append(starts, out.shape[axis]))
            shape = [1] * out.ndim
            shape[axis] = len(starts)
            out = np.add.reduceat(out, starts, axis=axis) / counts.reshape(shape)
    return out


def _reduced(arr: np.ndarray, budget: int) -> str:
    """An array too large to write out: block means under a line that says so (module docstring)."""
    blocks = [1] * arr.ndim
    keep = arr.ndim - 1 if arr.ndim == 3 and arr.shape[-1] <= _MAX_CHANNELS else None  # channels stay
    text = ""
    for _ in range(64):
        shape = [-(-n // b) for n, b in zip(arr.shape, blocks)]
        if int(np.prod(shape)) * 5 <= budget:
            text = _layout(_block_means(arr, blocks))
            if len(text) <= budget:
                break
        axes = [a for a in range(arr.ndim) if a != keep and shape[a] > 1]
        if not axes:
            break
        widest = max(axes, key=lambda a: shape[a])
        blocks[widest] = min(arr.shape[widest], blocks[widest] * 2)
    reduced = [-(-n // b) for n, b in zip(arr.shape, blocks)]
    return (
        f"array of shape {tuple(arr.shape)} ({arr.size:,} numbers, more than {budget:,} characters to write out); "
        f"each number below is the mean of a block of {' x '.join(map(str, blocks))} values (shape {tuple(reduced)}); "
        f"values from {fmt(arr.min())} to {fmt(arr.max())}:\n{text}"
    )


def _bounds(space: spaces.Box) -> str:
    low, high = np.ravel(space.low), np.ravel(space.high)
    if low.size == 0:
        return ""
    lo, hi = float(low.min()), float(high.max())
    if np.isinf(lo) and np.isinf(hi):
        return "unbounded"
    same = np.all(low == low[0]) and np.all(high == high[0])
    return f"each from {fmt(lo)} to {fmt(hi)}" if same else f"from {fmt(lo)} to {fmt(hi)}"


def describe_box(space: spaces.Box, value: Any, labels: Labels | None = None, budget: int = MAX_NUMBERS_CHARS) -> str:
    """A Box value as text (module docstring): a header with its size and bounds, then its numbers.

    ``labels`` whose :attr:`Labels.size` differs from the value's are not used (the numbers are
    laid out by shape instead), so a layout written for one configuration never mislabels another.
    """
    arr = np.asarray(value)
    shape = " x ".join(map(str, arr.shape)) if arr.ndim > 1 else f"{arr.size}"
    head = f"{shape} numbers" + (f", {_bounds(space)}" if _bounds(space) else "")
    if arr.size <= 1:
        return fmt(arr.ravel()[0]) if arr.size else "[]"
    if labels is not None and labels.size == arr.size:
        body = labels.render(arr)
        if len(body) <= budget:
            return f"({head}):\n{body}"
    body = _layout(arr) if arr.size * 2 <= budget else ""
    if body and len(body) <= budget:
        return f"({head}):" + ("\n" if "\n" in body else " ") + body
    return _reduced(arr, budget)


def _indent(text: str) -> str:
    return text if "\n" not in text else "\n" + "\n".join("  " + line for line in text.splitlines())


def describe(space: spaces.Space[Any], value: Any, labels: Labels | None = None) -> str:
    """``value`` of ``space`` as readable text (module docstring); ``labels`` name a Box's numbers."""
    if isinstance(space, spaces.Box):
        return describe_box(space, value, labels)
    if isinstance(space, spaces.Discrete):
        return str(int(value))
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        arr = np.asarray(value)
        return _layout(arr) if arr.size * 2 <= MAX_NUMBERS_CHARS else _reduced(arr, MAX_NUMBERS_CHARS)
    if isinstance(space, spaces.Dict):
        return "\n".join(f"{k}: {_indent(describe(space[k], value[k]))}" for k in space.spaces)
    if isinstance(space, spaces.Tuple):
        return "\n".join(f"{i}: {_indent(describe(s, v))}" for i, (s, v) in enumerate(zip(space.spaces, value)))
    return str(value)
