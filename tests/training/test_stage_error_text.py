"""The message of a stopped stage (:class:`lang_pz.error.StageError`) reads as sentences whatever
its cause ends with: a backend error that ends with a full stop (``... raise timeout_s /
max_attempts.``, measured through a real server: benchmarks/results/server_faults.md) is not
followed by a second one."""

from __future__ import annotations

import pytest

from lang_pz.error import StageError


@pytest.mark.parametrize(
    "cause",
    [
        "BackendUnavailableError: LLM endpoint http://h/v1/ failed 8 attempt(s); raise timeout_s / max_attempts.",
        "BackendUnavailableError: LLM endpoint http://h/v1/ failed 8 attempt(s); raise timeout_s / max_attempts",
        "episode 0: refused. ",
    ],
)
def test_one_full_stop_after_the_cause(cause):
    text = str(StageError("play", 0, "runs/x", cause))
    assert ".." not in text and ". ." not in text
    assert f"{cause.rstrip().removesuffix('.')}. Nothing of iteration 0 is marked done" in text
    assert "`lang-pz train --resume runs/x`" in text
