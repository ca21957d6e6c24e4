"""What tests share besides fixtures (``pythonpath = tests``: ``from support import DATA``): where
the benchmark data is, and the skip markers of tests that need a system package."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def _data_dir() -> Path:
    """The benchmark data the tests read (real items, never downloaded): ``$LANG_PZ_DATA_DIR``,
    else the ``shared/data`` folder beside the project (as on the development and CI machines)."""
    if os.environ.get("LANG_PZ_DATA_DIR"):
        return Path(os.environ["LANG_PZ_DATA_DIR"])
    beside = Path(__file__).resolve().parents[2] / "shared" / "data"
    return beside if beside.is_dir() else Path("/work/shared/data")


#: Where the tests find benchmark data (``from support import DATA``); tests that need it skip without it.
DATA = _data_dir()

#: Tests that run model code in the default sandbox need bubblewrap (``from support import requires_bwrap``).
requires_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
