"""No import cycles between lang_pz's modules, lazy (in-function) imports included
(``tools/import_cycles.py``)."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "tools" / "import_cycles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lang_pz_has_no_import_cycles():
    assert _tool().cycles(ROOT / "lang_pz") == []


def test_a_lazy_import_cycle_is_found_and_a_type_checking_one_is_not(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from pkg.b import x\n",
        "b.py": "x = 1\n\ndef f():\n    from pkg import a\n    return a\n",
        "sub/__init__.py": "",
        "sub/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import d\n",
        "sub/d.py": "from . import c\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(textwrap.dedent(text))
    assert _tool().cycles(pkg) == [["pkg.a", "pkg.b"]]
