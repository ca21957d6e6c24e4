"""Loading the benchmarks from the Hugging Face hub (optional package ``datasets``, extra ``hub``;
needs network, so never used by the tests)."""

from __future__ import annotations

from typing import Any

from lang_pz.error import DependencyNotInstalled, LangPZError
from lang_pz.tasks.datasets.items import (
    gsm8k_item,
    hotpotqa_item,
    humaneval_item,
    math_item,
    mbpp_item,
)

__all__ = ["HUB_SOURCES", "load_from_hub"]

#: ``benchmark -> (dataset path, config, default split)`` on the Hugging Face hub.
HUB_SOURCES: dict[str, tuple[str, str | None, str]] = {
    "hotpotqa": ("hotpotqa/hotpot_qa", "distractor", "validation"),
    "math500": ("HuggingFaceH4/MATH-500", None, "test"),
    "gsm8k": ("openai/gsm8k", "main", "test"),
    "humaneval": ("openai/openai_humaneval", None, "test"),
    "mbpp": ("google-research-datasets/mbpp", "full", "train+test+validation+prompt"),
}


def load_from_hub(benchmark: str, *, split: str | None = None, **load_kwargs: Any) -> list[Any]:
    """Load a benchmark from the Hugging Face hub (needs network and the package ``datasets``).

    Args:
        benchmark: one of :data:`BENCHMARKS`.
        split: a ``datasets`` split expression; default: the split the local files hold
            (HotpotQA ``validation``, MATH-500/GSM8K/HumanEval ``test``, MBPP all four).
        **load_kwargs: passed to ``datasets.load_dataset`` (e.g. ``cache_dir``, ``revision``).

    Returns:
        Items of the same types the file loaders return, in hub order (MBPP by task id).

    Raises:
        DependencyNotInstalled: ``datasets`` is not installed (``pip install 'lang_pz[hub]'``).
        LangPZError: unknown ``benchmark``.
    """
    if benchmark not in HUB_SOURCES:
        raise LangPZError(f"load_from_hub: benchmark must be one of {list(HUB_SOURCES)}, got {benchmark!r}")
    try:
        import datasets
    except ImportError as e:
        raise DependencyNotInstalled("load_from_hub needs the package datasets: pip install 'lang_pz[hub]'") from e
    path, config, default_split = HUB_SOURCES[benchmark]
    rows = datasets.load_dataset(path, config, split=split or default_split, **load_kwargs)
    if benchmark == "hotpotqa":
        return [hotpotqa_item(dict(r)) for r in rows]
    if benchmark == "math500":
        return [math_item(dict(r)) for r in rows]
    if benchmark == "gsm8k":
        return [gsm8k_item(i, dict(r)) for i, r in enumerate(rows)]
    if benchmark == "humaneval":
        return [humaneval_item(dict(r)) for r in rows]
    return sorted((mbpp_item(dict(r)) for r in rows), key=lambda it: int(it.task_id.split("/")[1]))
