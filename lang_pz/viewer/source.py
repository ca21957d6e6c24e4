"""What a folder given to ``lang-pz view`` is, and tolerant readers of the files in it.

Three kinds of folder are viewable (see :func:`kind_of`):

- ``run``: a training run (``lang-pz train``, :mod:`lang_pz.runs` names its files);
- ``bench``: a benchmark results folder (``lang-pz bench``: ``episodes.jsonl``, ``summary.json``);
- ``eval-critic``: a critic evaluation (``lang-pz eval-critic``: ``summary.json`` with ``summaries``
  and one JSONL file of cases per source).

Every reader here accepts a folder that is still being written: a torn last JSONL line (a write
in flight, or one cut by a kill) is skipped, and a missing file reads as empty.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from lang_pz.error import RunDirError
from lang_pz.runs import RunFolder

Kind = Literal["run", "bench", "eval-critic"]


def read_json(path: Path) -> Any:
    """``path`` parsed as JSON, or ``None`` when it is missing or not (yet) valid JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def kind_of(folder: str | Path) -> Kind:
    """Which kind of output ``folder`` holds (see the module docstring).

    Raises:
        RunDirError: ``folder`` is missing, a file, or none of the three kinds (the message says
            what each kind holds).
    """
    root = Path(folder)
    if not root.is_dir():
        what = "is a file" if root.exists() else "does not exist"
        raise RunDirError(
            f"{root} {what}; give the folder that `lang-pz train`, `lang-pz bench` or `lang-pz eval-critic` wrote"
        )
    if RunFolder(root).config.is_file():
        return "run"
    if (root / "episodes.jsonl").is_file():
        return "bench"
    summary = read_json(root / "summary.json")
    if isinstance(summary, dict) and "summaries" in summary:
        return "eval-critic"
    if isinstance(summary, list):
        return "bench"
    raise RunDirError(
        f"{root} is not a run, bench or eval-critic folder: a training run holds config.json, a "
        "bench folder episodes.jsonl, an eval-critic folder summary.json with 'summaries'"
    )
