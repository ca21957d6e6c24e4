"""Every ``python`` code block of the README runs as written (documentation cannot rot).

Blocks run in order in one namespace, in a temporary folder, with the embedded model (the
README shows it) and the benchmark data found through ``LANG_PZ_DATA_DIR``, as a user sets it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
from support import DATA, skip_where_bwrap_is_missing  # noqa: E402  ($LANG_PZ_DATA_DIR or shared/data beside the project)


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_python_blocks_and_no_machine_paths():
    text = README.read_text(encoding="utf-8")
    assert len(python_blocks()) >= 2
    assert "../shared" not in text and "/work/" not in text


@pytest.mark.integration
def test_every_readme_python_block_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LANG_PZ_DATA_DIR", str(DATA))
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path / "cache"))
    namespace: dict[str, object] = {"__name__": "readme"}
    for i, block in enumerate(python_blocks()):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message names the block
            skip_where_bwrap_is_missing(exc, f"README python block {i}")
            raise AssertionError(f"README python block {i} failed: {exc!r}\n{block}") from exc
