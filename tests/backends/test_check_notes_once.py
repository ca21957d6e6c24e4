"""A start-up note (e.g. ``structured_output='json_schema'`` on llama-cpp-python's server) is said
once per command: `lang-pz train` printed it three times through a real server (its own check's
``warning:`` line, that check's log record, and the run's backend checking the same endpoint
again; benchmarks/results/server_faults.md)."""

from __future__ import annotations

import logging

from endpoint_stub import LLAMA_CPP_PYTHON_MODELS

from lang_pz.backends import OpenAIBackend
from lang_pz.cli.common import check_backend

NOTE = "structured_output='json_schema' is set, but llama-cpp-python's server takes 'json_object'"


def _backend(url: str) -> OpenAIBackend:
    return OpenAIBackend("smollm2", base_url=url, structured_output="json_schema", cache=False, max_attempts=1)


def test_the_commands_check_prints_the_note_once_and_the_runs_backend_does_not_repeat_it(make_stub, capsys, caplog):
    stub = make_stub(["ok"], models=LLAMA_CPP_PYTHON_MODELS)
    caplog.set_level(logging.WARNING, logger="lang_pz.backends.openai")
    check_backend(_backend(stub.url))  # the command's start-up check
    for _ in range(3):  # the run's actor, critic and optimiser backends on the same endpoint
        _backend(stub.url).check()
    printed = [line for line in capsys.readouterr().err.splitlines() if NOTE in line]
    logged = [r for r in caplog.records if NOTE in r.getMessage()]
    assert len(printed) == 1 and printed[0].startswith("warning: ") and logged == []


def test_without_the_command_the_note_is_logged_once_per_endpoint(make_stub, caplog):
    caplog.set_level(logging.WARNING, logger="lang_pz.backends.openai")
    first, second = make_stub(["ok"], models=LLAMA_CPP_PYTHON_MODELS), make_stub(["ok"], models=LLAMA_CPP_PYTHON_MODELS)
    for url in (first.url, first.url, second.url):
        assert NOTE in _backend(url).check().notes[0]  # every check still returns it
    logged = [r.getMessage() for r in caplog.records if NOTE in r.getMessage()]
    assert len(logged) == 2 and first.url.removesuffix("/v1") in logged[0] and second.url.removesuffix("/v1") in logged[1]
