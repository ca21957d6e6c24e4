"""``lang-pz play`` and ``lang-pz bench`` when episodes fail: exit code 1, the last line says how
many of how many failed and the first error; bench counts them per team and retries them on a
re-run. The failing LLM is a ScriptedBackend stand-in whose endpoint "went down" after the
start-up check."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import lang_pz.backends
from lang_pz.bench import EnvCase, parse_team, read_episodes, run_bench, summaries
from lang_pz.bench.report import markdown_table
from lang_pz.bench.runner import read_failures
from lang_pz.cli import app
from lang_pz.error import BackendUnavailableError
from lang_pz.test import ScriptedBackend

runner = CliRunner()
DOWN = "http://127.0.0.1:9/v1/ is not reachable; check that the server is running at base_url"
PB = ["--kw", "n_pistons=5", "--kw", "hold=5", "--kw", "max_cycles=10"]


def down(req):
    raise BackendUnavailableError(DOWN)


@pytest.fixture
def endpoint(monkeypatch):
    """``make_backend`` gives a stand-in whose replies are ``state["reply"]`` (or fail when it is None)."""
    state = {"reply": None}

    def reply(req):
        if state["reply"] is None:
            down(req)
        return state["reply"]

    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(reply))
    return state


def _last(res) -> str:
    return res.output.strip().splitlines()[-1]


def test_play_exits_1_when_every_episode_failed(endpoint, tmp_path):
    out = tmp_path / "t.jsonl"
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", *PB, "--episodes", "2", "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert _last(res) == (
        "error: 2 of 2 episode(s) (100 %) failed and were not scored; first failure, episode 0 (seed 0): "
        f"BackendUnavailableError: {DOWN}"
    )
    assert [json.loads(x)["type"] for x in out.read_text().splitlines()].count("episode_error") == 2


def test_play_exits_0_when_every_episode_was_played(endpoint):
    endpoint["reply"] = "up"
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", *PB, "--show", "0"])
    assert res.exit_code == 0, res.output
    assert "error" not in res.output


def test_play_against_a_closed_port_is_refused_before_any_episode():
    """An endpoint that is down from the start fails the start-up check: exit 2, nothing played."""
    res = runner.invoke(
        app,
        ["play", "butterfly/pistonball-v0", *PB, "--backend", "openai:m"]
        + ["--backend-option", "base_url=http://127.0.0.1:9/v1", "--backend-option", "max_attempts=1"],
    )
    assert res.exit_code == 2, res.output
    assert "not reachable" in _last(res) and "episode 0" not in res.output


def bench_case(seeds=(0, 1, 2)) -> EnvCase:
    return EnvCase(
        "butterfly/pistonball-v0",
        teams=[parse_team("heuristic"), parse_team("piston_0=llm:Always go up.;*=heuristic", name="llm")],
        seeds=list(seeds),
        kwargs={"n_pistons": 5, "hold": 5, "max_cycles": 10},
    )


def test_bench_records_failed_episodes_counts_them_and_retries_them(tmp_path):
    case = bench_case()
    seen = []
    records = run_bench([case], tmp_path, backend=ScriptedBackend(down), on_failure=seen.append)
    assert [(r["team"], r["seed"]) for r in records] == [("heuristic", 0), ("heuristic", 1), ("heuristic", 2)]
    failures = read_failures(tmp_path)
    assert failures == seen and [f["seed"] for f in failures] == [0, 1, 2]
    assert failures[0]["error"] == f"BackendUnavailableError: {DOWN}" and "llm_calls" in failures[0]
    rows = summaries([case], records, failures)
    assert [(r.team, r.episodes, r.failed) for r in rows] == [("heuristic", 3, 0), ("llm", 0, 3)]
    assert "| llm | " in markdown_table(rows) and "| 3 of 3 (100 %) |" in markdown_table(rows)
    # the endpoint is back: a re-run plays only the failed episodes; nothing is counted failed any more
    records = run_bench([case], tmp_path, backend=ScriptedBackend(lambda req: "up"))
    assert len(read_episodes(tmp_path)) == 6 and len(read_failures(tmp_path)) == 3
    assert [r.failed for r in summaries([case], records, read_failures(tmp_path))] == [0, 0]


def test_bench_cli_exits_1_and_says_the_share_that_failed(endpoint, tmp_path):
    args = ["bench", "--out", str(tmp_path / "b"), "--env", "butterfly/pistonball-v0", *PB, "--seeds", "0-1"]
    args += ["--team", "heuristic", "--team", "llm=:piston_0=llm:Always go up.;*=heuristic", "--no-plot"]
    res = runner.invoke(app, args)
    assert res.exit_code == 1, res.output
    assert "| 2 of 2 (100 %) |" in res.output  # the table's failed column
    line = _last(res)
    assert line.startswith(
        "error: 2 of 4 episode(s) (50 %) failed and were not scored; first failure, "
        "butterfly/pistonball-v0(hold=5,max_cycles=10,n_pistons=5) | llm | seed 0: BackendUnavailableError: "
    )
    assert line.endswith("run the same command again: it plays only the failed episodes")
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert [(r["team"], r["episodes"], r["failed"]) for r in summary] == [("heuristic", 2, 0), ("llm", 0, 2)]
    endpoint["reply"] = "up"
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "error" not in res.output
