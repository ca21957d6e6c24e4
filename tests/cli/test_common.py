"""``--kw`` values: exponent numbers are numbers, a repeated key is refused, a non-finite number is
named where a number is needed (lang_pz.cli.common, lang_pz.configfile.safe_load)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from lang_pz.cli import app
from lang_pz.cli.common import parse_kwargs
from lang_pz.configfile import load_yaml

runner = CliRunner()


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e3", 1000.0), ("-2.5e-1", -0.25), ("+1E3", 1000.0), (".5e2", 50.0), ("5", 5), ("1.5", 1.5), (".inf", float("inf"))],
)
def test_numbers_with_an_exponent_are_floats(text, value):
    got = parse_kwargs([f"x={text}"])["x"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text", ["e3", "1e", "abc", "inf", "nan", "1e3x"])
def test_text_that_is_not_a_number_stays_text(text):
    assert parse_kwargs([f"x={text}"]) == {"x": text}
    assert parse_kwargs([f"x='{text}'"]) == {"x": text}


def test_a_quoted_exponent_number_stays_text():
    assert parse_kwargs(["x='1e3'"]) == {"x": "1e3"}


def test_a_config_file_reads_exponent_numbers_too(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("env_kwargs:\n  time_penalty: -1e-2\n")
    assert load_yaml(path) == {"env_kwargs": {"time_penalty": -0.01}}


def test_a_key_given_twice_is_refused_naming_both():
    with pytest.raises(typer.BadParameter, match=r"name is given twice \(name='a' and 'name=b'\); give each key once"):
        parse_kwargs(["name=a", "name=b"])


def test_play_takes_an_exponent_time_penalty_and_refuses_inf():
    base = ["play", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--policy", "heuristic", "--episodes", "1"]
    res = runner.invoke(app, [*base, "--kw", "time_penalty=-1e-1"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, [*base, "--kw", "time_penalty=inf"])
    assert res.exit_code == 2 and "time_penalty must be a finite number, got 'inf'" in res.output
    res = runner.invoke(app, [*base, "--kw", "n_pistons=6"])
    assert res.exit_code != 0 and "n_pistons is given twice" in res.output


def test_play_names_turns_given_as_one_word():
    res = runner.invoke(app, ["play", "tasks/gsm8k-v0", "--kw", "source=demo", "--kw", "turns=nosuch", "--policy", "random"])
    assert res.exit_code == 2 and "got 'nosuch'" in res.output and "turns=[solver, verifier]" in res.output


def test_a_set_key_given_twice_is_refused_like_a_kw_key(tmp_path):
    from lang_pz.cli.settings import set_fields

    with pytest.raises(ValueError, match=r"--set iterations is given twice \(iterations='1' and 'iterations=2'\)"):
        set_fields(["iterations=1", "iterations=2"])
    with pytest.raises(ValueError, match="given twice"):
        set_fields(["langmarl.critic_mode=independent", " langmarl.critic_mode =counterfactual"])
    assert set_fields(["iterations=1", "langmarl.critic_mode=independent"]) == {
        "iterations": 1,
        "langmarl": {"critic_mode": "independent"},
    }
    run_dir = tmp_path / "r"
    res = runner.invoke(app, ["train", "--set", "iterations=0", "--set", "iterations=3", "--run-dir", str(run_dir)])
    assert res.exit_code == 2 and "iterations is given twice" in res.output and not run_dir.exists()
