"""Overcooked-AI 1.1.0 on NumPy 2 (constraints.txt pins numpy 2): lang_pz restores the removed NumPy
alias it uses (:func:`lang_pz.envs.overcooked.core.numpy2_aliases`), and its planners, greedy partner
and both action levels then play whole episodes."""

from __future__ import annotations

import ast
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("overcooked_ai_py")

import lang_pz
from lang_pz.envs.overcooked.core import NUMPY2_ALIASES, numpy2_aliases
from lang_pz.policies.overcooked import overcooked_partner

#: np.<name> that overcooked_ai uses and lang_pz does not restore: removed in NumPy 1.24 (so missing
#: from NumPy 1.26 too), used only by its random-layout generator (mdp/layout_generator.py:327).
NOT_RESTORED = {"int"}


def _overcooked_source() -> Path:
    import overcooked_ai_py

    return Path(overcooked_ai_py.__file__).parent


def test_the_venv_runs_numpy_2():
    assert int(np.__version__.split(".")[0]) >= 2, f"numpy {np.__version__}: constraints.txt pins numpy 2"
    assert not hasattr(np, "float_"), "a NumPy 2 without NEP 52's removals"  # it really is NumPy 2


def test_aliases_are_the_numpy_1_values_and_idempotent():
    numpy2_aliases()
    assert np.Inf == np.inf and np.Inf > 1e308  # type: ignore[attr-defined]
    assert numpy2_aliases() == []  # already there: nothing set twice
    assert set(NUMPY2_ALIASES) == {"Inf"}


def test_every_numpy_name_overcooked_ai_uses_resolves():
    """Every top-level ``np.<name>`` in overcooked_ai_py's source exists on this NumPy (after
    lang_pz's aliases), except the documented :data:`NOT_RESTORED`."""
    used: dict[str, list[str]] = {}
    root = _overcooked_source()
    for path in sorted(root.rglob("*.py")):
        with warnings.catch_warnings():  # its "\ " escapes in plain strings
            warnings.simplefilter("ignore")
            tree = ast.parse(path.read_text())
        for node in ast.walk(tree):  # code only: not comments or docstrings
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "np":
                used.setdefault(node.attr, []).append(f"{path.relative_to(root)}:{node.lineno}")
    assert {"Inf", "array", "zeros"} <= set(used), "overcooked_ai_py's source was not found"
    numpy2_aliases()
    missing = {name: where for name, where in used.items() if not hasattr(np, name) and name not in NOT_RESTORED}
    assert missing == {}, f"NumPy {np.__version__} lacks names overcooked_ai uses: {missing}"
    assert used["int"] == ["mdp/layout_generator.py:327"]  # the one NOT_RESTORED use


def test_without_the_aliases_overcooked_ai_cannot_even_be_imported():
    """Why the aliases exist: a fresh interpreter importing overcooked_ai's env module without lang_pz."""
    bare = "import overcooked_ai_py.mdp.overcooked_env"
    via = "import lang_pz.envs.overcooked; " + bare + "; print('ok')"
    fail = subprocess.run([sys.executable, "-c", bare], capture_output=True, text=True, timeout=300)
    ok = subprocess.run([sys.executable, "-c", via], capture_output=True, text=True, timeout=300)
    assert fail.returncode != 0 and "np.Inf" in fail.stderr, fail.stderr[-500:]
    assert ok.returncode == 0 and ok.stdout.strip() == "ok", ok.stderr[-500:]


@pytest.mark.parametrize(("actions", "horizon"), [("primitive", 120), ("macro", 60)])
def test_greedy_team_delivers_soups_on_numpy_2(actions, horizon):
    """The motion planner, the medium-level action manager and GreedyHumanModel (overcooked_ai's
    ``np.Inf`` users) play a whole episode; the greedy pair cooks and serves on cramped_room."""
    env = lang_pz.make("overcooked/cramped_room-v0", actions=actions, horizon=horizon)
    team = {a: overcooked_partner("greedy", env, a, seed=i) for i, a in enumerate(env.possible_agents)}
    obs, infos = env.reset(seed=0)
    steps, total = 0, 0.0
    while env.agents:
        obs, rewards, _, _, infos = env.step({a: team[a](obs[a], infos[a]) for a in env.agents})
        steps += 1
        total += sum(rewards.values())
    game = env.unwrapped
    assert game.game_state.timestep == horizon
    assert game.soups_delivered >= 1 and total == 2 * 20.0 * game.soups_delivered
    assert all(isinstance(text["text"], str) and "np." not in text["text"] for text in obs.values())
