"""Held-out phases of a benchmark: a stable partition of its items, and the order seeds play them in.

A run has three *phases*: ``train`` (the episodes it learns from), ``validation`` (the held-out
episodes that gate each update) and ``test`` (the held-out measure, never used for a decision).
Each draws from its own item set, so no item is played in two phases:

- :func:`split` partitions items by a keyed hash of each item's *key* (:func:`item_key`: the
  benchmark's own id, e.g. HotpotQA ``_id``, MATH ``unique_id``, ``HumanEval/12``; for GSM8K,
  which has no id, the question text). Membership therefore does not depend on file order, on
  which source (files or hub) gave the rows, or on the global random state; ``seed`` selects
  another partition. Items with equal keys always land in the same part.
- :func:`seed_order` is the order in which episode seeds play the items of one set: seed ``s``
  plays ``items[order[s % n]]``, where ``order`` sorts the items by another keyed hash. So the
  ``n`` consecutive seeds ``s, s+1, ..., s+n-1`` play ``n`` distinct items (drawing *without
  replacement* until the set is exhausted, then the same cycle again), the same seed always
  plays the same item, and a phase whose seeds are consecutive (training seeds ``0..99``,
  validation seeds ``1000..1019``) never repeats an item before it has played them all.

Both hashes are SHA-256 of ``"<salt>|<seed>|<key>"``, so the result is the same on every
machine, Python and NumPy version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lang_pz.error import LangPZError

__all__ = ["PHASES", "PHASE_FRACTIONS", "item_key", "seed_order", "split"]

T = TypeVar("T")

#: The phases of a run, in the order a run uses them.
PHASES: tuple[str, str, str] = ("train", "validation", "test")
#: Shares of ``(train, validation, test)`` where a benchmark has one set to partition.
PHASE_FRACTIONS: tuple[float, float, float] = (0.6, 0.2, 0.2)


def _hash(salt: str, seed: int, key: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{salt}|{seed}|{key}".encode()).digest()[:8], "big")


def item_key(item: Any) -> str:
    """The stable key of a benchmark item that :func:`split` and :func:`seed_order` hash.

    HotpotQA: its ``id``; MATH: ``unique_id``; code tasks: ``task_id``; GSM8K (no id in the
    dataset): the question text; a ``str`` or ``int`` item: itself as text.

    Raises:
        LangPZError: an item of another type (pass ``key=`` to :func:`split`).
    """
    for attr in ("unique_id", "task_id", "id"):
        value = getattr(item, attr, None)
        if isinstance(value, str) and value:
            return value
    question = getattr(item, "question", None)
    if isinstance(question, str) and hasattr(item, "index"):  # GSM8KItem
        return question
    if isinstance(item, (str, int)):
        return str(item)
    raise LangPZError(
        f"no stable key for an item of type {type(item).__name__}: give it a str 'id' attribute, "
        "or pass key=<function item -> str> to split()"
    )


def split(
    items: Sequence[T],
    seed: int = 0,
    fractions: tuple[float, float, float] = PHASE_FRACTIONS,
    *,
    key: Callable[[T], str] = item_key,
) -> tuple[list[T], list[T], list[T]]:
    """A seeded, stable, disjoint ``(train, validation, test)`` partition of ``items``.

    The distinct keys (``key(item)``, default :func:`item_key`) are sorted by a SHA-256 hash
    keyed with ``seed``; the first ``round(k * fractions[0])`` of the ``k`` keys go to train,
    the next ``round(k * fractions[1])`` to validation, the rest to test. Each part keeps the
    input order. The parts do not depend on the input order or on any global random state,
    and items with equal keys share a part.

    Args:
        items: what to partition.
        seed: the partition's seed (another seed, another partition).
        fractions: three non-negative shares summing to 1.
        key: the stable text of an item (see :func:`item_key`).

    Raises:
        LangPZError: bad ``fractions``, or an item :func:`item_key` has no key for.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise LangPZError(f"split: fractions must be 3 non-negative numbers summing to 1, got {fractions!r}")
    keys = [key(it) for it in items]
    distinct = sorted(set(keys), key=lambda k: (_hash("lang_pz/split", seed, k), k))
    n = len(distinct)
    n_train = round(n * fractions[0])
    n_val = min(round(n * fractions[1]), n - n_train)
    part = {k: 0 if i < n_train else 1 if i < n_train + n_val else 2 for i, k in enumerate(distinct)}
    out: tuple[list[T], list[T], list[T]] = ([], [], [])
    for it, k in zip(items, keys):
        out[part[k]].append(it)
    return out


def seed_order(keys: Sequence[str]) -> tuple[int, ...]:
    """The positions of ``keys`` in the order episode seeds play them: seed ``s`` plays the item
    at position ``order[s % len(keys)]`` (a permutation: the keys sorted by a SHA-256 hash, ties
    by key and position). Which item a seed plays depends on the set of keys, not on their order."""
    ranked = sorted(range(len(keys)), key=lambda i: (_hash("lang_pz/order", 0, keys[i]), keys[i], i))
    return tuple(ranked)
