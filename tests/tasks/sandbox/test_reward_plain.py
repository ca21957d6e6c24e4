"""Plain data across the sandbox boundary (lang_pz.tasks.sandbox.plain): what a verdict is computed from."""

from __future__ import annotations

import json
import math

import pytest

from lang_pz.tasks.sandbox import plain


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -3,
        2**200,
        1.5,
        -0.0,
        "é\x00",
        b"\x00\xff",
        1 + 2j,
        [1, [2]],
        (1, (2,)),
        {1, 2},
        frozenset({"a"}),
        {"k": (1, 2), 3: None},
        [],
        (),
        {},
    ],
)
def test_plain_values_round_trip_with_their_types(value):
    back = plain.loads(plain.dumps(value))
    assert back == value and type(back) is type(value)


def test_tuples_and_lists_stay_apart_as_the_tests_compare_them():
    assert plain.loads(plain.dumps((1, 2))) != [1, 2]


def test_non_finite_floats_round_trip():
    assert math.isinf(plain.loads(plain.dumps(float("-inf")))) and math.isnan(plain.loads(plain.dumps(float("nan"))))


def test_subclasses_are_reduced_to_their_base_type_and_lose_their_methods():
    class Yes(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    class Words(str):
        def __str__(self):
            return "forged"

    got = plain.loads(plain.dumps([Yes(3), Words("w")]))
    assert got == [3, "w"] and type(got[0]) is int and got[0] != 4


@pytest.mark.parametrize("value", [object(), lambda: 1, [1, object()], {"k": print}, iter([object()])])
def test_objects_that_are_not_plain_data_are_refused(value):
    with pytest.raises(plain.NotPlain):
        plain.dumps(value)


def test_nesting_past_the_limit_is_refused_both_ways():
    deep: list = []
    for _ in range(plain.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(plain.NotPlain):
        plain.dumps(deep)
    with pytest.raises(plain.NotPlain):
        plain.loads('{"l":' * 5000 + "[]" + "}" * 5000)


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        '{"x": 1}',
        '{"l": [1], "t": [2]}',
        "NaN",
        "Infinity",
        '{"f": "1e400"}',
        '{"s": [{"l": []}]}',
        '{"d": [[1]]}',
        "{",
        "",
        '{"b": "zz"}',
    ],
)
def test_strict_decoding_refuses_everything_else(text):
    with pytest.raises(plain.NotPlain):
        plain.loads(text)


def test_decoding_never_calls_back_into_python_objects():
    assert plain.loads(json.dumps({"d": [["__class__", {"l": []}]]})) == {"__class__": []}


def test_an_iterator_comes_back_as_an_iterator_over_its_items():
    back = plain.loads(plain.dumps(x * 2 for x in range(3)))
    assert back != [0, 2, 4] and list(back) == [0, 2, 4]


def test_a_numpy_scalar_is_its_python_number():
    np = pytest.importorskip("numpy")
    assert plain.loads(plain.dumps([np.int64(3), np.float64(0.5), np.bool_(True)])) == [3, 0.5, True]
