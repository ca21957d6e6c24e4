"""Count lang_pz's public surface: the names each package's ``__all__`` lists, and more.

Every module under ``lang_pz/`` is read with :mod:`ast` (nothing is imported). It prints, per
package (a folder with an ``__init__.py``), the length of the ``__init__``'s ``__all__``, then
three sums: of the packages' ``__all__`` lists (the names ``from lang_pz.<package> import ...``
offers: the surface issue 31 narrows), of every module's ``__all__`` (packages included), and
the public top-level ``def`` / ``class`` statements (names without a leading underscore, in
modules outside ``_private`` folders). ``__all__ = [...]`` and ``__all__ += [...]`` are counted
(a computed ``__all__`` is not).

Run from the repository::

    python tools/surface.py [ROOT]              # the tree at ROOT (default: this repository)
    python tools/surface.py --base 5f24d77      # before (that commit, by git archive) and after

With ``--base`` the table has a column for the commit and one for the tree, and a row per
package either has.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Surface:
    """What :func:`count` finds in one tree."""

    packages: dict[str, int] = field(default_factory=dict)  #: package -> len(__all__)
    modules_all: int = 0  #: the sum of every module's __all__ (packages included)
    public_defs: int = 0  #: public top-level def / class statements

    @property
    def packages_all(self) -> int:
        """The sum of the packages' ``__all__`` lengths."""
        return sum(self.packages.values())


def all_names(tree: ast.Module) -> list[str] | None:
    """The names a module's ``__all__`` lists (``=`` then any ``+=``), or None without one."""
    names: list[str] | None = None
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            target, value = node.target, node.value
        if not (isinstance(target, ast.Name) and target.id == "__all__" and isinstance(value, (ast.List, ast.Tuple))):
            continue
        listed = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        names = (names or []) + listed if isinstance(node, ast.AugAssign) else listed
    return names


def count(files: Iterable[tuple[str, str]]) -> Surface:
    """Count the surface of ``(path, source)`` pairs, paths relative to the repository
    (``lang_pz/...``)."""
    surface = Surface()
    for path, source in sorted(files):
        parts = Path(path).parts
        tree = ast.parse(source, filename=path)
        if not any(p.startswith("_") for p in parts[:-1]):
            surface.public_defs += sum(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")
                for n in tree.body
            )
        names = all_names(tree)
        if names is None:
            continue
        surface.modules_all += len(names)
        if parts[-1] == "__init__.py":
            surface.packages[".".join(parts[:-1])] = len(names)
    return surface


def tree_files(root: Path) -> list[tuple[str, str]]:
    """The ``lang_pz/**.py`` files of a work tree, as ``(path, source)``."""
    return [(str(f.relative_to(root)), f.read_text()) for f in (root / "lang_pz").rglob("*.py")]


def commit_files(commit: str, repo: Path) -> list[tuple[str, str]]:
    """The ``lang_pz/**.py`` files of ``commit`` (``git archive``), as ``(path, source)``."""
    data = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "lang_pz"], check=True, capture_output=True
    ).stdout
    out = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                handle = tar.extractfile(member)
                assert handle is not None
                out.append((member.name, handle.read().decode()))
    return out


def table(columns: dict[str, Surface]) -> str:
    """The per-package table and the sums, one column per surface."""
    heads = list(columns)
    rows = sorted({p for s in columns.values() for p in s.packages})
    sums = (
        ("sum of packages' __all__", "packages_all"),
        ("sum of every module's __all__", "modules_all"),
        ("public top-level defs", "public_defs"),
    )
    width = max(len(r) for r in [*rows, *(label for label, _ in sums)])
    lines = [f"{'package':{width}s}  " + "  ".join(f"{h:>10s}" for h in heads)]
    for row in rows:
        cells = [str(s.packages[row]) if row in s.packages else "-" for s in columns.values()]
        lines.append(f"{row:{width}s}  " + "  ".join(f"{c:>10s}" for c in cells))
    for label, attr in sums:
        lines.append(f"{label:{width}s}  " + "  ".join(f"{getattr(s, attr):>10d}" for s in columns.values()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("root", nargs="?", type=Path, default=ROOT, help="the repository (default: this one)")
    parser.add_argument("--base", help="a commit to compare with (read by git archive from ROOT's repository)")
    args = parser.parse_args(argv)
    columns: dict[str, Surface] = {}
    if args.base:
        columns[args.base[:10]] = count(commit_files(args.base, args.root))
    columns["tree" if args.base else "__all__"] = count(tree_files(args.root))
    print(table(columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
