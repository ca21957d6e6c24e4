"""A paper preset through the REAL llama.cpp server (llama-cpp-python's, the embedded SmolLM2-135M)
with `lang-pz train` in a subprocess: the critic's endpoint goes away in the critic stage, the run
stops with exit code 2 naming the stage and ``--resume``, the iteration is not marked done; with
the endpoint back, ``--resume`` redoes the iteration and the run completes (exit code 0).

The preset is ``langmarl-overcooked-cramped-room`` made small by overrides (one iteration, one
training episode, one validation seed, no test seeds, 2-tick episodes): its cooks choose among
their skills, so the actors' requests are chat-format ``choices`` requests. The critic has its own
backend spec (``openai:SmolLM2-135M``, the same served model) whose ``base_url`` is a proxy
(``server_proxy.SwitchProxy``) that stops listening when the first critic request arrives: a
deterministic point, whatever the machine's speed. 60 s on 2 cores at load average 4; 3-4 minutes
at load 9-12.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_proxy import SwitchProxy

pytestmark = pytest.mark.integration
pytest.importorskip("uvicorn", reason="needs llama-cpp-python[server] (the dev extra)")

ROOT = Path(__file__).resolve().parents[2]
SMALL = [
    "--set", "iterations=1",
    "--set", "episodes_per_iteration=1",
    "--set", "validation_seeds=[1000]",
    "--set", "test_seeds=[]",
    "--kw", "horizon=2",
]  # fmt: skip


def _train(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANG_PZ_CACHE_DIR": str(cache), "OPENAI_API_KEY": ""}
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "lang_pz.cli", "train", *args], capture_output=True, text=True, env=env, timeout=900
    )


def test_a_critic_endpoint_that_goes_away_stops_the_preset_and_resume_completes_it(llama_server, tmp_path):
    upstream = llama_server.removesuffix("/v1")
    actor = SwitchProxy(upstream)  # never fails: records the actors' requests
    critic = SwitchProxy(upstream, fail_after_posts=0)  # gone at the critic's first request
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    options = {
        "openai:smollm2": {"base_url": actor.url, "timeout_s": 600},
        "openai:SmolLM2-135M": {"base_url": critic.url, "timeout_s": 600, "max_attempts": 2, "backoff_s": 0.1},
    }
    try:
        first = _train(
            [
                "--preset", "langmarl-overcooked-cramped-room",
                "--backend", "openai:smollm2",
                "--critic-backend", "openai:SmolLM2-135M",
                "--set", f"backend_options={json.dumps(options)}",
                *SMALL,
                "--run-dir", str(run_dir),
            ],
            cache,
        )  # fmt: skip
        assert first.returncode == 2, first.stderr[-3000:]
        error = [line for line in first.stderr.splitlines() if line.startswith("error:")]
        assert error, first.stderr[-3000:]
        assert "iteration 0 stopped in its critic stage" in error[0], error
        assert f"lang-pz train --resume {run_dir}" in error[0], error
        assert critic.url.removesuffix("/v1") in error[0], error  # the endpoint that went away is named
        assert critic.went_down_at is not None and critic.posts == 0
        assert not (run_dir / "iter_000" / "done.json").exists()
        assert (run_dir / "metrics.jsonl").read_text() == ""
        assert (run_dir / "iter_000" / "trajectories.jsonl").stat().st_size > 0  # its episodes were played
        # the actors' requests: chat format, a JSON-schema'd choice among the cooks' skills
        chat_choices = [
            json.loads(body)
            for path, body in actor.bodies
            if path.endswith("/chat/completions")
            and "choice" in json.loads(body).get("response_format", {}).get("schema", {}).get("properties", {})
        ]
        assert chat_choices, [path for path, _ in actor.bodies]
        assert len(chat_choices[0]["response_format"]["schema"]["properties"]["choice"]["enum"]) > 1

        critic.up()  # the endpoint is back, on the port config.json names
        second = _train(["--resume", str(run_dir)], cache)
        assert second.returncode == 0, second.stderr[-3000:]
        ends = [
            line
            for line in (run_dir / "iter_000" / "trajectories.jsonl").read_text().splitlines()
            if '"episode_end"' in line
        ]
        assert len(ends) == 1  # the training episode of the stopped attempt was kept, not played again
        assert (run_dir / "iter_000" / "done.json").exists()
        assert [json.loads(line)["iteration"] for line in (run_dir / "metrics.jsonl").read_text().splitlines()] == [0]
        usage = json.loads((run_dir / "iter_000" / "usage.json").read_text())["attempt"]
        assert usage["critic"]["calls"] >= 1 and critic.posts >= 1
        assert (run_dir / "final" / "policies").is_dir()
    finally:
        actor.close()
        critic.close()
