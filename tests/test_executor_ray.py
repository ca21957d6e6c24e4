"""The Ray executor (lang_pz.executor_ray) on a real local Ray cluster (2 CPUs, no dashboard,
``RAY_AUTH_MODE=disabled``): training through it writes what the local executor writes, also
when a worker process dies mid-episode; workers build their backend from the config's spec.

Ray workers rebuild the actor backend on their side, so the scripted stand-in of
``test_training`` reaches them as a factory registered with
:func:`lang_pz.executor_ray.register_worker_backend`: ``ScriptedBackend`` over the module-level
:func:`actor_reply` (the stand-in's actor answer). Workers import this module by name, so the
cluster's workers get this folder on their ``PYTHONPATH``.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import pytest
from standins import AGENTS, StandIn, config, prompt_of, role_of, run_contents

from lang_pz.backends.base import GenerationRequest
from lang_pz.test import ScriptedBackend

HERE = Path(__file__).parent
STAND_IN_SPEC = "openai:scripted-stand-in"  # never built: the test gives objects here, a factory to workers
TRAIN = dict(
    iterations=1,
    episodes_per_iteration=3,
    partners={"piston_4": "random"},
    langmarl={"counterfactual": ["alternatives"]},
    validation_seeds=[1001, 1002],
    test_seeds=[2000],
    workers=2,
    actor_backend=STAND_IN_SPEC,
)

_requests_here = [0]  # actor requests answered by this process


def actor_reply(req: GenerationRequest, kill_mark: str | None = None) -> str:
    """The stand-in's actor: plays what its policy says. With ``kill_mark``, the first process to
    reach its 7th request of a run (mid-episode: an episode asks 5 pistons x 10 decisions) exits at once,
    leaving the mark file behind so that no other one does."""
    assert role_of(req) == "actor", req.role
    _requests_here[0] += 1
    if kill_mark is not None and _requests_here[0] == 7 and not os.path.exists(kill_mark):
        Path(kill_mark).write_text(str(os.getpid()))
        os._exit(1)
    policy = [line for line in prompt_of(req).splitlines() if line.startswith("Policy: ")][-1]
    return "down" if "down" in policy else "up"


def stand_in_backend(kill_mark: str | None = None) -> ScriptedBackend:
    """The worker's actor backend (built once per worker process and run)."""
    _requests_here[0] = 0
    return ScriptedBackend(functools.partial(actor_reply, kill_mark=kill_mark))


def pid_of(_x: object) -> int:
    return os.getpid()


def square_after_one(job: tuple[int, str]) -> int:
    """Task 0 finishes only after the driver has handled task 1's result (``on_result`` marks it
    with a file ``seen-1``), whatever the load: a marker written by task 1 itself would let task 0
    finish before the driver noticed task 1, and the two results could then arrive together."""
    import time

    x, folder = job
    if x == 0:
        deadline = time.monotonic() + 120
        while not (Path(folder) / "seen-1").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return x * x


def fail_on_two(x: int) -> int:
    if x == 2:
        raise KeyError(f"task {x}")
    return x


@pytest.fixture(scope="module")
def cluster():
    """A new local Ray cluster for this module, even if one runs here (workers see this folder and a
    placeholder API key)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'lang_pz[ray]')")
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "OPENAI_API_KEY")}
    os.environ["RAY_AUTH_MODE"] = "disabled"  # no ~/.ray/auth_token
    os.environ["OPENAI_API_KEY"] = "sk-test-not-a-real-key"
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    ray.init(address="local", num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    ray.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def stand_in_on_workers():
    from lang_pz.executor_ray import register_worker_backend

    def register(kill_mark: Path | None = None) -> None:
        register_worker_backend(
            STAND_IN_SPEC, functools.partial(stand_in_backend, None if kill_mark is None else str(kill_mark))
        )

    yield register
    register_worker_backend(STAND_IN_SPEC, None)


def assert_same_run(local: Path, remote: Path) -> None:
    a, b = run_contents(local), run_contents(remote)
    assert sorted(a) == sorted(b)
    for name in a:
        if name == "config.json":
            assert (a[name]["executor"], b[name]["executor"]) == ("local", "ray")
            assert {**a[name], "executor": None} == {**b[name], "executor": None}
        else:
            assert a[name] == b[name], name


def train_local(run: Path) -> None:
    from lang_pz.training import train

    train(config(run, **TRAIN), backends=StandIn(AGENTS[:3]).backend)


def train_on_ray(run: Path) -> None:
    from lang_pz.training import train

    train(config(run, executor="ray", **TRAIN), backends=StandIn(AGENTS[:3]).backend)


# -- the executor ---------------------------------------------------------------------------


def test_remote_tasks_run_in_worker_processes_local_ones_here_in_input_order(cluster, tmp_path):
    from lang_pz.executor_ray import RayExecutor

    ex = RayExecutor(workers=2)
    finished: list[int] = []
    jobs = [(x, str(tmp_path)) for x in range(4)]

    def seen(i: int, result: int) -> None:
        finished.append(i)
        (tmp_path / f"seen-{i}").write_text("")

    assert ex.map(square_after_one, jobs, on_result=seen, remote=True) == [0, 1, 4, 9]
    assert sorted(finished) == [0, 1, 2, 3] and finished[0] == 1  # on_result in completion order
    assert os.getpid() not in ex.map(pid_of, range(4), remote=True)
    assert ex.map(pid_of, range(4)) == [os.getpid()] * 4  # LLM calls use this process's backends
    assert ex.map(pid_of, [], remote=True) == []


def test_a_task_exception_is_raised_as_its_own_type_and_not_retried(cluster):
    from lang_pz.executor_ray import RayExecutor

    with pytest.raises(KeyError, match="task 2"):
        RayExecutor(workers=2).map(fail_on_two, range(4), remote=True)
    with pytest.raises(ValueError, match="workers"):
        RayExecutor(workers=0)


def test_a_backend_object_that_workers_cannot_receive_is_refused_before_anything_is_written(tmp_path):
    """Without a factory for the actor spec, workers would silently play another model."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'lang_pz[ray]')")
    from lang_pz.error import InvalidKwargError
    from lang_pz.training import train

    with pytest.raises(InvalidKwargError, match="register_worker_backend"):
        train(config(tmp_path / "run", executor="ray", **TRAIN), backends=StandIn().backend)
    assert not (tmp_path / "run").exists()


def test_without_ray_the_error_names_the_extra_to_install(monkeypatch):
    from lang_pz.error import DependencyNotInstalled
    from lang_pz.executor_ray import RayExecutor

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(DependencyNotInstalled, match=r"pip install 'lang_pz\[ray\]'"):
        RayExecutor(workers=2)


# -- training through it --------------------------------------------------------------------


def test_training_on_ray_writes_what_the_local_executor_writes(cluster, stand_in_on_workers, tmp_path):
    """Episodes, re-runs, validation and test episodes on Ray workers; critic and optimiser here."""
    stand_in_on_workers()
    train_local(tmp_path / "local")
    train_on_ray(tmp_path / "ray")
    assert_same_run(tmp_path / "local", tmp_path / "ray")
    m = json.loads((tmp_path / "ray" / "metrics.jsonl").read_text())
    assert m["usage"]["actor"]["calls"] > 0  # the workers' calls are counted by the driver


def test_a_worker_killed_mid_episode_loses_and_duplicates_nothing(cluster, stand_in_on_workers, tmp_path):
    mark = tmp_path / "killed"
    stand_in_on_workers(kill_mark=mark)
    train_local(tmp_path / "local")
    train_on_ray(tmp_path / "ray")
    assert mark.exists() and int(mark.read_text()) != os.getpid()  # a worker process really died
    assert_same_run(tmp_path / "local", tmp_path / "ray")
    episodes = [
        json.loads(x)["episode"] for x in (tmp_path / "ray" / "iter_000" / "trajectories.jsonl").read_text().splitlines()
    ]
    assert sorted(set(episodes)) == [0, 1, 2] and episodes == sorted(episodes)


def test_workers_build_an_openai_backend_from_the_spec(cluster, tmp_path):
    """The real path: `lang-pz train --executor ray` with an OpenAI-compatible endpoint; every
    actor call is made by a worker's own client and counted in the run's metrics."""
    from typer.testing import CliRunner

    from lang_pz.cli import app
    from lang_pz.test.fake_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        options = json.dumps({"openai:fake": {"base_url": server.url, "cache": False}})
        res = CliRunner().invoke(
            app,
            [
                "train",
                "--executor",
                "ray",
                "--backend",
                "openai:fake",
                "--iterations",
                "1",
                "--episodes",
                "2",
                "--kw",
                "n_pistons=3",
                "--kw",
                "hold=5",
                "--kw",
                "max_cycles=25",
                "--run-dir",
                str(tmp_path / "run"),
                "--set",
                f"backend_options={options}",
                "--set",
                "workers=2",
                "--set",
                "validation_seeds=[1001]",
                # the fake server's updates ('{"policy": "ok"}') fail the rewrite limit: this test
                # is about where the backends are built, not about a stage that stops the run
                "--set",
                "on_stage_failure=continue",
            ],
        )
        kinds = [kind for _path, _fault, kind in server.log]
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "run" / "metrics.jsonl").read_text())
    assert json.loads((tmp_path / "run" / "config.json").read_text())["executor"] == "ray"
    assert m["usage"]["actor"]["calls"] == kinds.count("choice") > 0
    assert m["llm_calls"] == len(kinds)
