"""Count import cycles between lang_pz's modules, lazy (in-function) imports included.

Every ``import`` / ``from ... import`` statement of every module is read with :mod:`ast`, at any
depth (a function's lazy import counts like a top-level one); only imports under
``if TYPE_CHECKING:`` are left out, since they never run. ``from a.b import c`` is an edge to
``a.b.c`` when that is a module, else to ``a.b``; a package's ``__init__`` counts as the module
``a.b`` itself (importing ``a.b.c`` is not counted as an edge to ``a.b``, as in pylint's
``cyclic-import``). A cycle is a strongly connected set of two or more modules.

Run ``python tools/import_cycles.py [PACKAGE_DIR]``: it prints each cycle and exits 1 if there
is any (``tests/test_import_cycles.py`` asserts there are none).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file below the package folder ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement below ``node``, skipping the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:
                yield from _imports(other)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _imports(child)


def edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a module: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def cycles(root: Path) -> list[list[str]]:
    """The import cycles of the package at ``root``: each strongly connected set of two or more
    modules (Tarjan's algorithm), sorted."""
    modules = module_names(root)
    graph = {name: sorted(edges(name, path, modules)) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in graph:
        if v not in index:
            visit(v)
    return sorted(found)


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1] / "lang_pz")
    found = cycles(root)
    for c in found:
        print("cycle: " + " <-> ".join(c))
    print(f"{len(found)} import cycle(s) among {len(module_names(root))} modules of {root.name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
