"""``lang-pz view`` (lang_pz.viewer): what the page's data files hold, read back from real run,
bench and eval-critic folders (made here with the scripted stand-in, see tests/viewer_runs.py),
including folders still being written. The page itself is tested in a browser in
tests/test_viewer_browser.py."""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner
from viewer_runs import small_run

from lang_pz.bench import run_bench, summaries, write_results
from lang_pz.bench.config import case_from_dict
from lang_pz.cli import app
from lang_pz.error import RunDirError
from lang_pz.runs import RunFolder, read_policies
from lang_pz.trajectory import read_trajectories
from lang_pz.viewer import make_server, write_view
from lang_pz.viewer.run import word_diff_ops
from lang_pz.viewer.source import kind_of


def load_data(path: Path, call: str) -> list:
    """The JSON arguments of a data file's ``call(...)`` (the file is one call with JSON arguments)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith(call + "(") and text.endswith(");\n"), text[:80]
    return json.loads("[" + text[len(call) + 1 : -3] + "]")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return small_run(tmp_path_factory.mktemp("viewer") / "run")


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "results"
    cases = [
        case_from_dict(
            {
                "id": "butterfly/pistonball-v0",
                "kwargs": {"n_pistons": 5, "hold": 5, "max_cycles": 30},
                "seeds": "0-2",
                "teams": {"random": "random", "heuristic": "heuristic"},
            }
        )
    ]
    write_results(summaries(cases, run_bench(cases, out)), out)
    return out


def test_every_policy_iteration_and_verdict_is_in_the_view(run_dir, tmp_path):
    (view,) = load_data(write_view(run_dir, tmp_path / "page").parent / "data" / "view.js", "LPZ.view")
    run = RunFolder(run_dir)
    metrics = [json.loads(x) for x in run.metrics.read_text().splitlines()]
    assert view["kind"] == "run" and view["finished"] and len(view["iterations"]) == len(metrics) == 2
    for rec, m in zip(view["iterations"], metrics, strict=True):
        assert rec["done"] and rec["metrics"] == m
        assert rec["policies"] == read_policies(run.iteration(m["iteration"]).policies)
        assert rec["usage"]["actor"]["calls"] == m["usage"]["actor"]["calls"] > 0
    assert view["final"]["policies"] == read_policies(run.final_policies)
    assert view["final"]["test_mean"] is not None
    changed = [a for m in metrics for a in m["accepted_agents"]]
    assert changed, "the scripted run accepts a change (else this test checks no diff)"
    second = view["iterations"][1]
    for agent, ops in second["diff"].items():  # the diff rebuilds both texts
        old = view["iterations"][0]["policies"][agent]
        assert " ".join(w for op, w in ops if op != "+") == " ".join(old.split())
        assert " ".join(w for op, w in ops if op != "-") == " ".join(second["policies"][agent].split())
    assert set(second["diff"]) == set(metrics[0]["accepted_agents"])


def test_each_episode_file_holds_its_trajectory_credits_and_reruns(run_dir, tmp_path):
    page = write_view(run_dir, tmp_path / "page").parent
    (view,) = load_data(page / "data" / "view.js", "LPZ.view")
    files = RunFolder(run_dir).iteration(0)
    trajs = read_trajectories(files.trajectories) + read_trajectories(files.validation_trajectories)
    listed = [e for e in view["episodes"] if e["iteration"] == 0]
    assert len(listed) == len(trajs) and {e["set"] for e in listed} == {"train", "validation"}
    (ep_id, ep) = load_data(page / "data" / "episodes" / "i000-train-0.js", "LPZ.episode")
    assert ep_id == "i000-train-0"
    traj = read_trajectories(files.trajectories)[0]
    assert [(s["agent"], s["step"], s["observation"], s["raw_output"]) for s in ep["steps"]] == [
        (s.agent, s.step, s.observation, s.raw_output) for s in traj.steps
    ]
    reruns = [json.loads(x) for x in files.log("counterfactuals").read_text().splitlines()]
    assert ep["counterfactuals"] == [r for r in reruns if r["episode"] == traj.episode] != []
    credits = json.loads(files.log("credits").read_text().splitlines()[0])["credits"]
    assert ep["credits"] == credits


def test_a_run_in_progress_is_viewed_as_far_as_it_goes(run_dir, tmp_path):
    """No final/, iteration 1 without done.json, a metrics line and a trajectory line torn by a kill."""
    live = tmp_path / "live"
    shutil.copytree(run_dir, live)
    shutil.rmtree(live / "final")
    (live / "iter_001" / "done.json").unlink()
    first = (live / "metrics.jsonl").read_text().splitlines()[0]
    (live / "metrics.jsonl").write_text(first + "\n" + first[:40])
    traj = live / "iter_001" / "trajectories.jsonl"
    whole = traj.read_text()
    traj.write_text(whole + whole.splitlines()[0][:30])
    page = write_view(live).parent
    assert page == live / "view"
    (view,) = load_data(page / "data" / "view.js", "LPZ.view")
    assert not view["finished"]
    assert [r["done"] for r in view["iterations"]] == [True, False]
    assert view["iterations"][1]["metrics"] is None and view["iterations"][1]["usage"]["actor"]["calls"] > 0
    (_, ep) = load_data(page / "data" / "episodes" / "i001-train-1.js", "LPZ.episode")
    assert len(ep["steps"]) == len(read_trajectories(traj)[0].steps)


def test_bench_rows_and_a_bench_still_running(bench_dir, tmp_path):
    (view,) = load_data(write_view(bench_dir, tmp_path / "a").parent / "data" / "view.js", "LPZ.view")
    summary = json.loads((bench_dir / "summary.json").read_text())
    assert view["kind"] == "bench" and view["complete"] and view["rows"] == summary
    assert len(view["episodes"]) == 6 and {e["team"] for e in view["episodes"]} == {"random", "heuristic"}
    running = tmp_path / "running"
    running.mkdir()
    shutil.copy(bench_dir / "episodes.jsonl", running / "episodes.jsonl")  # no summary yet
    (view,) = load_data(write_view(running, tmp_path / "b").parent / "data" / "view.js", "LPZ.view")
    assert not view["complete"]
    assert [(r["team"], round(r["mean"], 6), r["episodes"]) for r in view["rows"]] == [
        (r["team"], round(r["mean"], 6), r["episodes"]) for r in summary
    ]


def test_what_is_not_viewable_is_refused_with_what_each_kind_holds(tmp_path):
    with pytest.raises(RunDirError, match="does not exist"):
        kind_of(tmp_path / "missing")
    with pytest.raises(RunDirError, match="config.json"):
        kind_of(tmp_path)
    result = CliRunner().invoke(app, ["view", str(tmp_path)])
    assert result.exit_code == 2 and "not a run, bench or eval-critic folder" in result.output


def test_an_out_folder_holding_other_files_is_refused_and_an_earlier_view_rewritten(run_dir, tmp_path):
    mine = tmp_path / "project"
    (mine / "data").mkdir(parents=True)
    (mine / "data" / "keep.csv").write_text("a,b\n")
    with pytest.raises(RunDirError, match="holds other files"):
        write_view(run_dir, mine)
    assert (mine / "data" / "keep.csv").exists()
    page = write_view(run_dir, tmp_path / "page").parent
    stale = page / "data" / "episodes" / "i009-train-0.js"
    stale.write_text("")
    assert write_view(run_dir, page).parent == page and not stale.exists()


def test_cli_writes_the_page_and_serves_it(run_dir, tmp_path):
    out = tmp_path / "page"
    result = CliRunner().invoke(app, ["view", str(run_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {"index.html", "viewer.js", "viewer.css", "data"}
    shipped = "".join((out / name).read_text() for name in ("index.html", "viewer.js", "viewer.css"))
    assert set(re.findall(r"https?://[^\s\"')]+", shipped)) == {"http://www.w3.org/2000/svg"}  # a name, not a fetch
    server = make_server(out, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        with urllib.request.urlopen(f"http://{host}:{port}/data/view.js") as r:
            assert r.read() == (out / "data" / "view.js").read_bytes()
    finally:
        server.shutdown()
        server.server_close()


def test_word_diff_ops():
    assert word_diff_ops("Always push up.", "Always push down now.") == [
        ["=", "Always push"],
        ["-", "up."],
        ["+", "down now."],
    ]
    assert word_diff_ops("", "new text") == [["+", "new text"]]
