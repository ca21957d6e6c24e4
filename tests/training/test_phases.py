"""lang_pz.training.phases: each phase's env kwargs, the items its seeds play, and the check that
no item is played in two phases (the issue: 9 of 20 HumanEval test items were training items)."""

from __future__ import annotations

import pytest
from support import DATA

from lang_pz.error import InvalidKwargError
from lang_pz.training.phases import (
    FIRST_OBSERVATION,
    PHASES,
    check_disjoint,
    check_phases,
    default_phase_kwargs,
    items_played,
    phase_env_kwargs,
)

SEEDS = {"train": list(range(100)), "validation": list(range(1000, 1020)), "test": list(range(2000, 2020))}


def test_phase_kwargs_precedence_defaults_then_shared_then_per_phase():
    defaults = {p: {"split": p} for p in PHASES}
    shared = {"turns": ["solver"], "data_dir": "/d"}
    per = {"test": {"data_dir": "/full", "split": "all"}}
    assert phase_env_kwargs(shared, per, "train", defaults=defaults) == {"split": "train", **shared}
    assert phase_env_kwargs(shared, per, "test", defaults=defaults) == {
        "split": "all",
        "turns": ["solver"],
        "data_dir": "/full",
    }
    assert phase_env_kwargs({"split": "dev"}, None, "validation", defaults=defaults) == {"split": "dev"}
    assert phase_env_kwargs({}, {}, "train") == {}
    out = phase_env_kwargs(shared, None, "train")
    out["x"] = 1
    assert "x" not in shared  # a new dict


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (
            ({}, None, "val"),
            r"phase must be one of \['train', 'validation', 'test'\], got 'val' \(did you mean 'validation'",
        ),
        (({}, {"dev": {}}, "train"), r"a key of phase_env_kwargs must be one of .* got 'dev'"),
        (
            ({}, {"test": "split=test"}, "test"),
            r"phase_env_kwargs\['test'\] must be a dict of keyword arguments, got 'split=test'",
        ),
        (({}, ["test"], "test"), "phase_env_kwargs must be a dict of phase -> keyword arguments"),
        ((["a"], None, "test"), "env_kwargs must be a dict"),
    ],
)
def test_phase_kwargs_errors_name_the_value(args, match):
    with pytest.raises(InvalidKwargError, match=match):
        phase_env_kwargs(*args)


def test_default_phase_kwargs_for_envs_that_take_a_split():
    expected = {p: {"split": p} for p in PHASES}
    assert default_phase_kwargs("tasks/humaneval-v0") == expected
    assert default_phase_kwargs("overcooked/cramped_room-v0") == expected
    assert default_phase_kwargs("classic/tictactoe-v0") == {}


def test_check_disjoint_names_the_shared_items_and_the_fix():
    check_disjoint(["a", "b", "a"], ["c"], [])  # repeats within a phase are fine
    with pytest.raises(InvalidKwargError) as exc:
        check_disjoint(["a", "b", "c"], ["b", "d"], ["a", "b", "e"])
    text = str(exc.value)
    assert "train and validation share 1 of their items ('b')" in text
    assert "train and test share 2 of their items ('a', 'b')" in text
    assert "validation and test share 1" in text and "phase_env_kwargs" in text and "split" in text


@pytest.mark.skipif(not (DATA / "math500").is_dir(), reason="benchmark data folder not available")
def test_check_phases_passes_with_the_default_splits_and_fails_with_one_split():
    env_kwargs = {"data_dir": str(DATA), "turns": ["solver"]}
    defaults = default_phase_kwargs("tasks/math500-v0")
    kwargs = {p: phase_env_kwargs(env_kwargs, {}, p, defaults=defaults) for p in PHASES}
    played = check_phases("tasks/math500-v0", kwargs, SEEDS)
    assert [len(set(played[p])) for p in PHASES] == [100, 20, 20]
    assert played["validation"] == items_played("tasks/math500-v0", kwargs["validation"], SEEDS["validation"])
    one = {p: {**env_kwargs, "split": "all"} for p in PHASES}  # the same split in every phase
    with pytest.raises(InvalidKwargError, match=r"train and validation share \d+ of their items \('test/"):
        check_phases("tasks/math500-v0", one, SEEDS)


def test_overcooked_fixed_start_fails_seeded_starts_pass():
    fixed = {p: {"horizon": 5} for p in PHASES}
    few = {p: s[:3] for p, s in SEEDS.items()}
    with pytest.raises(InvalidKwargError, match="share 1 of their items .'cramped_room: player_0 .1,2. up"):
        check_phases("overcooked/cramped_room-v0", fixed, few)
    seeded = {p: {"horizon": 5, "split": p} for p in PHASES}
    played = check_phases("overcooked/cramped_room-v0", seeded, SEEDS)
    assert len(set(played["train"])) == 100 and played["validation"][0].startswith("cramped_room: player_0")


def test_envs_without_item_ids_compare_first_observations_and_only_warn():
    ids = items_played("classic/tictactoe-v0", {}, [0, 1])
    assert ids[0] == ids[1] and ids[0].startswith(FIRST_OBSERVATION)
    with pytest.warns(UserWarning, match="identical first observations"):
        check_phases("classic/tictactoe-v0", {p: {} for p in PHASES}, {"train": [0], "validation": [1000]})
    with pytest.raises(InvalidKwargError, match="phase 'test' has seeds but no env kwargs"):
        check_phases("classic/tictactoe-v0", {"train": {}}, {"train": [0], "test": [1]})
