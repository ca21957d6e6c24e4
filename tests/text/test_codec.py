"""Property tests of the generic text codec (lang_pz.text.codec) and the classic-game grammars."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lang_pz.envs.classic.tictactoe import tictactoe_action, tictactoe_phrases, tictactoe_square
from lang_pz.envs.classic.turns import parse_phrases
from lang_pz.error import ActionParseError
from lang_pz.text.codec import (
    action_vocabulary,
    describe_action_space,
    fallback_action,
    parse_action,
    render_value,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NAMES = ["down", "stay", "up"]
SPACES = {
    "discrete": (spaces.Discrete(5), None),
    "discrete_start": (spaces.Discrete(4, start=-1), None),
    "discrete_named": (spaces.Discrete(3), NAMES),
    "box_scalar": (spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32), None),
    "box_vector": (spaces.Box(-2.0, 3.0, shape=(3,), dtype=np.float32), None),
    "box_matrix": (spaces.Box(0.0, 10.0, shape=(2, 2), dtype=np.float64), None),
    "multidiscrete": (spaces.MultiDiscrete([3, 4, 2]), None),
    "dict": (spaces.Dict({"move": spaces.Discrete(3), "force": spaces.Box(0.0, 1.0, shape=(1,))}), None),
}
SPACE_IDS = sorted(SPACES)


def _contains(space: spaces.Space, value) -> bool:
    if isinstance(space, spaces.Dict):
        return set(value) == set(space.spaces) and all(_contains(space[k], value[k]) for k in space.spaces)
    return space.contains(np.asarray(value, dtype=space.dtype) if not isinstance(space, spaces.Discrete) else value)


def _parses_or_rejects(space: spaces.Space, text: str, names=None, mask=None):
    """parse_action returns a value of the space or raises ActionParseError, nothing else."""
    try:
        value = parse_action(space, text, names=names, mask=mask)
    except ActionParseError as exc:
        assert exc.text == text, "ActionParseError must carry the raw text"
        assert isinstance(exc.reason, str) and exc.reason
        return None
    assert _contains(space, value), f"{text!r:.100} parsed to {value!r}, outside {space}"
    return value


# -- never raises anything but ActionParseError -------------------------------------------

huge_text = st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=12), st.integers(2_000, 40_000))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
json_text = st.builds(lambda v, wrap: json.dumps({"action": v} if wrap else v), json_values, st.booleans())
anything = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8")),
    huge_text,
    json_text,
    st.from_regex(r"(action:\s*)?[-+]?\d{0,400}(\.\d*)?(e[-+]?\d{1,4})?", fullmatch=True),
)


@pytest.mark.parametrize("key", SPACE_IDS)
@SETTINGS
@given(text=anything)
def test_parse_never_crashes(key, text):
    space, names = SPACES[key]
    _parses_or_rejects(space, text, names=names)


@SETTINGS
@given(text=anything, mask=st.lists(st.integers(0, 1), min_size=3, max_size=3))
def test_parse_respects_mask(text, mask):
    mask = np.asarray(mask, dtype=np.int8)
    value = _parses_or_rejects(spaces.Discrete(3), text, names=NAMES, mask=mask)
    if value is not None:
        assert mask[value] == 1


@pytest.mark.parametrize(
    "text",
    [
        "7" * 1_000_000,
        "1 " * 300_000,
        "\U0001f600" * 200_000,
        "{" * 100_000 + "}",
        '{"action": ' + "[" * 50_000 + "]" * 50_000 + "}",
        "-" * 500_000,
        "1e999999",
        "\x00" * 100_000,
    ],
)
@pytest.mark.parametrize("key", SPACE_IDS)
def test_parse_pathological_strings(key, text):
    space, names = SPACES[key]
    _parses_or_rejects(space, text, names=names)


def test_non_str_actions_are_parse_errors():
    for value in (None, 3, 1.5, b"up", ["up"]):
        with pytest.raises(ActionParseError) as info:
            parse_action(spaces.Discrete(3), value, names=NAMES)
        assert info.value.text is value


# -- round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["discrete", "discrete_start", "discrete_named"])
def test_every_action_word_round_trips(key):
    space, names = SPACES[key]
    for i, word in enumerate(action_vocabulary(space, names)):
        action = int(space.start) + i
        for text in (
            word,
            word.upper(),
            f"  {word}. ",
            f'"{word}"',
            f"action: {word}",
            f"I think {word} is best.",
            json.dumps({"action": word}),
            f"**{word}**",
        ):
            assert parse_action(space, text, names=names) == action, text
        if names is None:
            assert parse_action(space, render_value(space, action)) == action


@pytest.mark.parametrize("key", ["box_scalar", "box_vector", "box_matrix", "multidiscrete"])
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_rendered_values_round_trip(key, seed):
    space, _ = SPACES[key]
    space.seed(seed)
    value = space.sample()
    parsed = parse_action(space, render_value(space, value))
    assert space.contains(parsed)
    if isinstance(space, spaces.MultiDiscrete):
        assert np.array_equal(parsed, value)
    else:  # rendered with 3 significant digits
        np.testing.assert_allclose(parsed, value, rtol=5e-3, atol=1e-6)


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_dict_json_round_trip(seed):
    space, _ = SPACES["dict"]
    space.seed(seed)
    value = space.sample()
    text = json.dumps({"move": int(value["move"]), "force": float(value["force"][0])})
    parsed = parse_action(space, text)
    assert parsed["move"] == value["move"]
    np.testing.assert_allclose(parsed["force"], value["force"], rtol=1e-6)


def test_fallback_is_in_space_and_legal():
    for key in SPACE_IDS:
        space, _ = SPACES[key]
        assert _contains(space, fallback_action(space))
    assert fallback_action(spaces.Discrete(3), np.array([0, 0, 1])) == 2
    assert fallback_action(spaces.Discrete(3, start=5), np.array([0, 1, 1])) == 6


def test_describe_action_space_lists_words_and_ranges():
    assert describe_action_space(spaces.Discrete(3), NAMES) == "Actions: down, stay, up"
    assert describe_action_space(spaces.Discrete(3), NAMES, legal=["up"]) == "Actions: up"
    assert "from -1 to 1" in describe_action_space(spaces.Box(-1, 1, (1,)))
    assert "3 numbers" in describe_action_space(spaces.Box(-2, 3, (3,)))


# -- rejections with a reason -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "text", "reason"),
    [
        ("discrete", "7", "no action word"),
        ("discrete", "-1", "no action word"),
        ("discrete", "3.0 or so", "no action word"),  # a decimal is not the word "0"
        ("discrete", "2.5", "no action word"),
        ("discrete_named", "sideways", "no action word"),
        ("box_scalar", "2", "out of range"),
        ("box_scalar", "-1.5", "out of range"),
        ("box_vector", "[0, 0, 9]", "out of range"),
        ("box_vector", "[0, 0]", "expected 3 number"),
        ("multidiscrete", "[3, 0, 0]", "out of range"),
        ("multidiscrete", "[1.5, 0, 0]", "integers"),
        ("box_scalar", "1e999", "finite"),
        ("box_scalar", "-1e999", "finite"),
        ("box_scalar", "nan", "expected 1 number"),
        ("box_scalar", '{"action": NaN}', "expected 1 number"),
        ("box_vector", "[nan, 0, 1]", "expected 3 number"),
        ("dict", '{"move": 1}', "keys"),
        ("dict", "move 1 force 0.5", "JSON object"),
        ("dict", '{"move": 5, "force": 0.5}', "no action word"),
    ],
)
def test_invalid_text_rejected_with_reason(key, text, reason):
    space, names = SPACES[key]
    with pytest.raises(ActionParseError) as info:
        parse_action(space, text, names=names)
    assert reason in info.value.reason, info.value.reason
    assert info.value.text == text
    assert text[:20] in str(info.value) or len(repr(text)) > 200


@pytest.mark.parametrize("text", ["up or down", "not down, up", "stay... no, up"])
def test_ambiguous_text_rejected(text):
    with pytest.raises(ActionParseError, match="ambiguous"):
        parse_action(spaces.Discrete(3), text, names=NAMES)


def test_marked_action_resolves_mentions():
    assert parse_action(spaces.Discrete(3), "down is bad, so action: up", names=NAMES) == 2
    assert parse_action(spaces.Discrete(3), "action: down ... action: stay", names=NAMES) == 1


def test_illegal_under_mask_rejected():
    mask = np.array([1, 0, 1], dtype=np.int8)
    with pytest.raises(ActionParseError, match="not legal now") as info:
        parse_action(spaces.Discrete(3), "stay", names=NAMES, mask=mask)
    assert "down" in info.value.reason and "up" in info.value.reason
    assert parse_action(spaces.Discrete(3), "up", names=NAMES, mask=mask) == 2


@SETTINGS
@given(value=st.floats(allow_nan=True, allow_infinity=True))
def test_box_accepts_exactly_the_finite_in_range_numbers(value):
    space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)
    text = repr(value)
    if math.isfinite(value) and -1.0 <= value <= 1.0:
        assert parse_action(space, text)[0] == pytest.approx(value)
    else:
        with pytest.raises(ActionParseError):
            parse_action(space, text)


# -- the tic-tac-toe grammar --------------------------------------------------------------


def test_tictactoe_square_numbering_matches_pettingzoo():
    # PettingZoo's cells: 0 3 6 / 1 4 7 / 2 5 8; ours read 1 2 3 / 4 5 6 / 7 8 9
    assert [tictactoe_action(s) for s in range(1, 10)] == [0, 3, 6, 1, 4, 7, 2, 5, 8]
    assert all(tictactoe_square(tictactoe_action(s)) == s for s in range(1, 10))


@pytest.mark.parametrize(
    ("text", "square"),
    [
        ("5", 5),
        ("center", 5),
        ("Centre!", 5),
        ("middle", 5),
        ("top-left", 1),
        ("top left", 1),
        ("TOP_LEFT", 1),
        ("upper right", 3),
        ("bottom", 8),
        ("I'll take the bottom-right corner", 9),
        ("square 7", 7),
        ('{"action": "left"}', 4),
        ('{"action": 6}', 6),
        ("move: 2", 2),
        ("top-left is taken, so move: center", 5),
        ("5 (center)", 5),
    ],
)
def test_tictactoe_grammar(text, square):
    assert tictactoe_square(parse_phrases(text, tictactoe_phrases(), "square")) == square


@pytest.mark.parametrize("text", ["", "corner", "10", "-1", "0.5", "top or bottom", "3 or 4", "{" * 1000])
def test_tictactoe_grammar_rejects(text):
    with pytest.raises(ActionParseError) as info:
        parse_phrases(text, tictactoe_phrases(), "square")
    assert info.value.text == text and info.value.reason


@SETTINGS
@given(text=anything)
def test_tictactoe_grammar_never_crashes(text):
    try:
        action = parse_phrases(text, tictactoe_phrases(), "square")
    except ActionParseError as exc:
        assert exc.text == text
    else:
        assert 0 <= action <= 8


# -- any string, any bound: huge numbers, deep nesting -------------------------------------


@pytest.mark.parametrize("text", ["1e39", "-1e300", "3.5e38", "1" + "0" * 60])
def test_unbounded_float32_box_refuses_numbers_beyond_its_dtype(text):
    import warnings

    space = spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning either
        with pytest.raises(ActionParseError, match="float32"):
            parse_action(space, text)
    assert parse_action(space, "3e38")[0] == np.float32(3e38)


def test_huge_bounds_and_values_render_short():
    space = spaces.Box(-1e300, 1e300, shape=(2,), dtype=np.float64)
    assert describe_action_space(space) == "Action: 2 numbers, each from -1e+300 to 1e+300, e.g. [-1e+300, -1e+300]"
    assert render_value(space, np.array([1e300, 12345.0])) == "[1e+300, 12345]"


@pytest.mark.parametrize("depth", [100, 900, 990, 5000])
def test_deeply_nested_json_never_crashes(depth):
    nested = spaces.Dict({"a": spaces.Dict({"x": spaces.Discrete(2)}), "b": spaces.Box(0.0, 1.0, shape=(1,))})
    for text in (
        '{"action": ' + "[" * depth + "]" * depth + "}",
        '{"a": {"x": ' + "[" * depth + "]" * depth + '}, "b": 0}',
        '{"a": ' + '{"x": ' * depth + "1" + "}" * depth + ', "b": 0}',
    ):
        for space in (nested, spaces.Discrete(3), spaces.Box(0.0, 1.0, shape=(1,))):
            _parses_or_rejects(space, text)


@pytest.mark.parametrize("text", ["not up", "don't go up", "Do not push up now", "never up"])
def test_a_negated_action_word_is_not_played(text):
    with pytest.raises(ActionParseError, match="negated: it names 'up' only to rule it out"):
        parse_action(spaces.Discrete(3), text, names=["down", "stay", "up"])
    assert parse_action(spaces.Discrete(3), "I will go up", names=["down", "stay", "up"]) == 2
