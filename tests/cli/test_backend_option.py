"""``--backend-option`` on every command that takes ``--backend``, and each command's start-up
check of a remote endpoint before its first episode (against lang_pz's FakeOpenAIServer, which
serves the model ``fake``, or a port nothing listens on)."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from lang_pz.cli import app
from lang_pz.cli.common import backend_options
from lang_pz.test.fake_server import FakeOpenAIServer

runner = CliRunner()


def _refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_every_command_with_backend_takes_backend_option():
    import typer.main

    def commands(group: Any, prefix: str = "") -> dict[str, Any]:
        out = {}
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):  # a command group (typer's own click copy)
                out.update(commands(cmd, f"{prefix}{name} "))
            else:
                out[prefix + name] = cmd
        return out

    every = commands(typer.main.get_command(app))
    with_backend = {n: c for n, c in every.items() if any(p.name == "backend" for p in c.params)}
    assert set(with_backend) >= {"play", "train", "adherence", "eval-critic", "bench", "skills eval"}
    assert [n for n, c in with_backend.items() if not any("--backend-option" in p.opts for p in c.params)] == []


def test_options_go_to_each_backend_that_takes_them():
    shares = backend_options(["timeout_s=20", "n_threads=1"], ["openai:a", "embedded", "openai:a", "openai:b"])
    assert shares == {"openai:a": {"timeout_s": 20}, "embedded": {"n_threads": 1}, "openai:b": {"timeout_s": 20}}
    assert backend_options(None, ["embedded"]) == {}
    with pytest.raises(typer.BadParameter, match="takes the option 'timeout'; did you mean 'timeout_s'"):
        backend_options(["timeout=3"], ["openai:a"])


def test_play_checks_the_endpoint_before_the_first_episode():
    t0 = time.perf_counter()
    res = runner.invoke(
        app, ["play", "classic/rps-v0", "--backend", "openai:fake", "--backend-option", f"base_url={_refused_url()}"]
    )
    assert res.exit_code == 2 and "not reachable" in res.output and "Connection refused" in res.output, res.output
    assert time.perf_counter() - t0 < 15 and "episode 0" not in res.output
    with FakeOpenAIServer() as server:
        res = runner.invoke(
            app, ["play", "classic/rps-v0", "--backend", "openai:gpt-4o", "--backend-option", f"base_url={server.url}"]
        )
        assert res.exit_code == 2 and "no model named 'gpt-4o'" in res.output and "it serves 'fake'" in res.output
        assert server.requests == 0  # nothing was played under the wrong name
        res = runner.invoke(
            app,
            ["play", "classic/rps-v0", "--backend", "openai:fake", "--backend-option", f"base_url={server.url}"]
            + ["--backend-option", "cache=false", "--show", "0"],
        )
        assert res.exit_code == 0 and "episode 0" in res.output, res.output


def test_train_shares_its_backend_options_and_checks_before_writing(tmp_path):
    run = tmp_path / "run"
    with FakeOpenAIServer() as server:
        res = runner.invoke(
            app,
            ["train", "--backend", "openai:m", "--critic-backend", "openai:m", "--run-dir", str(run)]
            + ["--backend-option", f"base_url={server.url}", "--backend-option", "timeout_s=5"],
        )
    assert res.exit_code == 2 and "no model named 'm'" in res.output, res.output
    assert not run.exists()  # the corrected command can use the same --run-dir
    res = runner.invoke(app, ["train", "--resume", str(tmp_path), "--backend-option", "timeout_s=5"])
    assert res.exit_code == 2 and "drop --backend-option" in res.output


def test_adherence_and_eval_critic_check_their_endpoint():
    url = _refused_url()
    for args in (
        ["adherence", "--backend", "openai:m"],
        ["eval-critic", "--env", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--backend", "openai:m"],
    ):
        res = runner.invoke(app, [*args, "--backend-option", f"base_url={url}"])
        assert res.exit_code == 2 and "not reachable" in res.output, (args, res.output)
