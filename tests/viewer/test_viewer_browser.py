"""The ``lang-pz view`` page in a real browser: Debian's headless Chromium driven by Playwright
(the browser comes from the system packages; nothing is downloaded). Pages are opened from disk
(``file://``), as a user opens a shared folder, and each test checks what is drawn against the run
folder's own files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import CHROMIUM, CHROMIUM_REASON, has_chromium
from viewer_runs import skills_run, small_run

from lang_pz.runs import RunFolder, read_policies
from lang_pz.trajectory import read_trajectories
from lang_pz.viewer import write_view

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
if not has_chromium():  # missing, or not a program (e.g. /dev/null bound over it)
    pytest.skip(CHROMIUM_REASON, allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return small_run(tmp_path_factory.mktemp("browser") / "run")


class Page:
    """A browser tab that records console errors and uncaught exceptions."""

    def __init__(self, browser, index: Path, hash_: str = "") -> None:
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(index.resolve().as_uri() + hash_)
        self.page.wait_for_selector("#main h2")

    def __enter__(self):
        return self.page

    def __exit__(self, *exc) -> None:
        self.page.close()
        assert self.errors == [], self.errors


def test_learning_curve_marks_every_iteration_and_verdict(browser, run_dir, tmp_path):
    metrics = [json.loads(x) for x in RunFolder(run_dir).metrics.read_text().splitlines()]
    with Page(browser, write_view(run_dir, tmp_path / "page")) as page:
        points = lambda series: page.locator(f"#curve-chart .series-{series} .pt").count()  # noqa: E731
        assert points("test") == len(metrics) + 1  # + the final policies
        assert points("accepted") == sum(m["accepted"] is True for m in metrics)
        assert points("rejected") == sum(m["accepted"] is False for m in metrics)
        rows = page.locator("table.usage tbody tr")
        assert rows.count() == len(metrics) + 1  # + totals
        first = rows.nth(0).locator("td").all_inner_texts()
        assert first[8] == f"{metrics[0]['usage']['actor']['calls']} ({metrics[0]['usage']['actor']['cached_calls']})"


def test_clicking_a_grid_cell_shows_that_agents_observation_reply_and_action(browser, run_dir, tmp_path):
    traj = read_trajectories(RunFolder(run_dir).iteration(0).trajectories)[0]
    with Page(browser, write_view(run_dir, tmp_path / "page"), "#episodes") as page:
        page.click('tr[data-episode="i000-train-0"]')  # loads data/episodes/i000-train-0.js on demand
        page.wait_for_selector("#grid")
        assert page.locator("#grid td[data-agent]").count() == len(traj.steps)
        for s in (traj.steps[1], traj.steps[-1]):
            page.click(f'#grid td[data-agent="{s.agent}"][data-step="{s.step}"]')
            assert page.inner_text("#cell-observation") == s.observation
            assert page.inner_text("#cell-raw") == s.raw_output
            assert page.inner_text("#cell-action") == json.dumps(s.action)
            detail = page.inner_text("#cell-detail")
            assert traj.states[s.step].split("\n")[0] in detail and "[object" not in detail  # the critic's state text


def test_a_rerun_marks_the_cells_it_replaced(browser, run_dir, tmp_path):
    files = RunFolder(run_dir).iteration(0)
    traj = read_trajectories(files.trajectories)[0]
    reruns = [json.loads(x) for x in files.log("counterfactuals").read_text().splitlines()]
    with Page(browser, write_view(run_dir, tmp_path / "page"), "#episodes/i000-train-0") as page:
        page.wait_for_selector("table.reruns")
        assert page.locator("table.reruns tr[data-rerun]").count() == len(reruns)
        last = reruns[-1]
        assert last["at_steps"] is None  # "alternatives" replaces every decision of the agent
        page.click(f'table.reruns tr[data-rerun="{len(reruns) - 1}"]')
        marked = page.locator("#grid td.cf")
        assert marked.count() == len(traj.agent_steps(last["agents"][0]))
        assert {marked.nth(i).get_attribute("data-agent") for i in range(marked.count())} == set(last["agents"])


def test_agents_tab_shows_each_iterations_policy_and_verdict(browser, run_dir, tmp_path):
    run = RunFolder(run_dir)
    metrics = [json.loads(x) for x in run.metrics.read_text().splitlines()]
    agent = metrics[0]["accepted_agents"][0]
    with Page(browser, write_view(run_dir, tmp_path / "page"), f"#agents/{agent}") as page:
        rows = page.locator("table.agent-table tbody tr[data-iteration]")
        assert rows.count() == len(metrics)
        for i in range(len(metrics)):
            policy = read_policies(run.iteration(i).policies)[agent]
            cell = rows.nth(i).locator("td").nth(1)
            assert cell.locator("ins").count() == (0 if i == 0 else 1)  # iteration 1 shows the accepted change
            assert " ".join(cell.locator(".policy").inner_text().split()).endswith(policy.split()[-1])
        assert rows.nth(0).locator(".tag").inner_text() == "accepted"


def test_a_run_in_progress_opens(browser, run_dir, tmp_path):
    live = tmp_path / "live"
    shutil.copytree(run_dir, live, ignore=shutil.ignore_patterns("final", "iter_001"))
    (live / "iter_000" / "done.json").unlink()
    (live / "metrics.jsonl").write_text("")
    with Page(browser, write_view(live)) as page:
        assert "no completed iteration yet" in page.text_content("#curve-chart")
        assert "iteration 0 in progress" in page.inner_text("#main")


def test_skills_tab_shows_versions_utility_and_validated_edits(browser, tmp_path):
    run = skills_run(tmp_path / "skills")
    files = RunFolder(run).iteration(0)
    edits = [json.loads(x) for x in files.skill_edits.read_text().splitlines()]
    memory = json.loads(files.skill_memory.read_text())["skills"]
    with Page(browser, write_view(run), "#skills") as page:
        first = page.locator("table.skills").nth(0)
        assert first.locator("tr[data-skill]").count() == len(memory)
        push_up = first.locator('tr[data-skill="team/push-up"] td').all_inner_texts()
        m = memory["team/push-up"]
        assert push_up[4] == f"{m['invoked']:g} / {m['offered']:g}"
        assert push_up[5].startswith(f"{m['measured_sum'] / m['measured_n']:.1f}")
        rows = page.locator("table.skill-edits").nth(0).locator("tbody tr")
        events = [rows.nth(i).locator("td").nth(0).inner_text() for i in range(rows.count())]
        assert events == [e["event"] for e in edits]
        pruned = {e["label"].removeprefix("prune ") for e in edits if e["event"] == "kept"}
        assert pruned and all(e["label"].startswith("prune ") for e in edits)
        final = page.locator("table.skills").nth(1).locator("tr[data-skill]")
        assert {final.nth(i).get_attribute("data-skill") for i in range(final.count())} == set(memory) - pruned


def test_bench_page_draws_the_table_and_the_plot(browser, tmp_path):
    from lang_pz.bench import run_bench, summaries, write_results
    from lang_pz.bench.config import case_from_dict

    out = tmp_path / "bench"
    cases = [
        case_from_dict(
            {
                "id": "butterfly/pistonball-v0",
                "kwargs": {"n_pistons": 5, "hold": 5, "max_cycles": 30},
                "seeds": "0-1",
                "teams": {"random": "random", "heuristic": "heuristic"},
            }
        )
    ]
    rows = summaries(cases, run_bench(cases, out))
    write_results(rows, out, plot=False)
    with Page(browser, write_view(out)) as page:
        table = page.locator("table.bench tbody tr")
        assert [table.nth(i).locator("td").nth(1).inner_text() for i in range(table.count())] == [r.team for r in rows]
        assert page.locator("svg.bench-plot rect").count() == len(rows)
        assert page.locator("svg.bench-plot circle").count() == sum(r.episodes for r in rows)


def test_eval_critic_page_lists_the_summary_and_every_case(browser, tmp_path):
    """An eval-critic folder as `lang-pz eval-critic` writes it (cases JSONL + summary.json), with
    the counterfactual critic, which needs no LLM."""
    from lang_pz.critics.difference import DifferenceCritic
    from lang_pz.evaluation.faults import CriticSpec, run_fault_benchmark
    from lang_pz.evaluation.summary import summary_dict

    out = tmp_path / "eval"
    out.mkdir()
    spec = CriticSpec("counterfactual", DifferenceCritic(None), ("alternatives",), None)
    summaries = run_fault_benchmark(
        "butterfly/pistonball-v0",
        [spec],
        cases=1,
        seed=0,
        out=out / "0-pistonball.jsonl",
        env_kwargs={"n_pistons": 5, "hold": 5, "max_cycles": 40},
    )
    summary = {"backend": "none", "summaries": [summary_dict(s) for s in summaries]}
    (out / "summary.json").write_text(json.dumps(summary))
    (case,) = [json.loads(x) for x in (out / "0-pistonball.jsonl").read_text().splitlines()]
    with Page(browser, write_view(out)) as page:
        assert page.locator("table.critic-summary tbody tr").count() == len(summaries) == 1
        cells = page.locator("table.data").nth(1).locator("tbody tr td").all_inner_texts()
        assert cells[2] == case["truth_agent"]
        verdict = case["critics"]["counterfactual"]
        # A critic that cannot separate the agents blames no one; the page says so in words.
        assert cells[5].startswith(f"blamed {verdict['blamed'] or 'no one'} at steps")
        assert f"agent {'right' if verdict['agent_hit'] else 'wrong'}" in cells[5]


def test_the_role_differentiation_chart_has_a_point_per_iteration(browser, tmp_path):
    from role_runs import role_run

    with Page(browser, write_view(role_run(tmp_path / "run"), tmp_path / "page")) as page:
        assert page.locator("#roles-chart .series-policy-divergence .pt").count() == 2
        assert page.locator("#roles-chart .series-action-divergence .pt").count() == 2
        assert "started from policies with the same words" in page.locator("#main").inner_text()
        assert "Final policies: 0.33" in page.locator("#main").inner_text()


def test_eval_critic_page_shows_the_agreement_with_human_labels(browser, tmp_path):
    from role_runs import labelled_run
    from typer.testing import CliRunner

    from lang_pz.cli import app

    labels = labelled_run(tmp_path)
    res = CliRunner().invoke(app, ["eval-critic", "--labels", str(labels), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    with Page(browser, write_view(tmp_path / "o")) as page:
        cells = page.locator("table.label-agreement tbody tr td").all_inner_texts()
        assert cells == ["recorded", "4", "0.50 [0.15, 0.85]", "0.50 [0.09, 0.91]", "2", "0.20", "1"]
