"""Two runs of the same seed give the same infos, except the documented timing key.

The code tasks used to differ run to run in two ways: tracebacks named the sandbox's random
temporary folder (``/tmp/lang_pz_sandbox_k2j3.../main.py``) and ``info["score"]`` held the
wall-clock ``duration_s``. Now the folder always shows as ``/sandbox`` and every duration is in
``info["timing"]`` (:data:`lang_pz.tasks.base.TIMING_KEY`).
"""

from __future__ import annotations

import copy

import pytest
from support import requires_bwrap

import lang_pz
from lang_pz.tasks.base import TIMING_KEY

CODE_ENVS = ("tasks/mbpp-v0", "tasks/humaneval-v0")
SCRIPTS = {
    "tasks/mbpp-v0": [
        "def sum_squares(xs):\n    return undefined_name + 1\n",
        "assert sum_squares([1]) == 1\nassert sum_squares([]) == 0",
        "def sum_squares(xs):\n    raise ValueError('still wrong')\n",
    ],
    "tasks/humaneval-v0": [
        "def add_one(xs):\n    return [x + 2 for x in xs]\n",
        "assert add_one([1]) == [2]",
        "def add_one(xs):\n    return [x + 1 for x in xs]\n",
    ],
    "tasks/hotpotqa-v0": ["Evidence: 1.1, 2.2", "Answer: Vell"],
    "tasks/gsm8k-v0": ["#### 25", "No: #### 26"],
    "tasks/math500-v0": ["\\boxed{5}", "Correct"],
}


def _episode(env_id, seed):
    env = lang_pz.make(env_id, source="demo")
    env.reset(seed=seed)
    infos = []
    for text in SCRIPTS[env_id]:
        env.step(text)
        infos.append(copy.deepcopy(env.infos))
    return infos


def _without_timing(infos):
    return [{a: {k: v for k, v in info.items() if k != TIMING_KEY} for a, info in step.items()} for step in infos]


#: The code envs run in the default sandbox: bubblewrap.
ENV_IDS = [pytest.param(e, marks=requires_bwrap) if e in CODE_ENVS else e for e in sorted(SCRIPTS)]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_infos_except_timing(env_id):
    first, second = _episode(env_id, 3), _episode(env_id, 3)
    assert _without_timing(first) == _without_timing(second)
    if env_id in ("tasks/mbpp-v0", "tasks/humaneval-v0"):
        final = first[-1]
        assert all("duration" not in str(k) for k in final["coder"]["score"])
        assert set(final["coder"][TIMING_KEY]) == {"sandbox_wall_s", "sandbox_cpu_s"}  # hidden tests
        assert set(first[1]["tester"][TIMING_KEY]) == {"sandbox_wall_s", "sandbox_cpu_s"}  # tester run
        assert TIMING_KEY not in first[0]["coder"]  # writing code runs nothing


@requires_bwrap
def test_tracebacks_show_a_fixed_folder():
    final = _episode("tasks/mbpp-v0", 0)[-1]
    error = final["coder"]["score"]["error"]
    assert "Error" in error  # what the code's own process raised, judged outside it
    assert "lang_pz_sandbox_" not in error and "/tmp" not in error
