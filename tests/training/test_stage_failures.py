"""No silent loss: a stage that fails leaves its iteration unfinished (``on_stage_failure: stop``,
the default), names the stage, the cause and ``--resume``, and ``--resume`` redoes it; with
``continue`` the run goes on and its progress line says what failed. And progress without a
terminal: plain lines at a bounded rate."""

from __future__ import annotations

import io
import json
import time

import pytest
from standins import AGENTS, StandIn, config, jsonl
from typer.testing import CliRunner

import lang_pz.backends
import lang_pz.training.parts
from lang_pz.error import StageError
from lang_pz.test import ScriptedBackend
from lang_pz.training import train
from lang_pz.training.progress import Lines


class FailingCritic:
    """The stand-in, except that its first ``fail`` critic replies are not JSON."""

    def __init__(self, fail: int = 1) -> None:
        self.stand_in, self.fail = StandIn(flipping=AGENTS[:3]), fail
        self.backend = ScriptedBackend(self.reply)

    def reply(self, req):
        if req.role == "critic" and self.fail > 0:
            self.fail -= 1
            return "not json"
        return self.stand_in.reply(req)


def test_a_failed_critic_stops_the_run_naming_the_stage_and_resume_redoes_it(tmp_path):
    run = tmp_path / "run"
    scripted = FailingCritic(fail=1)
    cfg = config(run, iterations=2, critic_max_attempts=1)
    with pytest.raises(StageError, match=r"iteration 0 stopped in its critic stage: episode 0: .*--resume") as err:
        train(cfg, backends=scripted.backend)
    assert (err.value.stage, err.value.iteration, err.value.run_dir) == ("critic", 0, str(run))
    assert not (run / "iter_000" / "done.json").exists() and not (run / "metrics.jsonl").read_text()
    assert jsonl(run / "iter_000" / "critic_errors.jsonl")[0]["episode"] == 0
    res = train(resume=run, backends=scripted.backend)  # the critic answers this time
    assert [m.iteration for m in res.metrics] == [0, 1] and all(m.critic_failures == 0 for m in res.metrics)
    assert not (run / "iter_000" / "critic_errors.jsonl").exists() and (run / "iter_000" / "credits.jsonl").exists()
    whole = train(config(tmp_path / "whole", iterations=2, critic_max_attempts=1), backends=FailingCritic(0).backend)
    assert res.final_policies == whole.final_policies  # as if it had never failed
    assert [m.accepted_agents for m in res.metrics] == [m.accepted_agents for m in whole.metrics]


def test_the_command_line_exits_non_zero_with_the_message_then_resumes(tmp_path, monkeypatch):
    from lang_pz.cli import app

    scripted = FailingCritic(fail=1)
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: scripted.backend)
    monkeypatch.setattr(lang_pz.training.parts, "make_backend", lambda spec, **kw: scripted.backend)
    run = tmp_path / "run"
    args = ["train", "--kw", "n_pistons=5", "--kw", "hold=5", "--kw", "max_cycles=50", "--iterations", "1"]
    sets = ["--set", "critic_max_attempts=1", "--set", "initial_policy=Always push up.", "--set", "validation_seeds=[1001]"]
    res = CliRunner().invoke(app, [*args, "--run-dir", str(run), *sets])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "error: iteration 0 stopped in its critic stage: episode 0" in out
    assert f"lang-pz train --resume {run}" in out
    again = CliRunner().invoke(app, ["train", "--resume", str(run)])
    assert again.exit_code == 0, again.output
    assert json.loads((run / "iter_000" / "done.json").read_text())["metrics"]["critic_failures"] == 0


def test_continue_goes_on_and_the_progress_line_says_what_failed(tmp_path):
    said: list[str] = []
    cfg = config(tmp_path / "run", critic_max_attempts=1, on_stage_failure="continue")
    res = train(cfg, backends=FailingCritic(fail=1).backend, progress=said.append)
    assert res.metrics[0].critic_failures == 1 and res.metrics[0].accepted is None  # the only episode's report
    (line,) = [s for s in said if s.startswith("iteration 0:")]
    assert "no candidate" in line and "1 critic report(s) failed" in line


def test_plain_progress_lines_at_a_bounded_rate_also_while_one_item_runs():
    out = io.StringIO()
    quiet = Lines(3, "iter 0 episodes", calls=lambda: 7, stream=out, every=3600)
    for _ in range(3):
        quiet.update()
    quiet.close()
    quiet.close()  # closing twice says nothing more
    assert out.getvalue().splitlines() == ["iter 0 episodes: 3/3, 7 LLM calls, elapsed 0s"]  # the last line only
    out = io.StringIO()
    beating = Lines(2, "critic", stream=out, every=0.05)
    beating.update()
    deadline = time.monotonic() + 60
    while len(out.getvalue().splitlines()) < 2 and time.monotonic() < deadline:  # the second item takes long
        time.sleep(0.05)
    beating.close()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and lines[0].startswith("critic: 1/2, elapsed ") and "ETA" in lines[0]
    assert lines[-1].startswith("critic: 1/2, elapsed ")  # closed with the second item unfinished
    n = len(lines)
    Lines(0, "nothing", stream=out).close()  # a step of no items says nothing
    time.sleep(0.2)
    assert len(out.getvalue().splitlines()) == n  # and a closed step says nothing more


def test_validation_has_a_progress_line_too(tmp_path, capsys):
    """Validation episodes were the longest silent stage (13 min of nothing in a new user's
    `make demo` under nohup, load 6)."""
    train(
        config(tmp_path / "run", validation_seeds=[1001, 1002]), backends=ScriptedBackend(StandIn(flipping=AGENTS[:3]).reply)
    )
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("validation (current): 2/2, ") for line in err), err
