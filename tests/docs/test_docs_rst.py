"""The site's griffe extension (``tools/docs_rst.py``): lang_pz's reST docstrings as Markdown."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
griffe = pytest.importorskip("griffe", reason="the docs extra (make install) provides griffe")


def _module():
    spec = importlib.util.spec_from_file_location("docs_rst", ROOT / "tools" / "docs_rst.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_simple_table_of_a_real_docstring_becomes_a_markdown_table_row_by_row():
    import lang_pz.tasks

    doc = lang_pz.tasks.__doc__
    assert doc is not None
    md = _module().rst_to_markdown(doc)
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    # the source table: a header block and one row per module, each row's continuation joined
    source_rows = re.findall(r"^``(\w+)``", doc, flags=re.MULTILINE)
    assert rows[0].split("|")[1].strip() == "Module" and rows[1].startswith("| ---")
    assert [r.split("|")[1].strip() for r in rows[2:]] == [f"``{name}``" for name in source_rows]
    assert "=====" not in md


def test_a_table_without_header_keeps_continuation_lines_in_their_row_and_roles_become_code():
    import lang_pz.interop

    doc = lang_pz.interop.__doc__
    assert doc is not None
    md = _module().rst_to_markdown(doc)
    row = next(line for line in md.splitlines() if line.startswith("| `to_vector_env`"))
    # words of the first line and of continuation lines, all in the one row
    assert "parallel envs:" in row and "(encoded text)" in row and "RLlib and CleanRL train on" in row
    assert ":func:" not in md and ":class:" not in md and ":mod:" not in md
    assert "`lang_pz.interop.wrappers`" in md


def test_literal_blocks_lose_their_double_colon_and_titled_or_short_roles_keep_their_name():
    convert = _module().rst_to_markdown
    assert convert("Run it::\n\n    make demo\n") == "Run it:\n\n    make demo\n"
    assert convert("see :class:`~lang_pz.policies.llm.LLMPolicy`") == "see `LLMPolicy`"
    assert convert("see :func:`the loop <lang_pz.training.train>`") == "see `the loop`"
    assert convert("no roles, no tables") == "no roles, no tables"
