"""Text -> vector observation encoders, for RL libraries that train on numeric observations.

An encoder is any object with ``dim`` (int) and ``__call__(text) -> np.ndarray`` of shape
``(dim,)``, dtype float32. Two are shipped:

- :class:`HashedBagOfWords` (the default): the hashing trick of Weinberger et al., "Feature
  Hashing for Large Scale Multitask Learning" (ICML 2009, section 2): features are hashed into
  ``dim`` buckets with a hashed sign and a hashed weight in [1, 2). Features: every token (a word,
  a number, or one symbol such as ``.``, ``X``, ``|``) and adjacent token pair (what is said,
  normalised); every token with its line and place in the line (order: a board's ``X . .`` and
  ``. X .`` differ); and every number as a value in its own slot, named by the word before it and
  the number's place after that word (``pos: 3 5`` and ``pos: 5 3`` differ; ``agent_0`` and
  ``agent_1`` differ). Distinct observations of every registered env give distinct vectors
  (tested). No training, no download, deterministic across processes and machines (CRC-32, not
  Python's salted ``hash``).
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

_TOKEN = re.compile(r"-?\d+(?:\.\d+)?|[a-z]+|\S", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?$")
_WORD = re.compile(r"[a-z]+$", re.IGNORECASE)
#: Lines whose features an encoder remembers (then it starts again).
_MAX_CACHED = 20_000


@runtime_checkable
class TextEncoder(Protocol):
    """What the observation bridge needs: ``dim`` and ``encoder(text) -> float32 array (dim,)``."""

    dim: int

    def __call__(self, text: str) -> np.ndarray: ...


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """The bucket of ``feature`` and its signed weight (+-[1, 2): equal sums of different features are rare)."""
    h = zlib.crc32(feature.encode("utf-8"))
    weight = 1.0 + ((h >> 20) & 0x3FF) / 1024
    return h % dim, (weight if (h >> 31) & 1 == 0 else -weight)


def _squash(x: float, scale: float) -> float:
    return x / (scale + abs(x))


class HashedBagOfWords:
    """Signed feature hashing of tokens, token pairs, placed tokens and numbers in slots (the
    module docstring says which features and why).

    Args:
        dim: output dimension (>= 8). 256 keeps collisions rare for the few dozen distinct words
            of a lang_pz observation.
        bigrams: also hash adjacent token pairs ("ball right" vs "ball left" in context).
        number_scale: a number ``x`` adds ``x / (number_scale + |x|)`` and ``x / (1 + |x|)`` (each
            in (-1, 1)) to its slot: the first tells large values apart (pick about the typical
            magnitude of the env's numbers: pixels, steps), the second small ones (ids 0, 1, 2).
        normalise: scale the token, pair and placed-token counts to unit L2 norm each (numbers
            are added after, unscaled).

    Raises:
        LangPZError: ``dim`` < 8 or ``number_scale`` <= 0.
    """

    def __init__(self, dim: int = 256, *, bigrams: bool = True, number_scale: float = 50.0, normalise: bool = True) -> None:
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
        lines = []  # per line, per part (words, placed, numbers): the features' buckets and signed values
        state: tuple[str, int, str | None] = ("", 0, None)  # the last word, numbers after it, the last token
        for line_no, line in enumerate(str(text).split("\n")):
            features, state = self._line(line_no, line, state)
            lines.append(features)
        parts = [self._sum([f[part] for f in lines]) for part in range(3)]
        if self.normalise:
            for part in parts[:2]:
                norm = math.sqrt(float(part @ part))
                if norm > 0:
                    part /= norm
        return (parts[0] + parts[1] + parts[2]).astype(np.float32)

    def _line(self, line_no: int, line: str, state: tuple[str, int, str | None]) -> tuple[Any, tuple[str, int, str | None]]:
        """The features of one line and the state after it, remembered by line and state (an
        env's lines repeat from step to step: rules, unchanged board rows)."""
        cache = self.__dict__.setdefault("_lines", {})
        key = (line_no, line, state)
        hit = cache.get(key)
        if hit is None:
            if len(cache) >= _MAX_CACHED:
                cache.clear()
            hit = cache[key] = self._features(line_no, line, state)
        return hit

    def _features(
        self, line_no: int, line: str, state: tuple[str, int, str | None]
    ) -> tuple[Any, tuple[str, int, str | None]]:
        dim = self.dim
        words: list[tuple[int, float]] = []
        placed: list[tuple[int, float]] = []
        numbers: list[tuple[int, float]] = []
        context, k, prev = state
        for col, tok in enumerate(_TOKEN.findall(line)):
            low = tok.lower()
            placed.append(_bucket(f"@{line_no}:{col}:{tok}", dim))
            if _NUMBER.match(tok):
                x = float(tok)
                if math.isfinite(x):
                    i, s = _bucket(f"#{context}#{k}", dim)
                    numbers.append((i, s * _squash(x, self.number_scale)))
                    i, s = _bucket(f"#{context}#{k}#1", dim)
                    numbers.append((i, s * _squash(x, 1.0)))
                k += 1
                low = "#"  # numbers are values, not words
            elif _WORD.match(tok):
                context, k = low, 0
            words.append(_bucket(low, dim))
            if self.bigrams and prev is not None:
                words.append(_bucket(f"{prev} {low}", dim))
            prev = low
        arrays = tuple(
            (np.array([i for i, _ in f], dtype=np.intp), np.array([v for _, v in f], dtype=np.float64))
            for f in (words, placed, numbers)
        )
        return arrays, (context, k, prev)

    def _sum(self, features: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """The features' values summed into their buckets, in order (as adding them one by one)."""
        index = np.concatenate([i for i, _ in features])
        value = np.concatenate([v for _, v in features])
        return np.bincount(index, weights=value, minlength=self.dim)


_V1_TOKEN = re.compile(r"-?\d+(?:\.\d+)?|[a-z_]+")


class HashedBagOfWordsV1:
    """The first default encoder, kept only to read models trained with it (the committed
    ``benchmarks/results/sb3_pistonball5_text.zip``): words and word pairs, each number added to
    the bucket of the word before it. It loses order and values (swapped numbers, a board's
    symbols, ``agent_0`` vs ``agent_1`` encode alike): train new models on :class:`HashedBagOfWords`.

    Args:
        dim: output dimension (>= 8).
    """

    def __init__(self, dim: int = 256) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise LangPZError(f"HashedBagOfWordsV1 dim must be an int >= 8, got {dim!r}")
        self.dim = dim

    def __repr__(self) -> str:
        return f"HashedBagOfWordsV1(dim={self.dim})"

    def __call__(self, text: str) -> np.ndarray:
        """The vector of ``text``: float32, shape ``(dim,)``."""

        def bucket(token: str) -> tuple[int, float]:
            h = zlib.crc32(token.encode("utf-8"))
            return h % self.dim, (1.0 if (h >> 31) & 1 == 0 else -1.0)

        words = np.zeros(self.dim, dtype=np.float64)
        numbers = np.zeros(self.dim, dtype=np.float64)
        prev: str | None = None
        for tok in _V1_TOKEN.findall(str(text).lower()):
            if _NUMBER.match(tok):
                x = float(tok)
                i, s = bucket(f"#{prev}")
                numbers[i] += s * x / (50.0 + abs(x))
                continue
            i, s = bucket(tok)
            words[i] += s
            if prev is not None:
                i, s = bucket(f"{prev} {tok}")
                words[i] += s
            prev = tok
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
