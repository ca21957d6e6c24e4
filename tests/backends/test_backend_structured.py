"""lang_pz.structured on replies that break JSON parsers: a reply nested too deeply is a
validation error the model is told about (and retried), never a RecursionError."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from lang_pz.backends import GenerationRequest
from lang_pz.structured import ask_structured, parse_json_reply
from lang_pz.test import ScriptedBackend


class Move(BaseModel):
    action: str


def test_deeply_nested_reply_is_a_value_error():
    with pytest.raises(ValueError, match="too deeply"):
        parse_json_reply(Move, "[" * 5000)


def test_deeply_nested_reply_is_retried_with_the_error_shown():
    backend = ScriptedBackend(["[" * 3000, '{"action": "up"}'])
    move, gens = ask_structured(
        backend, lambda errors: GenerationRequest(prompt="move? " + " ".join(errors)), Move, what="move"
    )
    assert move.action == "up" and len(gens) == 2
    assert "too deeply" in backend.requests[1].prompt


def test_nesting_is_refused_whatever_the_recursion_limit():
    # Some libraries raise the interpreter's recursion limit; json then parses "[" * 5000 to its end.
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        with pytest.raises(ValueError, match="too deeply"):
            parse_json_reply(Move, "[" * 5000)
    finally:
        sys.setrecursionlimit(old)


def test_brackets_inside_strings_do_not_count_as_nesting():
    assert parse_json_reply(Move, '{"action": "' + "[" * 500 + '\\"{"}').action.startswith("[")
