"""lang_pz.bench: the share of a team's decisions whose reply did not parse (the env played its
fallback action) in episodes.jsonl and in every summary output, beside the score.

A team whose every reply is "" still plays (the fallback: Connect Four's first free column) and
can win; the share is what tells the reader that no policy chose those moves."""

from __future__ import annotations

import csv
import json
import math

import pytest

import lang_pz.bench.runner as runner
from lang_pz.bench import EnvCase, parse_team, read_episodes, run_bench, summaries, write_results
from lang_pz.bench.stats import summarise
from lang_pz.policies.scripted import ConstantPolicy

C4 = "classic/connect_four-v0"


@pytest.fixture
def hostile(monkeypatch):
    """Teams named 'hostile ...' reply "" at every seat (a scripted policy the env never parses)."""
    real = runner.build_team

    def build(team, env, env_id, llm):
        policies = real(team, env, env_id, llm)
        if team.name.startswith("hostile"):
            return {a: ConstantPolicy("") for a in policies}
        return policies

    monkeypatch.setattr(runner, "build_team", build)


def test_a_team_that_never_parses_shows_share_one_and_a_legal_team_zero(tmp_path, hostile):
    case = EnvCase(
        C4,
        teams=[parse_team("random", "hostile (empty replies)"), parse_team("random")],
        seeds=[0, 1, 2],
        objective="win:player_0",
    )
    records = run_bench([case], tmp_path)
    by_team = {t: [r for r in read_episodes(tmp_path) if r["team"] == t] for t in ("hostile (empty replies)", "random")}
    assert len(records) == 6
    for r in by_team["hostile (empty replies)"]:
        assert r["decisions"] == r["parse_failed"] > 0 and r["parse_failures"] == 1.0
        assert r["parse_failures_by_agent"] == {"player_0": 1.0, "player_1": 1.0}
    for r in by_team["random"]:
        assert r["decisions"] > 0 and r["parse_failed"] == 0 and r["parse_failures"] == 0.0
    rows = summaries([case], records)
    assert [(r.team, r.parse_failures) for r in rows] == [("hostile (empty replies)", 1.0), ("random", 0.0)]
    paths = write_results(rows, tmp_path, plot=False)
    table = paths["md"].read_text()
    assert "| parse failures |" in table.splitlines()[0]
    assert "| hostile (empty replies) | win:player_0 |" in table and "| 100 % |" in table and "| 0 % |" in table
    with paths["csv"].open() as f:
        assert [r["parse_failures"] for r in csv.DictReader(f)] == ["1.0", "0.0"]
    assert [r["parse_failures"] for r in json.loads(paths["json"].read_text())] == [1.0, 0.0]


def test_a_mixed_team_shares_are_per_seat_and_pooled_over_decisions(tmp_path, monkeypatch):
    real = runner.build_team
    monkeypatch.setattr(runner, "build_team", lambda t, e, i, llm: {**real(t, e, i, llm), "player_1": ConstantPolicy("")})
    case = EnvCase(C4, teams=[parse_team("random")], seeds=[0, 1], objective="win:player_0")
    records = run_bench([case], tmp_path)
    for r in records:
        assert r["parse_failures_by_agent"] == {"player_0": 0.0, "player_1": 1.0}
        assert 0 < r["parse_failed"] < r["decisions"]
        assert r["parse_failures"] == pytest.approx(r["parse_failed"] / r["decisions"], abs=1e-4)
    pooled = sum(r["parse_failed"] for r in records) / sum(r["decisions"] for r in records)
    assert summaries([case], records)[0].parse_failures == pytest.approx(pooled, abs=1e-4)


def test_episodes_written_before_the_share_was_recorded_show_no_share():
    old = [{"value": 1.0, "seed": 0}, {"value": 0.0, "seed": 1}]
    assert math.isnan(summarise("e", "t", "random", "team_return", old).parse_failures)
