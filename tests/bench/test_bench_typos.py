"""``lang-pz bench`` with typos in team, seat, player, objective and backend names (an adversary's
pass): each is refused before an episode is played, naming the value and, where one is close, what
was meant; two teams given the same name are refused (the second replaced the first, unseen)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lang_pz.cli import app

runner = CliRunner()
PISTONBALL = ["--env", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--kw", "max_cycles=20", "--seeds", "0"]
KUHN = ["--env", "openspiel/kuhn_poker-v0", "--objective", "win:player_0", "--seeds", "0"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([*PISTONBALL, "--team", "randm"], "unknown seat 'randm' in team spec 'randm' (did you mean 'random'?)"),
        (
            [*PISTONBALL, "--team", "piston_0=heuristc;*=random"],
            "unknown seat 'heuristc' in team spec 'piston_0=heuristc;*=random' (did you mean 'heuristic'?)",
        ),
        (
            [*PISTONBALL, "--team", "R=:random", "--team", "R=:heuristic"],
            "--team 'R=:heuristic': the name 'R' is already the team 'random'",
        ),
        (
            [*PISTONBALL, "--team", "random", "--backend", "embeded"],
            "unknown backend spec 'embeded' (did you mean 'embedded'?)",
        ),
        (
            [*PISTONBALL, "--team", "random", "--objective", "return:pistn_0"],
            "names 'pistn_0', which is not an agent (did you mean return:piston_0?)",
        ),
        (
            [*PISTONBALL, "--team", "random", "--objective", "team_retrn"],
            "unknown objective 'team_retrn' (did you mean 'team_return'?)",
        ),
        (
            [*KUHN, "--team", "spiel:cfrr"],
            "unknown OpenSpiel player 'cfrr' (did you mean 'cfr'?); players: random, cfr, mcts",
        ),
        (["--env", "openspiel/kuhn_pokr", "--team", "random"], "Did you mean 'openspiel/kuhn_poker'"),
    ],
)
def test_a_typo_is_refused_before_anything_is_played(tmp_path, args, said):
    out = tmp_path / "out"
    res = runner.invoke(app, ["bench", "--out", str(out), *args, "--no-plot"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and said in " ".join(res.output.split())
    assert not (out / "episodes.jsonl").exists()


def test_the_same_team_given_twice_is_one_team(tmp_path):
    res = runner.invoke(
        app, ["bench", "--out", str(tmp_path / "o"), *PISTONBALL, "--team", "random", "--team", "random", "--no-plot"]
    )
    assert res.exit_code == 0, res.output
    rows = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert [r["team"] for r in rows] == ["random"]
