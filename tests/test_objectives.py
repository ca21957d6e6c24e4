"""Named objectives: what validation, the evidence gate and benchmarks optimise."""

from __future__ import annotations

import pytest

import lang_pz
from lang_pz.error import InvalidKwargError
from lang_pz.objectives import default_objective, make_objective
from lang_pz.policies.random import RandomPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory


def _traj(**returns):
    return Trajectory(episode=0, seed=0, returns=returns, finished=True)


def test_zero_sum_games_refuse_the_team_return_and_name_the_seats():
    env = lang_pz.make("classic/rps-v0")
    traj = rollout(env, {a: RandomPolicy() for a in env.possible_agents}, seed=0)
    assert traj.team_return == 0  # the reason: nothing to optimise
    with pytest.raises(InvalidKwargError, match="zero-sum.*'win:player_0'"):
        make_objective("team_return", env.possible_agents, "classic/rps-v0")


def test_win_rate_and_seat_return():
    win = make_objective("win:a", ["a", "b"])
    assert [win(_traj(a=1, b=-1)), win(_traj(a=0, b=0)), win(_traj(a=-1, b=1))] == [1.0, 0.5, 0.0]
    assert make_objective("return:b", ["a", "b"])(_traj(a=1, b=-3)) == -3
    assert win.mean([_traj(a=1, b=-1), _traj(a=-1, b=1)]) == 0.5


def test_soups_count_each_soup_once():
    soups = make_objective("soups", ["player_0", "player_1"])
    assert soups(_traj(player_0=220.0, player_1=220.0)) == 11
    assert default_objective("overcooked/cramped_room-v0") == "soups"
    assert default_objective("butterfly/pistonball-v0") == "team_return"


@pytest.mark.parametrize("spec", ["team", "win", "win:nobody", "return:", "soups:x"])
def test_bad_specs_name_the_valid_forms(spec):
    with pytest.raises(InvalidKwargError):
        make_objective(spec, ["a", "b"])


def test_soups_outside_overcooked_is_refused():
    from lang_pz.error import InvalidKwargError
    from lang_pz.objectives import make_objective

    with pytest.raises(InvalidKwargError, match="'soups' counts Overcooked soups .* butterfly/pistonball-v0 is not"):
        make_objective("soups", ["piston_0"], "butterfly/pistonball-v0")
    make_objective("soups", ["player_0", "player_1"], "overcooked/cramped_room-v0")


@pytest.mark.parametrize("env_id", ["classic/tictactoe", "classic/rps"])
def test_an_id_without_its_version_is_still_a_zero_sum_game(env_id):
    """lang_pz.make resolves an id without version to the registered one; the zero-sum check too."""
    with pytest.raises(InvalidKwargError, match="is a zero-sum game"):
        make_objective("team_return", ["player_1", "player_2"], env_id)
