"""Human credit labels (lang_pz.evaluation.labels) and a critic's agreement with them
(lang_pz.evaluation.agreement, ``lang-pz eval-critic --labels``), on a synthetic run folder
(tests/role_runs.py) with hand-written critic records, and on a Who&When-style case asked of a
scripted critic."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from role_runs import labelled_run, role_run
from typer.testing import CliRunner

import lang_pz.backends
from lang_pz.cli import app
from lang_pz.error import LangPZError
from lang_pz.evaluation.agreement import agreement_table, cohen_kappa, score_labels
from lang_pz.evaluation.labels import load_labelled, read_labels
from lang_pz.evaluation.summary import proportion_ci
from lang_pz.test import ScriptedBackend

runner = CliRunner()


def test_agreement_of_the_recorded_verdicts(tmp_path):
    (row,) = score_labels(load_labelled(labelled_run(tmp_path)), out=tmp_path / "out")
    assert (row.critic, row.labels, row.step_labels, row.no_verdict) == ("recorded", 4, 2, 1)
    assert row.agent.value == 0.5 and row.agent.ci95 == proportion_ci(2, 4)
    assert row.step.value == 0.5 and row.step.ci95 == proportion_ci(1, 2)
    # labels: p0, p0, none, none; critic: p0, none, none, no verdict -> p_o 1/2, p_e 6/16
    assert row.kappa == pytest.approx((0.5 - 6 / 16) / (1 - 6 / 16))
    assert row.annotators == {"a": 3, "b": 1}
    recs = [json.loads(x) for x in (tmp_path / "out" / "recorded.jsonl").read_text().splitlines()]
    assert [(r["agent_agrees"], r["step_agrees"], r["critic_blamed"]) for r in recs] == [
        (True, True, ["piston_0"]),
        (False, False, []),
        (True, None, []),
        (False, None, None),
    ]
    assert "| recorded | 4 | 0.50 [" in agreement_table([row])


def test_a_step_outside_the_tolerance_or_not_the_agents_own_disagrees(tmp_path):
    eps = load_labelled(labelled_run(tmp_path))
    eps[0].recorded["credits"]["piston_0"]["steps"] = [1]
    assert score_labels(eps[:1])[0].step.value == 0.0
    assert score_labels(eps[:1], tolerance=1)[0].step.value == 1.0


def test_cohen_kappa():
    assert cohen_kappa([("a", "a"), ("b", "b")]) == 1.0
    assert cohen_kappa([("a", "b"), ("b", "a")]) == -1.0
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None and cohen_kappa([]) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"run": "run", "iteration": 0, "episode": 0, "blamed": [], "blamd": 1}', "blamd: Extra inputs"),
        ('{"run": "run", "whowhen": "x.json", "iteration": 0, "episode": 0, "blamed": []}', "either 'run'"),
        ('{"run": "run", "episode": 0, "blamed": []}', "needs 'iteration' and 'episode'"),
        ('{"run": "run", "iteration": 0, "episode": 0, "blamed": [], "step": 3}', "non-empty 'blamed'"),
        ('{"run": "run", "iteration": 0, "episode": 0, "blamed": "piston_0"}', "blamed"),
        ('{"run": "run", "iteration": -1, "episode": 0, "blamed": []}', "iteration: Input should be greater"),
        ("[1]", "not a JSON object"),
        ("{run: 1}", "is not JSON"),
    ],
)
def test_a_bad_line_is_named(tmp_path, line, message):
    path = tmp_path / "l.jsonl"
    path.write_text('{"run": "run", "iteration": 0, "episode": 0, "blamed": []}\n' + line + "\n")
    with pytest.raises(LangPZError, match=f"l.jsonl line 2.*{re.escape(message)}"):
        read_labels(path)


def test_the_same_annotator_twice_and_an_empty_file_are_refused(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text('{"run": "r", "iteration": 0, "episode": 0, "blamed": []}\n' * 2)
    with pytest.raises(LangPZError, match="line 2 labels r iteration 0 episode 0 again for annotator None"):
        read_labels(path)
    path.write_text("\n")
    with pytest.raises(LangPZError, match="holds no label"):
        read_labels(path)


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ({"run": "nope", "iteration": 0, "episode": 0, "blamed": []}, "not a run folder"),
        ({"run": "run", "iteration": 5, "episode": 0, "blamed": []}, "no iteration 5 episodes"),
        ({"run": "run", "iteration": 0, "episode": 7, "blamed": []}, "has no training episode 7 (it has [0, 1])"),
        ({"run": "run", "iteration": 0, "episode": 0, "blamed": ["piston_9"]}, "names ['piston_9'], who do not act"),
        ({"run": "run", "iteration": 0, "episode": 0, "blamed": ["piston_0"], "step": 40}, "step 40 is not a step"),
    ],
)
def test_a_label_whose_episode_does_not_hold_it_is_named(tmp_path, label, message):
    role_run(tmp_path / "run")
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps(label) + "\n")
    with pytest.raises(LangPZError, match=f"l.jsonl line 1: .*{re.escape(message)}"):
        load_labelled(path)


def whowhen_labels(tmp_path: Path) -> Path:
    history = [
        {"role": "human", "content": "What is 2+2?"},
        {"name": "Planner", "role": "assistant", "content": "Ask the web."},
        {"name": "WebSurfer", "role": "assistant", "content": "It is 5."},
        {"name": "Planner", "role": "assistant", "content": "Answer: 5."},
    ]
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c1.json").write_text(json.dumps({"history": history, "question": "What is 2+2?"}))
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"whowhen": "cases/c1.json", "blamed": ["websurfer"], "step": 2, "annotator": "a"}) + "\n")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"blamed": ["Excel_Expert"]},
            "'blamed' 'Excel_Expert' never speaks in history (agents: Planner, WebSurfer, human)",
        ),
        ({"step": 9}, "'step' 9 is outside history (0 to 3)"),
        ({"step": 0}, "step 0 is not a step of cases/c1.json"),  # the task poser's message
        ({"whowhen": "cases/none.json"}, "cannot be read as JSON"),
    ],
)
def test_a_whowhen_label_its_case_cannot_hold_is_named(tmp_path, change, message):
    path = whowhen_labels(tmp_path)
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}) + "\n")
    with pytest.raises(LangPZError, match=f"labels.jsonl line 1: .*{re.escape(message)}"):
        load_labelled(path)


def blame_websurfer(req) -> str:
    agents = list(req.json_schema["properties"])
    return json.dumps(
        {
            a: {"credit": -0.6 if a == "WebSurfer" else 0.1, "steps": [2] if a == "WebSurfer" else [], "explanation": "x"}
            for a in agents
        }
    )


def test_cli_scores_recorded_verdicts_without_a_backend(tmp_path, monkeypatch):
    def no_backend(spec, **kw):
        raise AssertionError("recorded verdicts need no LLM")

    monkeypatch.setattr(lang_pz.backends, "make_backend", no_backend)
    res = runner.invoke(app, ["eval-critic", "--labels", str(labelled_run(tmp_path)), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "| recorded | 4 | 0.50 [0.15, 0.85] | 0.50 [0.09, 0.91] (2) | 0.20 | 1 |" in res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["summaries"] == [] and summary["label_agreement"][0]["critic"] == "recorded"


def test_cli_asks_a_critic_about_whowhen_style_labels(tmp_path, monkeypatch):
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(blame_websurfer))
    labels = whowhen_labels(tmp_path)
    res = runner.invoke(app, ["eval-critic", "--labels", str(labels), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "add --critic-mode central_credit" in res.output
    args = ["eval-critic", "--labels", str(labels), "--critic-mode", "central_credit", "--out", str(tmp_path / "o")]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "| central_credit | 1 | 1.00 [0.21, 1.00] | 1.00 [0.21, 1.00] (1) | undefined (one category) | 0 |" in res.output
    assert "recorded" not in res.output.split("Agreement with")[-1]
