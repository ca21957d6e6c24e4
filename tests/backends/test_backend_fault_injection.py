"""A training run against a local fake OpenAI-compatible endpoint injecting 30 % faults of every
kind finishes without a resume, loses and duplicates no record, and writes the key nowhere.

The small-scale unit version of ``benchmarks/fault_injection_train.py``: one iteration of
5-piston Pistonball with few decisions (``hold=25``), in process, with tiny timeouts and waits
set through ``LANG_PZ_BACKEND_OPTIONS``. No wall-clock assertion.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from lang_pz.test.fake_server import FAULT_KINDS, FakeOpenAIServer
from lang_pz.training import TrainConfig, train

SECRET = "sk-injection-SECRET-9876543210fedcba"


def check_episodes(path: Path, expected: list[int]) -> int:
    """Every expected episode complete exactly once (each agent's steps 0..n-1 once, one end)."""
    ends: Counter[int] = Counter()
    steps: Counter[tuple[int, str, int]] = Counter()
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "episode_end":
            ends[rec["episode"]] += 1
        elif rec["type"] == "agent_step":
            steps[(rec["episode"], rec["agent"], rec["step"])] += 1
    assert sorted(ends) == expected and set(ends.values()) == {1}, ends
    assert set(steps.values()) == {1}, [k for k, n in steps.items() if n > 1]
    for ep in expected:
        per_agent = Counter(a for e, a, _ in steps if e == ep)
        for agent, n in per_agent.items():
            assert sorted(s for e, a, s in steps if e == ep and a == agent) == list(range(n))
    return len(steps)


def test_training_survives_30_percent_faults_of_every_kind(tmp_path, monkeypatch):
    # one fault of each kind first (so every kind is met), then 30 % drawn at random
    with FakeOpenAIServer(0.3, seed=1, stall_s=10.0, script=list(FAULT_KINDS)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv(
            "LANG_PZ_BACKEND_OPTIONS",
            json.dumps({"openai": {"timeout_s": 0.5, "backoff_s": 0.001, "max_backoff_s": 0.01, "max_attempts": 10}}),
        )
        run_dir = tmp_path / "run"
        config = TrainConfig(
            env_kwargs={"n_pistons": 5, "hold": 25},
            iterations=1,
            validation_seeds=[1000],
            actor_backend="openai:fake",
            langmarl={"max_rewrite": 1.0},
            run_dir=str(run_dir),
        )
        result = train(config)
    assert set(server.faults) == set(FAULT_KINDS)
    assert len(result.metrics) == 1
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [0]
    retries = sum(u["retries"] for u in metrics[0]["usage"].values())
    # every injected fault was retried by the backend, except the replies outside a schema,
    # which lang_pz.structured retries with the validation error shown
    schema_invalid = sum(1 for _, fault, kind in server.log if fault == "invalid_reply" and kind == "schema")
    assert retries == sum(server.faults.values()) - schema_invalid
    d = run_dir / "iter_000"
    assert check_episodes(d / "trajectories.jsonl", [0]) == 25
    validation = [json.loads(line) for line in (d / "validation.jsonl").read_text().splitlines()]
    assert [v["episode"] for v in validation] == list(range(len(validation)))
    check_episodes(d / "validation_trajectories.jsonl", list(range(len(validation))))
    critic = [
        json.loads(line)["episode"]
        for name in ("credits.jsonl", "critic_errors.jsonl")
        if (d / name).exists()
        for line in (d / name).read_text().splitlines()
    ]
    assert critic == [0]
    for f in [*run_dir.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
