"""Who&When: the reader, the task poser, ties, every step shown (chunked calls), the CLI.

The fixtures in ``tests/data/whowhen`` follow the public Who&When layout (Zhang et al. 2025):
``Algorithm-Generated/`` (AG2 CaptainAgent logs: ``name`` + ``role`` per message, the mistake
often at step 0 by the first speaker) and ``Hand-Crafted/`` (Magentic-One logs: a ``human``
task poser, ``Orchestrator (thought)`` / ``Orchestrator (-> WebSurfer)`` roles); ``Hand-Crafted/2.json``
is a 76-message log whose labelled step (34) the one-call prompt leaves out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lang_pz.backends.base import GenerationRequest
from lang_pz.cli import app
from lang_pz.critics import CentralCritic
from lang_pz.error import LangPZError
from lang_pz.evaluation.chunked import ChunkedCritic, chunks_for, sub_trajectory
from lang_pz.evaluation.whowhen import (
    clip_message,
    read_whowhen,
    run_whowhen_benchmark,
    task_text,
    to_trajectory,
)
from lang_pz.test import ScriptedBackend

WHOWHEN = Path(__file__).resolve().parents[1] / "data" / "whowhen"
runner = CliRunner()


def prompt_of(req: GenerationRequest) -> str:
    text = req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())
    return text.split("Now the real episode:")[-1]


def agents_in(prompt: str) -> list[str]:
    return re.search(r"Agents: (.*)\.", prompt).group(1).split(", ")


def steps_in(prompt: str) -> list[int]:
    return [int(t) for t in re.findall(r"^Step (\d+):", prompt, re.M)]


def reply(credits: dict[str, float], steps: dict[str, list[int]]) -> str:
    return json.dumps(
        {a: {"credit": c, "steps": steps.get(a, [])[:3], "explanation": "scripted"} for a, c in credits.items()}
    )


def flat(req: GenerationRequest) -> str:
    p = prompt_of(req)
    return reply(dict.fromkeys(agents_in(p), 0.0), {})


def case(name: str):
    return next(c for c in read_whowhen(WHOWHEN).cases if c.name == name)


def test_reader_reports_every_malformed_file():
    data = read_whowhen(WHOWHEN)
    assert sorted(c.name for c in data.cases) == [
        "Algorithm-Generated/1.json",
        "Algorithm-Generated/2.json",
        "Hand-Crafted/1.json",
        "Hand-Crafted/2.json",
    ]
    reasons = {m.name: m.reason for m in data.malformed}
    assert set(reasons) == {
        "bad_not_json.json",
        "bad_missing_key.json",
        "bad_step_out_of_range.json",
        "bad_unknown_agent.json",
        "bad_poser_blamed.json",
    }
    assert "not JSON" in reasons["bad_not_json.json"]
    assert "mistake_step" in reasons["bad_missing_key.json"]
    assert "outside history" in reasons["bad_step_out_of_range.json"]
    assert "'Verifier' never speaks" in reasons["bad_unknown_agent.json"]
    assert "task poser" in reasons["bad_poser_blamed.json"]
    with pytest.raises(LangPZError, match="does not exist"):
        read_whowhen(WHOWHEN / "missing")


def test_the_human_task_poser_is_not_an_agent():
    """Regression: the hand-crafted logs' ``human`` (who asks the question) was an agent, so it
    could be blamed and made a blind guess look worse (1/3 instead of 1/2)."""
    c = case("Hand-Crafted/1.json")
    assert c.mistake_agent == "WebSurfer" and c.mistake_step == 3 and c.agents == ["Orchestrator", "WebSurfer"]
    traj = to_trajectory(c, 7, max_chars=60)
    assert traj.agents == ["Orchestrator", "WebSurfer"]  # "(thought)" notes dropped, no "human"
    assert [s.step for s in traj.steps] == [1, 2, 3, 4, 5] and traj.episode == 7  # history indices kept
    assert traj.states[1].startswith("Task (the team failed it): Which of the two bridges")
    assert traj.team_return == pytest.approx(-1.0)
    assert all(len(s.observation) <= 60 for s in traj.steps)
    assert traj.states[3].startswith("WebSurfer: I opened") and traj.states[3].endswith("from 1850.")
    long = "word " * 100 + "THE END"
    clipped = clip_message(long, 80)
    assert len(clipped) == 80 and clipped.endswith("THE END") and " ... " in clipped


def test_uniform_credits_score_nothing_strict_and_one_in_n_at_random(tmp_path):
    """Regression: ``--tie first`` blamed the first speaker, the mistake agent in about half of
    the algorithm-generated logs, so uniform credits scored like that prior. A tie now scores 0
    (strict) and exactly 1 / n_agents (ties at random), whatever the labels."""
    s, _ = run_whowhen_benchmark(WHOWHEN, CentralCritic(ScriptedBackend(flat)), out=tmp_path / "w.jsonl")
    records = [json.loads(x) for x in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert s.cases == 4 and s.ties == 4 and s.agent.value == 0.0
    assert s.agent_expected == pytest.approx(sum(1 / r["n_agents"] for r in records) / 4)
    first = [r["first_speaker"] == r["truth_agent"] for r in records]
    assert first == [True, False, False, False]  # what "blame the first speaker" would have scored
    assert s.baselines["first_speaker"]["agent"].value == pytest.approx(0.25)
    assert s.agent_expected != pytest.approx(0.25)


def test_every_step_is_shown_in_several_calls():
    """Regression: one call subsampled long logs to 40 steps, and the labelled step of the long
    fixture was not in the prompt. Chunked, every step is shown and the record says so."""
    c = case("Hand-Crafted/2.json")
    traj = to_trajectory(c)
    critic = CentralCritic(ScriptedBackend(flat))
    assert c.mistake_step not in critic.layout(traj)[1]  # one call: left out
    parts = chunks_for(critic, traj, task_text(c))
    assert len(parts) > 1 and sorted(t for p in parts for t in p) == sorted({s.step for s in traj.steps})
    for p in parts:
        assert critic.layout(sub_trajectory(traj, p, task_text(c)))[1] == p  # each chunk fully shown
        assert sub_trajectory(traj, p, task_text(c)).states[p[0]].startswith("Task (the team failed it)")
    seen: list[list[int]] = []

    def recording(req: GenerationRequest) -> str:
        seen.append(steps_in(prompt_of(req)))
        return flat(req)

    report = ChunkedCritic(CentralCritic(ScriptedBackend(recording)), task_text(c)).assess(traj)
    assert len(seen) == len(parts) and sorted(t for s in seen for t in s) == sorted({s.step for s in traj.steps})
    assert c.mistake_step in report.shown_steps and report.attempts == len(parts)
    one, _ = run_whowhen_benchmark(WHOWHEN, CentralCritic(ScriptedBackend(flat)), chunked=False)
    every, _ = run_whowhen_benchmark(WHOWHEN, CentralCritic(ScriptedBackend(flat)))
    assert one.visible == pytest.approx(3 / 4) and every.visible == 1.0


def test_chunked_credit_is_the_mean_over_chunks_citing_the_lowest_chunk():
    c = case("Hand-Crafted/2.json")

    def oracle(req: GenerationRequest) -> str:  # blames the mistake agent only where the step is shown
        p = prompt_of(req)
        here = c.mistake_step in steps_in(p)
        return reply(
            {a: (-1.0 if here and a == c.mistake_agent else 0.5) for a in agents_in(p)},
            {c.mistake_agent: [c.mistake_step]} if here else {},
        )

    report = ChunkedCritic(CentralCritic(ScriptedBackend(oracle)), task_text(c)).assess(to_trajectory(c))
    n = report.attempts
    assert report.credits["WebSurfer"].credit == pytest.approx((-1.0 + 0.5 * (n - 1)) / n)
    assert report.credits["Orchestrator"].credit == pytest.approx(0.5)
    assert report.credits["WebSurfer"].steps == [c.mistake_step]


def test_a_critic_that_knows_the_answer_scores_one(tmp_path):
    data = read_whowhen(WHOWHEN)
    truth = {x.name: x for x in data.cases}

    def oracle(req: GenerationRequest) -> str:
        p = prompt_of(req)
        c = next(x for x in truth.values() if " ".join(x.question.split())[:50] in p)  # every chunk has the task
        here = c.mistake_step in steps_in(p)
        return reply(
            {a: (-1.0 if here and a == c.mistake_agent else 0.5) for a in agents_in(p)},
            {c.mistake_agent: [c.mistake_step]} if here else {},
        )

    s, malformed = run_whowhen_benchmark(WHOWHEN, CentralCritic(ScriptedBackend(oracle)), out=tmp_path / "o.jsonl")
    assert (s.cases, s.agent.value, s.step.value, s.dropped, len(malformed)) == (4, 1.0, 1.0, 5, 5)
    assert 0 < s.chance_agent < 1 and 0 < s.chance_step < 1 and s.visible == 1.0
    limited, _ = run_whowhen_benchmark(WHOWHEN, CentralCritic(ScriptedBackend(oracle)), limit=2)
    assert limited.cases == 2


def test_cli_whowhen_options_and_the_visible_share(tmp_path, monkeypatch):
    import lang_pz.backends

    made: list[dict] = []

    def make(spec, **kw):
        made.append(kw)
        return ScriptedBackend(flat)

    monkeypatch.setattr(lang_pz.backends, "make_backend", make)
    out = tmp_path / "r"
    res = runner.invoke(
        app,
        [
            "eval-critic",
            "--whowhen",
            str(WHOWHEN),
            "--limit",
            "3",
            "--max-chars",
            "120",
            "--prompt-chars",
            "3000",
            "--threads",
            "1",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "labelled step was shown to the critic in 3 of 3 cases (100%)" in res.output
    assert made == [{"n_threads": 1}]
    s = json.loads((out / "summary.json").read_text())["summaries"][0]
    assert s["cases"] == 3 and s["settings"]["max_chars"] == 120 and s["settings"]["limit"] == 3
    res = runner.invoke(app, ["eval-critic", "--whowhen", str(WHOWHEN), "--one-call", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "in 3 of 4 cases (75%)" in res.output
    res = runner.invoke(
        app, ["eval-critic", "--whowhen", str(WHOWHEN), "--critic-mode", "counterfactual", "--out", str(tmp_path / "c")]
    )
    assert res.exit_code == 2 and "cannot be re-run" in res.output
