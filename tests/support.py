"""What tests share besides fixtures (``pythonpath = tests``: ``from support import DATA``): where
the benchmark data is, and the skip markers of tests that need a system package."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

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

#: Why a test that needs bubblewrap (the default code sandbox) is skipped.
BWRAP_REASON = "bubblewrap is not installed (apt-get install bubblewrap)"
#: Why a test that needs a browser is skipped.
CHROMIUM_REASON = "/usr/bin/chromium-headless-shell is missing (apt-get install chromium-headless-shell)"


def _runs(program: str | None, *args: str) -> bool:
    """Whether ``program`` is an executable regular file that exits 0 with ``args`` (a path that
    exists but is no program, e.g. ``/dev/null`` bound over it to hide a package, counts as missing)."""
    if program is None or not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return False
    try:
        return subprocess.run([program, *args], capture_output=True, timeout=60, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def has_bwrap() -> bool:
    """Whether bubblewrap is installed and runs (``bwrap --version``; probed once a session)."""
    return _runs(shutil.which("bwrap") or shutil.which("bwrap", path="/usr/bin:/bin"), "--version")


#: Debian's headless Chromium, which the viewer's browser tests drive through Playwright.
CHROMIUM = Path("/usr/bin/chromium-headless-shell")


@functools.cache
def has_chromium() -> bool:
    """Whether :data:`CHROMIUM` is an executable program (it is started by the browser tests)."""
    return CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)


#: Tests that run model code in the default sandbox need bubblewrap (``from support import requires_bwrap``;
#: parametrized tests: ``pytest.param(..., marks=requires_bwrap)``).
requires_bwrap = pytest.mark.skipif(not has_bwrap(), reason=BWRAP_REASON)

#: Tests that open the viewer in a real browser need Debian's headless Chromium.
requires_chromium = pytest.mark.skipif(not has_chromium(), reason=CHROMIUM_REASON)

#: The registered envs that run model code in a sandbox (bubblewrap unless told otherwise).
CODE_TASKS = frozenset({"tasks/humaneval-v0", "tasks/mbpp-v0"})


def any_sandbox(env_id: str) -> dict[str, str]:
    """``lang_pz.make`` keyword arguments for a test that needs ``env_id``'s turns, not bubblewrap's
    isolation: none (the default sandbox) where bwrap runs, else the rlimits opt-in, so that the test
    still runs on a machine without bubblewrap (the rlimits mode warns once)."""
    return {"sandbox": "rlimits"} if env_id in CODE_TASKS and not has_bwrap() else {}


def skip_where_bwrap_is_missing(exc: BaseException, what: str) -> None:
    """Skip the running test if ``exc`` is the code sandbox's "bwrap is not installed" error on a
    machine without bubblewrap (``what`` ran as written and needs it); else return."""
    if "bwrap is not installed" in str(exc) and not has_bwrap():
        pytest.skip(f"{what} runs model code in the default sandbox: {BWRAP_REASON}")


def sectioned(fields: dict[str, Any]) -> dict[str, Any]:
    """TrainConfig ``fields`` with every setting of the run's method given flat moved into its
    section (the test helpers take them flat for brevity; a config writes them in the section:
    lang_pz/training/layout.py). Another method's flat setting is left for TrainConfig to refuse."""
    from lang_pz.training.config import TrainConfig
    from lang_pz.training.layout import flat_method_keys

    out = dict(fields)
    method = out.get("method", "langmarl")
    for key, home in flat_method_keys(out, TrainConfig.model_fields).items():
        if home == method:
            out[method] = {**(out.get(method) or {}), key: out.pop(key)}
    return out
