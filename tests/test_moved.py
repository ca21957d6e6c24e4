"""Names that left a package's ``__all__`` (issue 31, a narrower surface): each is still importable
from the package for one release, with a DeprecationWarning naming the one path that remains
(:mod:`lang_pz._moved`), and the repository itself imports none of them the old way."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(
    ".".join(p.parent.relative_to(ROOT).parts)
    for p in (ROOT / "lang_pz").rglob("__init__.py")
    if not any(part.startswith("_") for part in p.parent.relative_to(ROOT).parts)
)


def moved_of(package: str) -> dict[str, str]:
    """The package's ``_MOVED`` map, read from its source (nothing imported)."""
    tree = ast.parse((ROOT / package.replace(".", "/") / "__init__.py").read_text())
    for node in tree.body:
        target = (
            node.target if isinstance(node, ast.AnnAssign) else node.targets[0] if isinstance(node, ast.Assign) else None
        )
        if isinstance(target, ast.Name) and target.id == "_MOVED" and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


MOVED = {package: moved for package in PACKAGES if (moved := moved_of(package))}
#: Module-level moves (a name that left a module for another, without a package in between).
MOVED_FROM_MODULES = {"lang_pz.training.steps": {"validate": "lang_pz.training.validation.validate"}}
MOVED_FROM_MODULES["lang_pz.training.steps"]["validator"] = "lang_pz.training.validation.validator"


def resolve(path: str) -> object:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_the_packages_name_their_moves():
    assert {"lang_pz.tasks", "lang_pz.training", "lang_pz.skills", "lang_pz.backends", "lang_pz.bench"} <= set(MOVED)
    assert MOVED["lang_pz.tasks"]["load_items"] == "lang_pz.tasks.datasets.load_items"
    assert MOVED["lang_pz.backends"]["ScriptedBackend"] == "lang_pz.test.ScriptedBackend"
    assert MOVED["lang_pz.bench"]["Team"] == "lang_pz.bench.BenchTeam"


@pytest.mark.parametrize(
    ("package", "name"), [(package, name) for package, moved in sorted(MOVED.items()) for name in sorted(moved)]
)
def test_an_old_package_level_name_still_works_and_warns_with_the_new_path(package, name):
    new = MOVED[package][name]
    module_name, _, new_name = new.rpartition(".")
    module = importlib.import_module(package)
    assert name not in module.__all__
    with pytest.warns(DeprecationWarning, match=re.escape(f"from {module_name} import {new_name}")) as caught:
        old = getattr(module, name)
    assert old is resolve(new)
    assert caught[0].filename == __file__  # the warning points at the line that reads the old name


def test_from_import_of_an_old_name_warns_at_the_importing_line():
    with pytest.warns(DeprecationWarning, match=r"lang_pz\.tasks\.load_items moved") as caught:
        from lang_pz.tasks import load_items  # noqa: F401
    assert caught[0].filename == __file__


def test_kept_and_lazy_names_do_not_warn_and_unknown_names_still_fail():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from lang_pz.backends import LlamaCppBackend, make_backend  # noqa: F401
        from lang_pz.tasks import CodeTaskEnv, TaskEnv  # noqa: F401
        from lang_pz.tasks.datasets import load_items  # noqa: F401
    with pytest.raises(ImportError, match="cannot import name 'nonesuch'"):
        from lang_pz.tasks import nonesuch  # noqa: F401
    with pytest.raises(AttributeError, match="module 'lang_pz.critics' has no attribute 'nonesuch'"):
        importlib.import_module("lang_pz.critics").nonesuch


def test_importing_every_package_warns_nothing():
    code = "import importlib\nfor p in %r:\n    importlib.import_module(p)\n" % (PACKAGES,)
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _sources() -> Iterator[tuple[str, str]]:
    """Every Python source of the repository (lang_pz, tests, examples, benchmarks, tools) and
    every Python code block of its Markdown (README, docs, examples, benchmarks)."""
    for area in ("lang_pz", "tests", "examples", "benchmarks", "tools"):
        for path in sorted((ROOT / area).rglob("*.py")):
            if path.resolve() != Path(__file__).resolve():
                yield str(path.relative_to(ROOT)), path.read_text()
    markdown = [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("*.md")]
    for path in sorted([*markdown, *(ROOT / "benchmarks").rglob("*.md")]):
        for i, block in enumerate(re.findall(r"```(?:python|py)?\n(.*?)```", path.read_text(), re.S)):
            code = "\n".join(line[1:] if line[:1] in "+-" else line for line in block.split("\n"))  # diffs
            yield f"{path.relative_to(ROOT)} (code block {i + 1})", code


def _old_uses(source: str) -> Iterator[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a shell block, a fragment
        return
    moved = {**MOVED, **MOVED_FROM_MODULES}
    aliases = {}  # `import lang_pz.training as T`: T -> lang_pz.training
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in moved:
            for alias in node.names:
                if alias.name in moved[node.module]:
                    yield f"line {node.lineno}: from {node.module} import {alias.name}"
        elif isinstance(node, ast.Attribute):
            parts, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in aliases:
                dotted = ".".join([aliases[value.id], *reversed(parts)])
                owner, _, name = dotted.rpartition(".")
                if name in moved.get(owner, {}):
                    yield f"line {node.lineno}: {dotted}"


def test_the_repository_uses_no_moved_name():
    found = [f"{where}: {use}" for where, source in _sources() for use in _old_uses(source)]
    assert not found, "import these from their new paths (the packages' _MOVED):\n" + "\n".join(found)
