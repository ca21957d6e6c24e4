"""The census scripts share one result writer (benchmarks/_census.py): it rebuilds the
committed result files of both from their JSON, byte for byte, and a small real census runs."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
RESULTS = BENCHMARKS / "results"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"census_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["openspiel_games", "textarena_games"])
def test_the_shared_writer_rebuilds_the_committed_results(tmp_path, name):
    script = _script(name)
    census = _script("_census")
    census_markdown, write_census = census.census_markdown, census.write_census
    summary = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    committed = (RESULTS / f"{name}.md").read_text(encoding="utf-8")
    assert census_markdown(summary, script.TITLE, script.intro(summary), script.COLUMNS) == committed
    write_census(tmp_path / "sub" / name, summary, script.TITLE, script.intro(summary), script.COLUMNS)
    assert (tmp_path / "sub" / f"{name}.md").read_text(encoding="utf-8") == committed
    assert (tmp_path / "sub" / f"{name}.json").read_bytes() == (RESULTS / f"{name}.json").read_bytes()


def test_a_small_openspiel_census_runs_through_the_writer(tmp_path):
    pytest.importorskip("pyspiel")
    out = tmp_path / "census"
    subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "openspiel_games.py"),
            "--games",
            "kuhn_poker",
            "--cycles",
            "2",
            "--out",
            str(out),
        ],
        cwd=BENCHMARKS.parent,
        check=True,
        capture_output=True,
        timeout=600,
    )
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["games"] == 1 and summary["passed"] == 1 and summary["rows"][0]["game"] == "kuhn_poker"
    md = out.with_suffix(".md").read_text()
    assert md.startswith("# OpenSpiel games through `openspiel/<game>`: 1 of 1 pass language_api_test\n")
    assert "| kuhn_poker | pass |" in md
