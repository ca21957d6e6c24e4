"""Every example runs; the custom method variant writes what ``train()`` writes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from standins import AGENTS, ENV, StandIn, run_contents

from lang_pz.training import TrainConfig, train

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_custom_loop_writes_the_same_run_folder_as_train(tmp_path):
    custom = load_example("custom_loop")
    base = dict(
        env_kwargs=ENV,
        iterations=2,
        episodes_per_iteration=1,
        validation_seeds=[1001],
        langmarl={"counterfactual": ["alternatives"]},
        initial_policy="Always push up.",
    )
    flips = AGENTS  # every piston's optimiser flips its policy; validation and the gate decide
    ours = custom.custom_train(
        TrainConfig(**base, run_dir=str(tmp_path / "custom")), backends=StandIn(flips).backend, margin=0.0
    )  # at margin 0 the variant's gate decides as the stock one
    theirs = train(TrainConfig(**base, run_dir=str(tmp_path / "train")), backends=StandIn(flips).backend)
    a, b = run_contents(tmp_path / "custom"), run_contents(tmp_path / "train")
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], name
    assert ours.final_policies == theirs.final_policies
    assert any(name.endswith("gated.jsonl") for name in a) and any(name.endswith("acceptance.jsonl") for name in a)
    strict = custom.custom_train(
        TrainConfig(**base, run_dir=str(tmp_path / "strict")), backends=StandIn(flips).backend, margin=1e9
    )  # no re-run gains that much: every agent is gated, none changes
    assert all(m.changed_agents == [] for m in strict.metrics) and strict.final_policies == ours.initial_policies
    reasons = [
        json.loads(line)["reason"] for f in (tmp_path / "strict").rglob("gated.jsonl") for line in f.read_text().splitlines()
    ]
    assert any(r.startswith("gain within margin") for r in reasons)  # agents the stock gate let through


def test_the_research_loop_of_modules_makes_the_decisions_of_train(tmp_path):
    research = load_example("research_loop")
    base = dict(
        env_kwargs=ENV,
        iterations=2,
        episodes_per_iteration=2,
        validation_seeds=[1001],
        langmarl={"counterfactual": ["alternatives"]},
        initial_policy="Always push up.",
    )
    ours = research.research_train(TrainConfig(**base, run_dir=str(tmp_path / "ours")), backends=StandIn(AGENTS).backend)
    theirs = train(TrainConfig(**base, run_dir=str(tmp_path / "train")), backends=StandIn(AGENTS).backend)
    assert ours.state.policies == theirs.final_policies == ours.named_parameters()
    a, b = run_contents(tmp_path / "ours"), run_contents(tmp_path / "train")
    assert sorted(a) == sorted(b)  # the same files, acceptance records included ...
    for name in a:
        assert a[name] == b[name], name  # ... with the same contents
    assert any(name.endswith("acceptance.jsonl") for name in a)
    assert any(m.accepted for m in theirs.metrics)  # premise: something was accepted


def test_the_optimizer_steps_only_after_backward():
    from lang_pz.modules import LanguagePolicyOptimizer, TextParameters

    class Stub:
        name = "stub"

        def start(self):
            return None

    with pytest.raises(ValueError, match=r"call loss.backward\(\) first"):
        LanguagePolicyOptimizer(TextParameters(Stub())).step()


def test_wrap_your_env():
    ret = load_example("wrap_your_env").main(seed=3)
    assert ret in (-5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0)  # five rounds of +1 / 0 / -1


def test_evaluate_a_finished_run(tmp_path):
    run = tmp_path / "run"
    train(
        TrainConfig(
            env_kwargs=ENV, iterations=1, validation_seeds=[1001], initial_policy="Always push up.", run_dir=str(run)
        ),
        backends=StandIn(AGENTS).backend,
    )
    out = load_example("evaluate_run").main(str(run), [3000, 3001], backend=StandIn().backend)
    assert set(out) == {"initial", "final"} and all(len(v) == 2 for v in out.values())
    with pytest.raises(SystemExit, match="used for training or validation"):
        load_example("evaluate_run").main(str(run), [1001], backend=StandIn().backend)


def test_mixed_team_with_a_scripted_llm_stand_in():
    from lang_pz.test import ScriptedBackend

    first_choice = ScriptedBackend(lambda req: req.choices[0])  # the first offered action, every time
    out = load_example("mixed_team").main(first_choice)
    assert set(out) == {"overcooked", "pistonball"}


@pytest.mark.integration
@pytest.mark.parametrize(
    ("name", "args"),
    # mixed_team as written makes ~100 embedded-model calls (15 min and more on a busy machine):
    # here shortened by its own options, so the script, its options and the real model still run
    [("wrap_your_env", []), ("mixed_team", ["--ticks", "4", "--cycles", "5"])],
    ids=["wrap_your_env", "mixed_team"],
)
def test_example_scripts_run_as_written(name, args, tmp_path):
    import os
    import subprocess

    env = {**os.environ, "LANG_PZ_CACHE_DIR": str(tmp_path / "cache")}
    res = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    if name == "mixed_team":
        assert "soup(s) in 4 ticks" in res.stdout and "Pistonball: team return" in res.stdout


def _run_example(name: str, *args: str, tmp_path: Path, timeout: int = 900, home: Path | None = None) -> str:
    import os
    import subprocess

    env = {**os.environ, "LANG_PZ_CACHE_DIR": str(tmp_path / "cache")}
    if home is not None:  # programs that write under ~ (RLlib's ~/ray_results)
        env["HOME"] = str(home)
    res = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def test_interop_supersuit_tutorial(tmp_path):
    _run_example("interop_supersuit", tmp_path=tmp_path)


def test_interop_sb3_tutorial(tmp_path):
    pytest.importorskip("stable_baselines3", reason="the sb3 extra is not installed: pip install 'lang_pz[sb3]'")
    _run_example("interop_sb3", "--steps", "200", tmp_path=tmp_path)


def test_interop_torchrl_tutorial(tmp_path):
    pytest.importorskip("torchrl", reason="the torchrl extra is not installed: pip install 'lang_pz[torchrl]'")
    _run_example("interop_torchrl", "--frames", "200", tmp_path=tmp_path)


def test_bench_quickstart(tmp_path):
    _run_example("bench_quickstart", "--out", str(tmp_path / "bq"), "--seeds", "2", tmp_path=tmp_path)
    assert (tmp_path / "bq").is_dir()


def test_interop_rllib_tutorial(tmp_path):
    pytest.importorskip("ray.rllib", reason="the rllib extra is not installed: pip install 'lang_pz[rllib]'")
    out = _run_example("interop_rllib", "--iterations", "1", "--batch", "100", tmp_path=tmp_path, home=tmp_path)
    assert "iteration 0: env steps sampled 100" in out and "RLlib PPO trained 1 iterations" in out
    assert any((tmp_path / "ray_results").iterdir())  # RLlib's logs: under $HOME (here tmp_path)


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.py")))
def test_every_example_answers_help_without_running(name, tmp_path):
    import ast

    first_line = ast.get_docstring(ast.parse((EXAMPLES / f"{name}.py").read_text())).splitlines()[0]
    out = _run_example(name, "--help", tmp_path=tmp_path, timeout=120)  # a run would take minutes, not a usage
    assert out.startswith("usage:") and " ".join(first_line.split())[:40] in " ".join(out.split())
