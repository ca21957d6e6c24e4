"""Every ``python`` code block of the documentation site (``docs/**/*.md``) runs as written.

The same mechanism as ``tests/test_readme.py``: a page's ``python`` blocks run in order in one
namespace (one namespace per page), in a temporary folder, with the embedded model and the
benchmark data found through ``LANG_PZ_DATA_DIR``, as a user sets it. A block that cannot run
here (it needs a server, a GPU or an hour) is fenced as ``py`` instead of ``python``: it is
highlighted the same, and not run. Shell commands are in plain fences.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import DATA, skip_where_bwrap_is_missing  # $LANG_PZ_DATA_DIR or shared/data beside the project

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)


def nav_pages() -> set[str]:
    """The pages mkdocs.yml's nav lists (``- Title: path.md`` lines)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return set(re.findall(r"^\s*-\s[^\n]*?:\s*(\S+\.md)\s*$", text, flags=re.MULTILINE))


def test_the_site_has_runnable_pages_every_page_is_in_the_nav_and_no_machine_paths():
    assert len(PAGES) >= 20
    with_code = [p for p in PAGES if python_blocks(p)]
    assert len(with_code) >= 5, [p.name for p in with_code]
    listed = nav_pages()
    missing = [str(p.relative_to(DOCS)) for p in PAGES if str(p.relative_to(DOCS)) not in listed]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text and "/work/" not in text, page


def test_every_api_page_documents_a_module_that_imports():
    import importlib

    for page in sorted((DOCS / "api").glob("*.md")):
        modules = re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
        assert modules, page
        for name in modules:
            importlib.import_module(name)


@pytest.mark.integration
@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: str(p.relative_to(DOCS)))
def test_every_docs_python_block_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LANG_PZ_DATA_DIR", str(DATA))
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path / "cache"))
    namespace: dict[str, object] = {"__name__": "docs"}
    for i, block in enumerate(python_blocks(page)):
        try:
            exec(compile(block, f"{page.relative_to(DOCS)} python block {i}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message names the page and block
            skip_where_bwrap_is_missing(exc, f"{page.relative_to(DOCS)} python block {i}")
            raise AssertionError(f"{page.relative_to(DOCS)} python block {i} failed: {exc!r}\n{block}") from exc


def test_every_relative_link_of_the_readme_and_the_pages_names_a_file_that_exists():
    """The README links the site's pages and the screenshots; mkdocs checks links between pages,
    this checks the README's too (and image links everywhere)."""
    checked = 0
    for source in [ROOT / "README.md", *PAGES]:
        text = source.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (source.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{source.relative_to(ROOT)} links {target}, which does not exist"
            checked += 1
    assert checked >= 30
