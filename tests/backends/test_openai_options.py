"""``OpenAIBackend`` / ``make_backend("openai:...")`` refuse bad options at construction, naming the
value and the choices (a new-user pass asked for ``constrained_decoding="bogus"``)."""

from __future__ import annotations

import re

import pytest

from lang_pz.backends import OpenAIBackend, make_backend
from lang_pz.backends.openai_requests import CONSTRAINED_DECODING

LOCAL = "http://127.0.0.1:9/v1"  # never contacted: construction sends nothing
CHOICES = "'auto', 'llama_cpp', 'vllm', 'vllm_guided', 'json_schema', 'off'"


@pytest.mark.parametrize(
    ("bad", "hint"),
    [
        ("bogus", ""),
        ("vllm-guided", " (did you mean 'vllm_guided'?)"),
        ("LLAMA_CPP", " (did you mean 'llama_cpp'?)"),
        (None, ""),
    ],
)
def test_an_unknown_constrained_decoding_is_refused_at_construction(bad, hint):
    assert set(CHOICES.replace("'", "").split(", ")) == set(CONSTRAINED_DECODING)
    said = f"constrained_decoding must be one of {CHOICES}, got {bad!r}{hint}"
    with pytest.raises(ValueError, match=re.escape(said)):
        OpenAIBackend("m", base_url=LOCAL, constrained_decoding=bad)
    with pytest.raises(ValueError, match=re.escape(said)):
        make_backend("openai:m", base_url=LOCAL, constrained_decoding=bad)


@pytest.mark.parametrize("mode", CONSTRAINED_DECODING)
def test_every_constrained_decoding_mode_constructs(mode):
    assert OpenAIBackend("m", base_url=LOCAL, constrained_decoding=mode).constrained_decoding == mode


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"constrained": "off"}, "has no option 'constrained'; did you mean 'constrained_decoding'?"),
        ({"api_key": 5}, "api_key must be a str (or None: $OPENAI_API_KEY), got a int"),
        ({"timeout_s": "fast"}, "timeout_s must be a number >= 0.001, got 'fast'"),
        ({"structured_output": "json"}, "structured_output must be 'auto', 'json_schema' or 'json_object', got 'json'"),
    ],
)
def test_bad_openai_options_name_the_value(options, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        make_backend("openai:m", base_url=LOCAL, **options)


def test_backend_spec_typos_and_spaces():
    with pytest.raises(ValueError, match=re.escape("unknown backend spec 'Embedded' (did you mean 'embedded'?)")):
        make_backend("Embedded")
    with pytest.raises(ValueError, match=re.escape("(did you mean 'openai:gpt-4o'?)")):
        make_backend("OpenAI:gpt-4o")
    assert make_backend("openai: gpt-4o ", base_url=LOCAL).model == "gpt-4o"  # was the model ' gpt-4o '
