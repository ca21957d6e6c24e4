"""Plain data across the sandbox boundary: the only thing a verdict is computed from.

A sandboxed program hands back what the code under test returned as JSON built by
:func:`encode`: ``None``, ``bool``, ``int``, finite ``float`` and ``str`` as themselves; other
floats, ``bytes``, ``complex`` and the containers ``list``, ``tuple``, ``set``, ``frozenset``,
``dict`` as a one-key JSON object naming the type (so ``(1, 2)`` and ``[1, 2]`` stay different,
as ``==`` sees them); an iterator (generator, ``map``, ...) as its items, decoded as an iterator
over them (``list(f(x)) == [...]`` passes, ``f(x) == [...]`` does not, as in the benchmark's own
run); a NumPy scalar as its Python number. Subclasses of these types are reduced to the base type (an ``int`` whose
``__eq__`` says yes to everything is just its number); anything else (objects with methods,
generators, NumPy scalars) is not plain data and raises :class:`NotPlain`. :func:`decode` is
strict: a JSON value outside this grammar raises :class:`NotPlain`. Nothing in either direction
runs code of the value's own class, so comparing decoded values runs only the built-in ``==``.

This module is stdlib-only and self-contained: its source is embedded in the sandboxed programs.
"""

import json
import math

__all__ = ["MAX_DEPTH", "MAX_ITEMS", "NotPlain", "decode", "dumps", "encode", "loads"]

#: Deepest nesting of containers accepted either way.
MAX_DEPTH = 64
#: Most items taken from an iterator the code returned.
MAX_ITEMS = 1_000_000

_SEQ = {list: "l", tuple: "t", set: "s", frozenset: "fs"}
_TAGS = {"l": list, "t": tuple, "s": set, "fs": frozenset}


class NotPlain(ValueError):
    """A value (or a JSON text) that is not plain data as :mod:`lang_pz.tasks.sandbox.plain` defines it."""


def encode(value: object, depth: int = 0) -> object:
    """``value`` as JSON-able plain data (see the module docstring); raises :class:`NotPlain`."""
    if depth > MAX_DEPTH:
        raise NotPlain("nested deeper than %d" % MAX_DEPTH)
    if value is None or value is True or value is False:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        x = float.__float__(value)
        return x if math.isfinite(x) else {"f": repr(x)}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray)):
        return {"b": bytes(value).hex()}
    if isinstance(value, complex):
        return {"c": [complex.__getattribute__(value, "real"), complex.__getattribute__(value, "imag")]}
    if isinstance(value, dict):
        return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in dict.items(value)]}
    for base, tag in _SEQ.items():
        if isinstance(value, base):
            return {tag: [encode(x, depth + 1) for x in base.__iter__(value)]}
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return encode(value.item(), depth)  # a NumPy scalar: its Python number
    if hasattr(type(value), "__next__") and hasattr(type(value), "__iter__"):
        items: list[object] = []
        for x in value:  # type: ignore[attr-defined]  # iterable: type(value) has __iter__ (checked above); no typing import in this embedded stdlib-only source
            if len(items) >= MAX_ITEMS:
                raise NotPlain("an iterator of more than %d items" % MAX_ITEMS)
            items.append(encode(x, depth + 1))
        return {"i": items}
    raise NotPlain(
        "a %s is not plain data (None, bool, int, float, str, bytes, list, tuple, set, dict)" % type(value).__name__
    )


def decode(obj: object, depth: int = 0) -> object:
    """The value :func:`encode` made ``obj`` from; raises :class:`NotPlain` on anything else."""
    if depth > MAX_DEPTH:
        raise NotPlain("nested deeper than %d" % MAX_DEPTH)
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is float:
        if not math.isfinite(obj):
            raise NotPlain("a bare non-finite float")
        return obj
    if type(obj) is not dict or len(obj) != 1:
        raise NotPlain("not a plain-data encoding: %.80r" % (obj,))
    ((tag, body),) = obj.items()
    try:
        if tag == "f" and body in ("inf", "-inf", "nan"):
            return float(body)
        if tag == "b" and type(body) is str:
            return bytes.fromhex(body)
        if tag == "c" and type(body) is list and len(body) == 2 and all(type(x) is float for x in body):
            return complex(body[0], body[1])
        if tag == "d" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in body}
        if tag in _TAGS and type(body) is list:
            return _TAGS[tag](decode(x, depth + 1) for x in body)
        if tag == "i" and type(body) is list:
            return iter([decode(x, depth + 1) for x in body])
    except (TypeError, ValueError) as e:  # an unhashable key or member, bad hex
        raise NotPlain(str(e)) from None
    raise NotPlain("not a plain-data encoding: %.80r" % (obj,))


def dumps(value: object) -> str:
    """``encode(value)`` as one line of JSON text; raises :class:`NotPlain`."""
    try:
        return json.dumps(encode(value), allow_nan=False, separators=(",", ":"))
    except (ValueError, RecursionError) as e:  # an int past Python's digit limit
        raise NotPlain(str(e)) from None


def loads(text: str) -> object:
    """The value of one :func:`dumps` text; raises :class:`NotPlain` (malformed JSON included)."""

    def refuse(name: str) -> None:
        raise NotPlain("a bare " + name)

    try:
        return decode(json.loads(text, parse_constant=refuse))
    except (ValueError, RecursionError, TypeError) as e:
        raise NotPlain(str(e)[:200]) from None
