"""lang_pz.report and `lang-pz report` on run folders built here (no LLM needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lang_pz.cli import app
from lang_pz.error import RunDirError
from lang_pz.report import load_run, plot_learning_curve, summary_text, word_diff

AGENTS = ("piston_0", "piston_1")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _usage(k: int) -> dict:
    return {
        role: {
            "calls": 10 * (k + 1) + j,
            "cached_calls": j,
            "prompt_tokens": 1000 * (j + 1) + k,
            "completion_tokens": 50 + k,
            "cost_usd": 0.001 * (j + 1),
            "model": "m",
        }
        for j, role in enumerate(("actor", "critic", "optimiser"))
    }


def _metric(k: int, accepted: bool | None, returns: list[float]) -> dict:
    return {
        "iteration": k,
        "train_return": sum(returns) / len(returns),
        "train_returns": returns,
        "val_return": 10.0 * k - 5,
        "candidate_val_return": None if accepted is None else 10.0 * k + 3.5,
        "accepted": accepted,
        "changed_agents": ["piston_1"] if accepted is not None else [],
        "parse_error_rate": 0.0,
        "critic_failures": k,
        "optimiser_failures": 1,
        "llm_calls": 61 + k,
        "usage": _usage(k),
        "seconds": 1.5,
        "a_future_field": {"x": 1},
    }


def _policies(folder: Path, policies: dict[str, str]) -> None:
    folder.mkdir(parents=True)
    for agent, text in policies.items():
        (folder / f"{agent}.txt").write_text(text + "\n", encoding="utf-8")


def make_run(root: Path, accepted: list[bool | None], finished: bool = True, started_next: bool = True) -> Path:
    """A run folder like training.py writes: iteration k's candidate gives piston_1 version k+1."""
    root.mkdir()
    (root / "config.json").write_text(
        json.dumps(
            {
                "env_id": "butterfly/pistonball-v0",
                "env_kwargs": {"n_pistons": 2},
                "iterations": 3,
                "critic_mode": "counterfactual",
            }
        )
    )
    policies = {"piston_0": "Always push up.", "piston_1": "Push up when the ball is left."}
    lines = []
    for k, acc in enumerate(accepted):
        _policies(root / f"iter_{k:03d}" / "policies", policies)
        candidate = {"piston_1": f"Push down when the ball is right, version {k + 1}."}
        if acc is not None:
            _policies(root / f"iter_{k:03d}" / "candidates", candidate)
        if acc:
            policies = {**policies, **candidate}
        lines.append(json.dumps(_metric(k, acc, [float(-100 + 40 * k), float(60 + 40 * k)])))
    if not finished and started_next:  # the next iteration had begun when the run stopped
        _policies(root / f"iter_{len(accepted):03d}" / "policies", policies)
    if finished:
        _policies(root / "final" / "policies", policies)
    (root / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return root


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 1000
    from matplotlib.image import imread

    img = imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100


def test_complete_run_loads_plots_and_summarises(tmp_path):
    run = load_run(make_run(tmp_path / "run", [True, False, True]))
    assert run.finished and [m.iteration for m in run.metrics] == [0, 1, 2]
    assert run.metrics[1].usage["critic"].prompt_tokens == 2001  # extra fields ignored, values kept
    assert run.initial_policies["piston_1"] == "Push up when the ball is left."
    assert run.final_policies["piston_1"] == "Push down when the ball is right, version 3."
    assert run.final_policies["piston_0"] == "Always push up."
    png = plot_learning_curve(run, tmp_path / "out" / "curve.png")
    assert_png(png)

    text = summary_text(run)
    assert "butterfly/pistonball-v0" in text and "counterfactual" in text and "3 of 3" in text
    rows = [ln.split() for ln in text.splitlines() if ln.split()[:1] in (["0"], ["1"], ["2"])]
    assert [r[5] for r in rows] == ["accepted", "rejected", "accepted"]
    assert rows[2][1:5] == ["-", "60.0", "15.0", "23.5"]  # no test seeds; mean of -20 and 140; val; candidate val
    assert [r[7] for r in rows] == ["61", "62", "63"]
    assert rows[2][8:10] == ["1054t", "$0.0010"]  # actor tokens 1002 + 52, cost
    assert "186 LLM calls" in text and "3 critic and 3 optimiser failure(s)" in text
    # no acceptance logs and no accepted_agents (older records): candidates cannot be counted
    assert "candidates:" not in text
    assert "iterations: 3 done: 2 with a candidate accepted, 1 with every candidate rejected, 0 with no candidate" in text
    assert "critic    63 calls (3 cached), 6003 prompt + 153 completion tokens, $0.0060" in text
    assert "piston_0: unchanged: Always push up." in text
    assert "Push [-up-] {+down+} when the ball is [-left.-] {+right, version 3.+}" in text


def test_unfinished_run_takes_the_next_iterations_policies(tmp_path):
    run = load_run(make_run(tmp_path / "run", [True, True], finished=False))
    assert not run.finished
    assert run.final_policies["piston_1"] == "Push down when the ball is right, version 2."
    assert "unfinished" in summary_text(run) and "2 of 3" in summary_text(run)
    assert_png(plot_learning_curve(run, tmp_path / "c.png"))


@pytest.mark.parametrize(
    ("accepted", "expected"),
    [
        ([True, True], "Push down when the ball is right, version 2."),  # candidates laid over
        ([True, False], "Push down when the ball is right, version 1."),  # rejected: iteration's own
    ],
)
def test_unfinished_run_stopped_between_iterations(tmp_path, accepted, expected):
    run = load_run(make_run(tmp_path / "run", accepted, finished=False, started_next=False))
    assert run.final_policies["piston_1"] == expected


def test_rejections_only_leave_policies_unchanged(tmp_path):
    run = load_run(make_run(tmp_path / "run", [False, False, None]))
    assert run.final_policies == run.initial_policies
    text = summary_text(run)
    assert "3 critic and 3 optimiser failure(s)" in text and "none" in text
    assert "iterations: 3 done: 0 with a candidate accepted, 2 with every candidate rejected, 1 with no candidate" in text
    assert "piston_1: unchanged" in text
    assert_png(plot_learning_curve(run, tmp_path / "c.png"))


def test_run_without_completed_iterations_still_reports(tmp_path):
    run = load_run(make_run(tmp_path / "run", [], finished=False))  # iteration 0 still running
    assert run.metrics == [] and run.final_policies == run.initial_policies and len(run.initial_policies) == 2
    assert "0 of 3" in summary_text(run)
    assert_png(plot_learning_curve(run, tmp_path / "c.png"))


def test_malformed_metrics_lines_name_file_line_and_field(tmp_path):
    root = make_run(tmp_path / "run", [True, False])
    good = (root / "metrics.jsonl").read_text().splitlines()
    bad = json.loads(good[1])
    del bad["val_return"]
    (root / "metrics.jsonl").write_text("\n".join([good[0], json.dumps(bad)]) + "\n")
    with pytest.raises(RunDirError, match=r"metrics\.jsonl line 2, field 'val_return'"):
        load_run(root)
    bad = json.loads(good[0]) | {"train_return": "high"}
    (root / "metrics.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(RunDirError, match=r"line 1, field 'train_return'.*'high'"):
        load_run(root)
    (root / "metrics.jsonl").write_text(good[0] + "\n{not json\n")
    with pytest.raises(RunDirError, match=r"metrics\.jsonl line 2 is not JSON"):
        load_run(root)


def test_not_a_run_folder_names_what_is_missing(tmp_path):
    with pytest.raises(RunDirError, match="does not exist"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunDirError, match=r"not a training run folder: missing config\.json and iter_000/policies"):
        load_run(tmp_path / "empty")


def test_word_diff():
    assert word_diff("a b c", "a x c") == "a [-b-] {+x+} c"
    assert word_diff("a b", "a b c") == "a b {+c+}"


def test_cli_report_prints_summary_and_writes_png(tmp_path):
    root = make_run(tmp_path / "run", [True, False, True])
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(root)])
    assert res.exit_code == 0, res.output
    assert "2 with a candidate accepted" in res.output and str(root / "learning_curve.png") in res.output
    assert_png(root / "learning_curve.png")
    res = runner.invoke(app, ["report", str(root), "--out", str(tmp_path / "x.png")])
    assert res.exit_code == 0 and (tmp_path / "x.png").exists()
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "config.json" in res.output and str(tmp_path) in res.output


def test_report_on_a_file_says_it_is_a_file(tmp_path):
    runner = CliRunner()
    f = tmp_path / "metrics.jsonl"
    f.write_text("{}\n")
    res = runner.invoke(app, ["report", str(f)])
    assert res.exit_code == 2
    out = " ".join((res.output + (res.stderr or "")).split())
    assert "is a file, not a folder" in out and "does not exist" not in out


def test_a_credit_that_prints_as_zero_blames_no_one(tmp_path):
    from lang_pz.report import decisions

    run = make_run(tmp_path / "run", [True, False])
    for k, credits in enumerate(({"piston_0": 0.2, "piston_1": -0.001}, {"piston_0": 0.3, "piston_1": -0.4})):
        (run / f"iter_{k:03d}" / "credits.jsonl").write_text(
            json.dumps({"episode": k, "credits": {a: {"credit": c} for a, c in credits.items()}}) + "\n"
        )
    lines = dict(decisions(load_run(run)))
    assert "no one blamed (lowest credit +0.00)" in lines[0] and "blamed" not in lines[0].replace("no one blamed", "")
    assert "blamed piston_1 (credit -0.40)" in lines[1]


def test_the_decision_line_flags_a_drop_of_an_action_never_played(tmp_path):
    from lang_pz.report import decisions

    run = make_run(tmp_path / "run", [True, False])
    it = run / "iter_000"
    credits = {"piston_0": {"credit": -1.0, "steps": [2]}, "piston_1": {"credit": 0.0, "steps": []}}
    evidence = {"piston_0": {"action_counts": {"down": 4}}, "piston_1": {"action_counts": {"up": 4}}}
    (it / "credits.jsonl").write_text(json.dumps({"episode": 0, "credits": credits, "evidence": evidence}) + "\n")
    grads = [{"agent": a, "gradient": {"drop": "up at every step"}} for a in ("piston_0", "piston_1")]
    (it / "gradients.jsonl").write_text("".join(json.dumps(g) + "\n" for g in grads))
    line = dict(decisions(load_run(run)))[0]
    assert line.startswith("blamed piston_0 (credit -1.00) at step 2; flag: piston_0's gradient says drop 'up at")
    assert "never played up (played down x4)" in line and "piston_1's gradient" not in line  # piston_1 played up


def _one_error(res) -> str:
    assert res.exit_code == 2, res.output
    text = res.output  # click's CliRunner puts stderr in the output too
    assert "Traceback" not in text and "Errno" not in text, text
    lines = [x for x in text.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1, text
    return lines[0]


def test_report_out_that_is_a_folder_or_not_png_is_refused(tmp_path):
    root = make_run(tmp_path / "run", [True])
    runner = CliRunner()
    folder = tmp_path / "D"
    folder.mkdir()
    line = _one_error(runner.invoke(app, ["report", str(root), "--out", str(folder)]))
    assert f"--out {folder} is a folder" in line and str(folder / "learning_curve.png") in line
    txt = tmp_path / "x.txt"
    line = _one_error(runner.invoke(app, ["report", str(root), "--out", str(txt)]))
    assert f"--out {txt}" in line and ".png" in line
    assert not txt.exists()


def test_the_critic_mode_is_read_from_the_langmarl_section_and_from_old_flat_configs():
    from lang_pz.report import _critic_mode
    from lang_pz.training import TrainConfig

    new = json.loads(TrainConfig(langmarl={"critic_mode": "central_global"}).model_dump_json())
    assert "critic_mode" not in new and _critic_mode(new) == "central_global"
    assert _critic_mode({"critic_mode": "independent"}) == "independent" and _critic_mode({}) == "?"


def test_totals_count_candidates_and_iterations_apart(tmp_path):
    """Per-agent acceptance: an iteration with one candidate accepted and two rejected is one
    iteration "with a candidate accepted" but three candidates (the totals once said "1 update(s)
    accepted, 0 rejected" for it)."""
    root = make_run(tmp_path / "run", [True, False])
    decisions = {
        0: [("piston_1", True), ("piston_0", False), ("piston_0+piston_1", False)],
        1: [("piston_1", False)],
    }
    for k, rows in decisions.items():
        lines = [
            json.dumps({"agents": agents.split("+"), "val_return": 1.0, "candidate_val_return": 0.5, "accepted": ok})
            for agents, ok in rows
        ]
        (root / f"iter_{k:03d}" / "acceptance.jsonl").write_text("\n".join(lines) + "\n")
    text = summary_text(load_run(root))
    assert "candidates: 1 accepted, 4 rejected (of 5 validated)" in text
    assert "iterations: 2 done: 1 with a candidate accepted, 1 with every candidate rejected, 0 with no candidate" in text
    metrics = [json.loads(x) for x in (root / "metrics.jsonl").read_text().splitlines()]
    for m in metrics:  # without logs: the metrics' changed / accepted agents
        m["changed_agents"], m["accepted_agents"] = ["piston_0", "piston_1"], ["piston_1"] if m["accepted"] else []
    (root / "metrics.jsonl").write_text("\n".join(json.dumps(m) for m in metrics) + "\n")
    for k in decisions:
        (root / f"iter_{k:03d}" / "acceptance.jsonl").unlink()
    assert "candidates: 1 accepted, 3 rejected (of 4 validated)" in summary_text(load_run(root))


@pytest.mark.parametrize("completed", [[], [True]])
def test_a_running_iterations_usage_is_counted_in_the_totals(tmp_path, completed):
    root = make_run(tmp_path / "run", completed, finished=False)  # iteration len(completed) still running
    usage = {"interrupted": {"critic": {"calls": 2, "prompt_tokens": 30}}, "attempt": _usage(0)}
    (root / f"iter_{len(completed):03d}" / "usage.json").write_text(json.dumps(usage))
    run = load_run(root)
    running = 2 + sum(u["calls"] for u in _usage(0).values())  # 2 + 10 + 11 + 12 = 35
    assert sum(u.calls for u in run.running_usage.values()) == running
    text = summary_text(run)
    done = sum(_metric(k, a, [0.0])["llm_calls"] for k, a in enumerate(completed))
    assert f"totals: {done} LLM calls (+{running} in iteration {len(completed)}, not finished" in text
    critic_calls = 2 + _usage(0)["critic"]["calls"] + sum(_usage(k)["critic"]["calls"] for k in range(len(completed)))
    assert f"  critic    {critic_calls} calls" in text
    res = CliRunner().invoke(app, ["report", str(root), "--out", str(tmp_path / "c.png")])
    assert res.exit_code == 0 and f"(+{running} in iteration {len(completed)}" in res.output, res.output
    (root / f"iter_{len(completed):03d}" / "done.json").write_text("{}")  # finished: counted by its metrics
    assert load_run(root).running_usage == {}


def test_a_damaged_run_reports_what_the_rest_says(tmp_path):
    """Lines a kill cut or that are not the loop's records are skipped, not a traceback."""
    from lang_pz.report import decisions

    run = make_run(tmp_path / "run", [True])
    it = run / "iter_000"
    good = {"episode": 0, "credits": {"piston_1": {"credit": -0.5, "steps": [1]}}}
    (it / "credits.jsonl").write_text(json.dumps(good) + '\n[1, 2]\n"text"\n')
    (it / "gradients.jsonl").write_text('{"agent": "piston_1", "gradient": "drop up"}\n[]\n')
    decision = {"agents": ["piston_1"], "accepted": True, "val_return": 1.0, "candidate_val_return": 2.0}
    (it / "acceptance.jsonl").write_text(json.dumps(decision) + '\n{"accepted": true}\n')
    (run / "final" / "test.jsonl").write_text('{"seed": 1, "objective": 4.0}\n{"seed": 2, "objec')
    summary = load_run(run)
    assert summary.final_test_return == 4.0
    line = dict(decisions(summary))[0]
    assert line == "blamed piston_1 (credit -0.50) at step 1; piston_1 changed, validation 1.0 -> 2.0: accepted"
    res = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "c.png")])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("config.json", b"[1, 2]", "holds a JSON list, not an object of TrainConfig fields"),
        ("metrics.jsonl", b"\xff\xfe{}", "is not UTF-8 text"),
        ("config.json", b'{"env_id": "\xff"}', "is not UTF-8 text"),
    ],
)
def test_a_config_that_is_not_an_object_or_a_file_that_is_not_utf8_is_named(tmp_path, name, content, expected):
    run = make_run(tmp_path / "run", [True])
    (run / name).write_bytes(content)
    with pytest.raises(RunDirError, match=expected) as err:
        load_run(run)
    assert str(run / name) in str(err.value)
    line = _one_error(CliRunner().invoke(app, ["report", str(run)]))
    assert expected in line
