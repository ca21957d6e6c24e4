"""``lang-pz view`` on folders whose files were cut or changed (an adversary's pass): every JSONL
file's last line torn still gives the page; a file written otherwise (a value of the wrong type, a
record without its keys, bytes that are not UTF-8) is an error that names the folder or the file,
never a traceback, and leaves an earlier page as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner
from viewer_runs import small_run

from lang_pz.cli import app
from lang_pz.error import RunDirError
from lang_pz.viewer import write_view

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return small_run(tmp_path_factory.mktemp("viewer") / "run")


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    live = tmp_path / "live"
    shutil.copytree(run_dir, live)
    return live


def test_every_jsonl_file_torn_at_its_last_line_still_gives_the_page(run_dir, tmp_path):
    live = _copy(run_dir, tmp_path)
    torn = sorted(live.rglob("*.jsonl"))
    assert len(torn) > 3
    for path in torn:
        text = path.read_text()
        path.write_text(text + text.splitlines()[0][: len(text.splitlines()[0]) // 2])
    assert write_view(live).is_file()


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda d: (d / "metrics.jsonl").write_text(json.dumps({"iteration": "x"}) + "\n"), "looks like a run folder"),
        (lambda d: (d / "iter_001" / "trajectories.jsonl").write_bytes(b"\xff\xfe\x00\n"), "trajectories.jsonl is not"),
        (
            lambda d: (d / "iter_001" / "trajectories.jsonl").write_text(json.dumps({"episode": 0}) + "\n"),
            "trajectories.jsonl is not a trajectories file lang_pz can read",
        ),
        (lambda d: (d / "config.json").write_text('{"env_id": "butt'), "config.json is not valid JSON"),
    ],
)
def test_a_file_written_otherwise_is_an_error_naming_it(run_dir, tmp_path, damage, named):
    live = _copy(run_dir, tmp_path)
    earlier = write_view(live, tmp_path / "page")
    before = (earlier.parent / "data" / "view.js").read_text()
    damage(live)
    with pytest.raises(RunDirError, match=named):
        write_view(live, tmp_path / "page")
    res = runner.invoke(app, ["view", str(live), "--out", str(tmp_path / "page2")])
    assert res.exit_code == 2 and "Traceback" not in res.output and named.split()[0] in res.output
    if "trajectories" not in named:  # read before the page is touched: the earlier page is as it was
        assert (earlier.parent / "data" / "view.js").read_text() == before


def test_a_bench_folder_with_a_value_that_is_not_a_number(tmp_path):
    folder = tmp_path / "bench"
    folder.mkdir()
    record = {"env": "butterfly/pistonball-v0", "team": "random", "seed": 0, "objective": "team_return", "value": "x"}
    (folder / "episodes.jsonl").write_text(json.dumps(record) + "\n" + '{"env"')
    res = runner.invoke(app, ["view", str(folder)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "looks like a bench folder, but a file in it is not as lang_pz writes it" in " ".join(res.output.split())
