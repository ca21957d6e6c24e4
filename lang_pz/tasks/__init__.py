"""Benchmark tasks for language environments: scoring (HotpotQA, MATH, GSM8K) and data loaders.

Only the scoring and data-loading layer lives here for now; the task environments build on it.
"""

from lang_pz.tasks.datasets import (
    DATA_DIR_ENV,
    CodeItem,
    GSM8KItem,
    HotpotQAItem,
    MathItem,
    load_gsm8k,
    load_hotpotqa,
    load_humaneval,
    load_math500,
    load_mbpp,
    resolve_data_dir,
    split,
)
from lang_pz.tasks.scoring import (
    exact_match,
    gsm8k_equal,
    gsm8k_gold,
    gsm8k_number,
    last_boxed,
    math_equal,
    normalize_answer,
    supporting_fact_scores,
    token_f1,
)

__all__ = [
    "DATA_DIR_ENV",
    "CodeItem",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "exact_match",
    "gsm8k_equal",
    "gsm8k_gold",
    "gsm8k_number",
    "last_boxed",
    "load_gsm8k",
    "load_hotpotqa",
    "load_humaneval",
    "load_math500",
    "load_mbpp",
    "math_equal",
    "normalize_answer",
    "resolve_data_dir",
    "split",
    "supporting_fact_scores",
    "token_f1",
]
