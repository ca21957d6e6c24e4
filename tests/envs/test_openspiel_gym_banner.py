"""``make("openspiel/...")`` prints no Gym deprecation banner (shimmy imports the old ``gym``),
and the banner is suppressed at lang_pz's import only, not for a program that imports gym."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")
pytest.importorskip("shimmy")
pytest.importorskip("gym_notices")

BANNER = "Gym has been unmaintained"
ROOT = Path(__file__).resolve().parents[2]


def _stderr(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    return res.stderr


def test_make_openspiel_prints_no_gym_banner():
    err = _stderr(
        "import lang_pz\n"
        "env = lang_pz.make('openspiel/kuhn_poker')\n"
        "env.reset(seed=0)\n"
        "import gym_notices.notices as n\n"
        "assert n.notices, 'the banner table was left empty'\n"
    )
    assert BANNER not in err, err


def test_a_program_that_imports_gym_itself_still_gets_the_banner():
    err = _stderr("import gym\nimport lang_pz\nlang_pz.make('openspiel/kuhn_poker')\n")
    assert BANNER in err
