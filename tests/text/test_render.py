"""lang_pz.text.render: observations an agent can read (names, bounds, every number up to a bound)."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from lang_pz.spaces import OBSERVATION_MAX_LENGTH
from lang_pz.text import codec, render
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.render import MAX_NUMBERS_CHARS, Fields, Table, describe


def test_a_vector_shows_its_bounds_and_every_number():
    space = spaces.Box(-1, 1, (3,))
    assert describe(space, np.array([0.5, -0.25, 1.0])) == "(3 numbers, each from -1 to 1): [0.5, -0.25, 1]"
    assert describe(spaces.Box(-np.inf, np.inf, (2,)), np.zeros(2)) == "(2 numbers, unbounded): [0, 0]"


def test_dict_and_tuple_entries_are_named():
    space = spaces.Dict({"pos": spaces.Box(0, 10, (2,)), "mode": spaces.Discrete(3)})
    shown = describe(space, {"pos": np.array([1.0, 2.0]), "mode": 2})
    assert shown == "mode: 2\npos: (2 numbers, each from 0 to 10): [1, 2]"  # gymnasium's Dict sorts its keys
    pair = spaces.Tuple((spaces.Discrete(2), spaces.MultiBinary(3)))
    assert describe(pair, (1, np.array([0, 1, 1]))) == "0: 1\n1: [0, 1, 1]"


def test_a_matrix_is_one_row_a_line_and_zero_runs_are_one_line():
    grid = np.zeros((6, 3))
    grid[0] = [1, 2, 3]
    grid[5] = [0, 0.5, 0]
    text = describe(spaces.Box(0, 5, (6, 3)), grid)
    assert text.splitlines() == [
        "(6 x 3 numbers, each from 0 to 5):",
        "row 0: 1    2  3",
        "row 1 to row 4: all 0",
        "row 5: 0  0.5  0",
    ]


def test_channels_last_arrays_are_one_grid_per_channel():
    obs = np.zeros((3, 3, 2))
    obs[1, 1, 1] = 7
    text = describe(spaces.Box(0, 9, (3, 3, 2)), obs)
    assert "channel 0:\nrow 0 to row 2: all 0\nchannel 1:\nrow 0: 0  0  0\nrow 1: 0  7  0" in text


def test_labels_name_the_numbers_and_wrong_sized_labels_are_not_used():
    fields = Fields.of("angle", ("velocity (x, y)", 2), ("lidar", 4))
    value = np.array([0.1, 1, -1, 0, 0.2, 0.4, 0.8])
    text = describe(spaces.Box(-9, 9, (7,)), value, fields)
    assert text.splitlines()[1:] == ["angle: 0.1", "velocity (x, y): (1, -1)", "lidar: [0, 0.2, 0.4, 0.8]"]
    assert "angle" not in describe(spaces.Box(-9, 9, (8,)), np.zeros(8), fields)
    table = Table(("you", "zombie 1", "zombie 2"), ("x", "y"), absent="absent")
    shown = table.render(np.array([[0.5, 0.25], [0, 0], [0, 0]]))
    assert shown.splitlines() == ["            x     y", "you:      0.5  0.25", "zombie 1 to zombie 2: absent"]
    with pytest.raises(ValueError, match="at least one number"):
        Fields.of(("empty", 0))


def test_every_number_is_written_up_to_the_bound():
    value = np.round(np.linspace(-1, 1, 400), 2)
    text = describe(spaces.Box(-1, 1, (400,)), value)
    assert len(text) <= MAX_NUMBERS_CHARS + 100 and text.split(": ", 1)[1].count(", ") == 399 and "mean" not in text


def test_an_image_over_the_bound_is_block_means_not_three_statistics():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(457, 120, 3)).astype(np.uint8)
    image[:100] = 0
    text = describe(spaces.Box(0, 255, (457, 120, 3), dtype=np.uint8), image)
    assert text.startswith("array of shape (457, 120, 3) (164,520 numbers")
    assert "mean of a block of" in text and "values from 0 to 255" in text
    assert len(text) < OBSERVATION_MAX_LENGTH - 1000 and text.count("\n") > 20  # a coarse picture, rows and channels
    assert "row 0 to row" in text  # the black top is visible as such


def test_the_generic_adapter_uses_the_labels_hook():
    class Named(LanguageAdapter):
        def observation_labels(self, env, agent):
            return Fields.of("a", "b")

    env = type("Env", (), {"observation_space": spaces.Box(0, 1, (2,)), "action_space": spaces.Discrete(2)})()
    assert (
        Named().observation_text(env, None, np.array([0.25, 1.0]))
        == "Observation (2 numbers, each from 0 to 1):\na: 0.25\nb: 1"
    )


def test_render_value_writes_every_number_and_parses_back():
    space = spaces.Box(-5, 5, (100,))
    value = np.linspace(-5, 5, 100).round(2)
    text = codec.render_value(space, value)
    np.testing.assert_allclose(codec.parse_action(space, text), value, rtol=5e-3)
    assert render.fmt(1e300) == "1e+300" and render.fmt(12345.0) == "12345"
