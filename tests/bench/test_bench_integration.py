"""One small real bench episode with the embedded model (SmolLM2-135M): an LLM seat among
scripted partners, metered."""

from __future__ import annotations

import pytest

from lang_pz.bench import EnvCase, parse_team, run_bench, summaries

pytestmark = pytest.mark.integration


def test_bench_episode_with_the_embedded_model(embedded, tmp_path):
    case = EnvCase(
        "butterfly/pistonball-v0",
        kwargs={"n_pistons": 5, "hold": 5, "max_cycles": 25},
        seeds=[0],
        teams=[parse_team("piston_0=llm:Always go down.;*=heuristic", "llm + heuristic")],
    )
    (record,) = run_bench([case], tmp_path, backend=embedded)
    assert 0 < record["steps"] <= 5
    # one real call per piston_0 decision (a fresh cache: none served from it)
    assert record["llm_calls"] == record["steps"] and record["cached_calls"] == 0
    assert record["prompt_tokens"] > 0 and record["completion_tokens"] > 0
    row = summaries([case], [record])[0]
    assert row.llm_calls == record["steps"] and row.seconds > 0
