"""The papers' setups (lang_pz.presets): each is a valid config whose parts build, with held-out
phases that share no item; ``lang-pz train --preset`` reads them."""

from __future__ import annotations

import pytest
from support import DATA, requires_bwrap
from typer.testing import CliRunner

from lang_pz.cli import app
from lang_pz.error import InvalidKwargError
from lang_pz.presets import load_preset, preset_names, preset_path
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig, build

EXPECTED = {
    "langmarl-hotpotqa",
    "langmarl-math",
    "langmarl-humaneval",
    *(f"langmarl-overcooked-{x}" for x in ("cramped-room", "asymmetric-advantages", "coordination-ring")),
    *(f"langmarl-overcooked-{x}" for x in ("forced-coordination", "counter-circuit")),
    *(f"langmarl-pistonball-{n}" for n in (10, 12, 16, 20)),
    "maskills-hotpotqa",
    "maskills-transfer-gsm8k",
}


def test_every_setup_of_the_papers_has_a_preset():
    assert set(preset_names()) == EXPECTED


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=requires_bwrap) if "humaneval" in n else n for n in sorted(EXPECTED)]
)
def test_a_preset_builds_with_disjoint_phases(name, monkeypatch):
    monkeypatch.setenv("LANG_PZ_DATA_DIR", str(DATA))
    cfg = TrainConfig.model_validate(load_preset(name))
    parts = build(cfg, backends=ScriptedBackend(["stay"]))  # a scripted stand-in: nothing is asked here
    try:
        train, val, test = (set(parts.items[p]) for p in ("train", "validation", "test"))
        assert train and val and test
        assert not (train & val or train & test or val & test)
    finally:
        parts.close()


def test_preset_errors_name_the_fix():
    with pytest.raises(InvalidKwargError, match="did you mean 'langmarl-math'"):
        preset_path("langmarl-maths")
    runner = CliRunner()
    res = runner.invoke(app, ["train", "--preset", "langmarl-maths"])
    assert res.exit_code == 2 and "langmarl-math" in res.output
    res = runner.invoke(app, ["train", "--preset", "langmarl-math", "--config", str(preset_path("langmarl-math"))])
    assert res.exit_code == 2 and "not both" in res.output
