"""Text -> vector observation encoders, for RL libraries that train on numeric observations.

An encoder is any object with ``dim`` (int) and ``__call__(text) -> np.ndarray`` of shape
``(dim,)``, dtype float32. Two are shipped:

- :class:`HashedBagOfWords` (the default): the hashing trick of Weinberger et al., "Feature
  Hashing for Large Scale Multitask Learning" (ICML 2009, section 2): every word and word pair is
  hashed into one of ``dim`` buckets with a hashed sign, and every number adds its (squashed)
  value to the bucket of the word before it, so "Your height: 24" and "Your height: 40" differ.
  No training, no download, deterministic across processes and machines (CRC-32, not Python's
  salted ``hash``).
- :class:`FunctionEncoder`: the hook for your own encoder, e.g. a sentence embedding::

      from sentence_transformers import SentenceTransformer        # not a lang_pz dependency
      model = SentenceTransformer("/path/to/all-MiniLM-L6-v2")
      encoder = FunctionEncoder(model.encode, dim=384)
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from lang_pz.error import LangPZError

_TOKEN = re.compile(r"-?\d+(?:\.\d+)?|[a-z_]+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?$")


@runtime_checkable
class TextEncoder(Protocol):
    """What the observation bridge needs: ``dim`` and ``encoder(text) -> float32 array (dim,)``."""

    dim: int

    def __call__(self, text: str) -> np.ndarray: ...


def _bucket(token: str, dim: int) -> tuple[int, float]:
    h = zlib.crc32(token.encode("utf-8"))
    return h % dim, (1.0 if (h >> 31) & 1 == 0 else -1.0)


class HashedBagOfWords:
    """Signed feature hashing of words, word pairs and numbers (the module docstring says how).

    Args:
        dim: output dimension (>= 8). 256 keeps collisions rare for the few dozen distinct words
            of a lang_pz observation.
        bigrams: also hash adjacent word pairs ("ball right" vs "ball left" in context).
        number_scale: a number ``x`` adds ``x / (number_scale + |x|)`` (in (-1, 1)); pick about the
            typical magnitude of the env's numbers (pixels, steps).
        normalise: scale the word counts to unit L2 norm (numbers are added after, unscaled).

    Raises:
        LangPZError: ``dim`` < 8 or ``number_scale`` <= 0.
    """

    def __init__(self, dim: int = 256, *, bigrams: bool = True, number_scale: float = 50.0,
                 normalise: bool = True) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise LangPZError(f"HashedBagOfWords dim must be an int >= 8, got {dim!r}")
        if not number_scale > 0:
            raise LangPZError(f"number_scale must be > 0, got {number_scale!r}")
        self.dim = dim
        self.bigrams = bigrams
        self.number_scale = float(number_scale)
        self.normalise = normalise

    def __repr__(self) -> str:
        return f"HashedBagOfWords(dim={self.dim}, bigrams={self.bigrams}, number_scale={self.number_scale})"

    def __call__(self, text: str) -> np.ndarray:
        """The vector of ``text``: float32, shape ``(dim,)``, every entry finite."""
        words = np.zeros(self.dim, dtype=np.float64)
        numbers = np.zeros(self.dim, dtype=np.float64)
        prev: str | None = None
        for tok in _TOKEN.findall(str(text).lower()):
            if _NUMBER.match(tok):
                x = float(tok)
                i, s = _bucket(f"#{prev}", self.dim)
                numbers[i] += s * x / (self.number_scale + abs(x))
                continue
            i, s = _bucket(tok, self.dim)
            words[i] += s
            if self.bigrams and prev is not None:
                i, s = _bucket(f"{prev} {tok}", self.dim)
                words[i] += s
            prev = tok
        if self.normalise:
            norm = math.sqrt(float(words @ words))
            if norm > 0:
                words /= norm
        return (words + numbers).astype(np.float32)


class FunctionEncoder:
    """Your own encoder: any ``fn(text) -> array-like`` of ``dim`` numbers.

    Args:
        fn: called with the observation text; its result is converted to float32.
        dim: the length ``fn`` returns.

    Raises:
        LangPZError: from ``__call__``, when ``fn`` returns another shape or a non-finite value.
    """

    def __init__(self, fn: Callable[[str], Any], dim: int) -> None:
        if not callable(fn):
            raise LangPZError(f"FunctionEncoder needs a callable text -> vector, got {fn!r}")
        if not isinstance(dim, int) or dim < 1:
            raise LangPZError(f"FunctionEncoder dim must be an int >= 1, got {dim!r}")
        self.fn = fn
        self.dim = dim

    def __repr__(self) -> str:
        return f"FunctionEncoder({getattr(self.fn, '__name__', self.fn)!r}, dim={self.dim})"

    def __call__(self, text: str) -> np.ndarray:
        vec = np.asarray(self.fn(text), dtype=np.float32).reshape(-1)
        if vec.shape != (self.dim,):
            raise LangPZError(f"encoder {self!r} returned shape {vec.shape} for {text[:60]!r}; expected ({self.dim},)")
        if not np.all(np.isfinite(vec)):
            raise LangPZError(f"encoder {self!r} returned a non-finite value for {text[:60]!r}")
        return vec
