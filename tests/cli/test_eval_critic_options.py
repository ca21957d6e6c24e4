"""``lang-pz eval-critic`` checks every option before it writes anything or loads a model: each
error names the option, the value and the choices (a new-user pass found --out created first,
errors that did not name --evidence / --fault-action, and a misspelt --fault-action run to the end)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lang_pz.cli import app

runner = CliRunner()
PISTONBALL = ["--env", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--kw", "max_cycles=20"]


def _refused(tmp_path, *args: str) -> str:
    out = tmp_path / "out"
    res = runner.invoke(app, ["eval-critic", *args, "--out", str(out), "--backend", "no-such-backend"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert not out.exists(), "an option error must come before --out is created"
    return " ".join(res.output.split())


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            [*PISTONBALL, "--critic-mode", "counterfactual", "--evidence", "upp"],
            "--evidence 'upp' is neither alternatives, reference, default, random nor an action of "
            "butterfly/pistonball-v0; did you mean 'up'? (its actions: down, stay, up)",
        ),
        (
            [*PISTONBALL, "--critic-mode", "counterfactual", "--evidence", "alternative"],
            "did you mean 'alternatives'?",
        ),
        ([*PISTONBALL, "--evidence", "default"], "--evidence default is used only by --critic-mode counterfactual"),
        ([*PISTONBALL, "--evidence-window", "3"], "--evidence-window 3 is used only by --critic-mode counterfactual"),
        (
            [*PISTONBALL, "--critic-mode", "decisive", "--evidence", "reference"],
            "--evidence reference cannot be used with --critic-mode decisive",
        ),
        ([*PISTONBALL, "--fault", "random", "--fault-action", "up"], "--fault-action 'up' is not used by --fault random"),
        (
            [*PISTONBALL, "--fault", "harmful", "--fault-action", "dwn"],
            "--fault-action 'dwn' is not an action of butterfly/pistonball-v0; did you mean 'down'?",
        ),
        ([*PISTONBALL, "--fault", "misplay", "--fault-action", "up,sty"], "--fault-action 'sty' is not an action"),
        ([*PISTONBALL, "--kw", "n_piston=3"], "--env butterfly/pistonball-v0: "),
        (["--critic-mode", "counterfactal"], "unknown --critic-mode 'counterfactal'; did you mean 'counterfactual'"),
    ],
)
def test_a_bad_option_is_named_before_anything_is_written(tmp_path, args, said):
    assert said in _refused(tmp_path, *args)


@pytest.mark.parametrize(
    "args",
    [
        [*PISTONBALL, "--critic-mode", "counterfactual", "--evidence", "up", "--evidence", "alternatives"],
        [*PISTONBALL, "--fault", "misplay", "--fault-action", "up,stay"],
        [*PISTONBALL, "--fault", "harmful", "--fault-action", "down"],
        [*PISTONBALL, "--critic-mode", "decisive", "--evidence", "default"],
    ],
)
def test_good_options_pass_the_checks(tmp_path, args):
    # the checks pass: the next thing refused is the backend spec, and nothing was written
    assert "unknown backend spec 'no-such-backend'" in _refused(tmp_path, *args)
