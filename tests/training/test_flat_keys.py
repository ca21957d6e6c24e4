"""A method's setting has one way to be written: in its section (``langmarl: {critic_mode: ...}``,
``--set langmarl.critic_mode=...``). A flat key still works for one release, with a
DeprecationWarning naming the sectioned key (lang_pz/training/layout.py); ``lang-pz train`` says
it once per key instead."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from lang_pz.cli import app
from lang_pz.configfile import load_yaml
from lang_pz.presets import load_preset, preset_names
from lang_pz.training import TrainConfig

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_a_flat_key_warns_naming_its_section_and_still_lands_there():
    with pytest.warns(DeprecationWarning) as caught:
        flat = TrainConfig(critic_mode="counterfactual", counterfactual=["alternatives"])
    assert [str(w.message).split(" given flat")[0] for w in caught] == [
        "'critic_mode' is a setting of method 'langmarl'",
        "'counterfactual' is a setting of method 'langmarl'",
    ]
    assert "write it in the langmarl section (langmarl.critic_mode; " in str(caught[0].message)
    assert {w.filename for w in caught} == {__file__}  # the line that built the config, not lang_pz's
    assert flat.langmarl.critic_mode == "counterfactual" and flat.langmarl.counterfactual == ["alternatives"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        sectioned = TrainConfig(langmarl={"critic_mode": "counterfactual", "counterfactual": ["alternatives"]})
        assert TrainConfig.model_validate_json(sectioned.model_dump_json()) == sectioned  # config.json: no warning
    assert flat == sectioned


def test_a_flat_key_of_another_method_at_its_default_is_dropped_with_the_warning():
    with pytest.warns(DeprecationWarning, match=r"'skills' is a setting of method 'maskills' given flat.*ignored; drop it"):
        config = TrainConfig(skills=None)
    assert config.maskills is None
    with pytest.warns(DeprecationWarning, match=r"maskills\.skill_credit"):
        skills = TrainConfig(method="maskills", skill_credit="episode")
    assert skills.maskills.skill_credit == "episode"


@pytest.mark.parametrize("name", preset_names())
def test_the_presets_are_sectioned(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        TrainConfig(**load_preset(name))


def test_make_demos_config_loads_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        config = TrainConfig(**load_yaml(ROOT / "examples" / "demo.yaml"))
    assert config.langmarl.critic_mode == "counterfactual"


def _train(tmp_path: Path, *args: str) -> str:
    res = runner.invoke(app, ["train", *args, "--iterations", "0", "--run-dir", str(tmp_path / "r")])
    assert "error: iterations: Input should be greater than or equal to 1 (got 0)" in res.output, res.output
    return " ".join(res.output.split())


def test_the_command_line_says_once_per_flat_key_of_a_file_or_of_set(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("iterations: 1\ncritic_mode: counterfactual\ncounterfactual: [alternatives]\n")
    out = _train(tmp_path, "--config", str(config), "--set", "evidence_gate=false")
    assert out.count(f"warning: {config}:2: 'critic_mode' is a setting of method 'langmarl' given flat") == 1
    assert out.count("(langmarl.critic_mode; on the command line --set langmarl.critic_mode=...)") == 1
    assert out.count(f"warning: {config}:3: 'counterfactual' is a setting") == 1
    assert out.count("warning: --set evidence_gate=False: 'evidence_gate' is a setting of method 'langmarl'") == 1
    assert "DeprecationWarning" not in out


def test_the_command_line_says_nothing_for_sections_and_its_own_options(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("langmarl:\n  counterfactual: [alternatives]\n")
    out = _train(
        tmp_path, "--config", str(config), "--critic-mode", "counterfactual", "--set", "langmarl.evidence_gate=false"
    )
    assert "warning:" not in out and "given flat" not in out
    assert "warning:" not in _train(tmp_path, "--config", str(ROOT / "examples" / "demo.yaml"))
    # --critic-mode replaces a flat critic_mode of the file (the command line wins, as before)
    config.write_text("critic_mode: independent\ncounterfactual: [alternatives]\n")
    out = _train(tmp_path, "--config", str(config), "--critic-mode", "counterfactual")
    assert out.count("'critic_mode' is a setting of method 'langmarl' given flat") == 1


def test_an_unknown_key_names_the_closest_one_of_its_level():
    with pytest.raises(ValidationError, match=r"iteratons\n.*did you mean 'iterations'\?"):
        TrainConfig(iteratons=3)
    with pytest.raises(ValidationError, match=r"langmarl\.critc_mode\n.*did you mean 'critic_mode'\?"):
        TrainConfig(langmarl={"critc_mode": "counterfactual"})
    with pytest.raises(ValidationError) as info:
        TrainConfig(zzzzzz=1)
    assert "did you mean" not in str(info.value)
