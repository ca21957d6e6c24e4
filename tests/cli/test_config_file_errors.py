"""Errors about a YAML config file name the file and, where YAML gives it, the line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lang_pz.bench import load_config
from lang_pz.cli import app
from lang_pz.configfile import ConfigFileError, load_yaml, where
from lang_pz.error import InvalidKwargError

runner = CliRunner()

BENCH_ENTRY = "envs:\n  - id: butterfly/pistonball-v0\n    seeds: 0\n    teams: {r: random}\n"


def _errors(res) -> list[str]:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output, res.output
    return [line for line in res.output.splitlines() if line.startswith("error: ")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("env_id: x\nenv_kwargs: {n_pistons: 5\niterations: 1\n", ":3:11: expected ',' or '}', but got ':'"),
        ("env_id: x\n  iterations: 1\n", ":2:13: mapping values are not allowed here"),
        ("env_id: x\niteratons: 1\n", ":2: 'iteratons' is not a TrainConfig field; did you mean 'iterations'"),
        ("iterations: 0\n", ":1: iterations: Input should be greater than or equal to 1 (got 0)"),
        (
            "langmarl:\n  critc_mode: x\n",
            ":2: langmarl.critc_mode: Extra inputs are not permitted; did you mean 'critic_mode'?",
        ),
        ("iterations: 1\ncritic_mode: nope\n", ":2: langmarl.critic_mode: Input should be"),  # flat, moved to its section
    ],
)
def test_train_config_errors_name_the_file_and_line(tmp_path, text, expected):
    config = tmp_path / "train.yaml"
    config.write_text(text)
    errors = _errors(runner.invoke(app, ["train", "--config", str(config), "--run-dir", str(tmp_path / "r")]))
    assert len(errors) == 1 and f"{config}{expected}" in errors[0], errors


def test_a_value_replaced_on_the_command_line_is_not_blamed_on_the_file(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text("iterations: 1\n")
    errors = _errors(
        runner.invoke(app, ["train", "--config", str(config), "--iterations", "0", "--run-dir", str(tmp_path / "r")])
    )
    assert errors == ["error: iterations: Input should be greater than or equal to 1 (got 0)"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("envs:\n  - id: x\n   seeds: [0\n", ":3:4: expected <block end>, but found '<block mapping start>'"),
        (
            BENCH_ENTRY + "    kwarg: {n_pistons: 5}\n",
            ":5: unknown key 'kwarg' in a bench env entry (did you mean 'kwargs'?)",
        ),
        ("backnd: embedded\n" + BENCH_ENTRY, ":1: unknown key 'backnd' in a bench config (did you mean 'backend'?)"),
        (BENCH_ENTRY.replace("seeds: 0", "seeds: 3-1"), ":2: seed range '3-1' is descending"),
        ("envs: []\n", ": a bench config is a mapping with a non-empty 'envs' list"),
    ],
)
def test_bench_config_errors_name_the_file_and_line(tmp_path, text, expected):
    config = tmp_path / "bench.yaml"
    config.write_text(text)
    with pytest.raises(ConfigFileError) as err:
        load_config(config)
    assert f"{config}{expected}" in str(err.value)
    assert isinstance(err.value, InvalidKwargError) and isinstance(err.value, ValueError)
    errors = _errors(runner.invoke(app, ["bench", "--config", str(config), "--out", str(tmp_path / "out")]))
    assert len(errors) == 1 and f"{config}{expected}" in errors[0], errors


def test_load_yaml_and_where(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("a: 1\nb:\n  - x: 2\n  - y: 3\n    z: 4\n")
    assert load_yaml(config) == {"a": 1, "b": [{"x": 2}, {"y": 3, "z": 4}]}
    assert [where(config, *k) for k in (("a",), ("b", 1), ("b", 1, "z"), ("nope",), ("b", 5))] == [
        f"{config}:1",
        f"{config}:4",
        f"{config}:5",
        str(config),
        str(config),
    ]
    with pytest.raises(ConfigFileError, match=r"nothere.yaml: no such config file"):
        load_yaml(tmp_path / "nothere.yaml")


@pytest.mark.parametrize("text", ["", "\n\n", "# iterations: 3\n"])
def test_an_empty_train_config_is_refused_not_trained_on_defaults(tmp_path, text):
    """A new-user pass: `lang-pz train --config empty.yaml` trained silently on every default."""
    config = tmp_path / "empty.yaml"
    config.write_text(text)
    run_dir = tmp_path / "r"
    errors = _errors(runner.invoke(app, ["train", "--config", str(config), "--run-dir", str(run_dir)]))
    assert errors == [
        f"error: --config {config} holds no settings (the file is empty or only comments); write TrainConfig "
        "fields in it (see `lang-pz train --help`), or drop --config to train on the defaults"
    ]
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--critic-mode", "counterfactual", "--set", "langmarl.critic_mode=central_credit"], "critic_mode"),
        (["--iterations", "2", "--set", "iterations=3"], "iterations"),
    ],
)
def test_a_setting_given_by_its_option_and_by_set_is_refused(tmp_path, args, key):
    errors = _errors(runner.invoke(app, ["train", *args, "--run-dir", str(tmp_path / "r")]))
    assert len(errors) == 1 and f"{key} is given twice on the command line" in errors[0], errors
