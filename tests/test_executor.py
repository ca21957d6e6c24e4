"""Executors and environment pools; concurrent training writes what serial training writes."""

from __future__ import annotations

import functools
import threading
import time

import pytest
from standins import AGENTS, StandIn, config, run_contents

from lang_pz.executor import EnvPool, LocalExecutor


def test_results_come_back_in_input_order_whatever_finishes_first():
    done = []

    def slow_first(x):
        time.sleep(0.05 if x == 0 else 0.0)
        return x * 10

    out = LocalExecutor(4).map(slow_first, [0, 1, 2, 3], on_result=lambda i, r: done.append(i))
    assert out == [0, 10, 20, 30]
    assert sorted(done) == [0, 1, 2, 3]


def test_tasks_really_overlap():
    inside, peak, lock = [0], [0], threading.Lock()

    def task(_):
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
        time.sleep(0.05)
        with lock:
            inside[0] -= 1

    LocalExecutor(3).map(task, range(6))
    assert peak[0] >= 2  # one worker would keep it at 1
    peak[0] = 0
    LocalExecutor(1).map(task, range(3))
    assert peak[0] == 1


def test_the_first_error_is_raised():
    def boom(x):
        if x == 2:
            raise ValueError("task 2")
        return x

    with pytest.raises(ValueError, match="task 2"):
        LocalExecutor(2).map(boom, range(4))
    with pytest.raises(ValueError, match="workers"):
        LocalExecutor(0)


def test_env_pool_makes_one_more_instance_only_when_all_are_busy():
    made = []
    pool = EnvPool(lambda: made.append(object()) or made[-1])
    with pool.lease() as a:
        with pool.lease() as b:
            assert a is not b
    with pool.lease() as c:
        assert c in (a, b)
    assert pool.size == 2


def test_concurrent_training_writes_what_serial_training_writes(tmp_path):
    """Episodes, re-runs, validation, critic and optimiser calls at once: same files as one by one."""
    kw = dict(
        iterations=2,
        episodes_per_iteration=3,
        partners={"piston_4": "random"},
        langmarl={"counterfactual": ["alternatives"]},
        validation_seeds=[1001, 1002],
        test_seeds=[2000],
    )
    from lang_pz.training import train

    train(config(tmp_path / "serial", workers=1, **kw), backends=StandIn(AGENTS[:3]).backend)
    train(config(tmp_path / "concurrent", workers=6, **kw), backends=StandIn(AGENTS[:3]).backend)
    a, b = run_contents(tmp_path / "serial"), run_contents(tmp_path / "concurrent")
    assert sorted(a) == sorted(b)
    for name in a:
        if name == "config.json":
            assert {**a[name], "workers": None} == {**b[name], "workers": None}
        else:
            assert a[name] == b[name], name


def test_episode_tasks_pickle_without_their_backend_or_environments(tmp_path):
    """What a remote worker receives: policy texts and the config, never a model, a client or an env."""
    import pickle

    from lang_pz.training import build
    from lang_pz.training.players import Players, play_job

    parts = build(config(tmp_path / "run", partners={"piston_4": "random"}), backends=StandIn().backend)
    players = Players(parts.envs["train"], parts.actors(dict.fromkeys(AGENTS[:4], "Always push up.")), parts.executor)
    blob = pickle.dumps(functools.partial(play_job, players))
    assert b"ScriptedBackend" not in blob and b"RoleMeter" not in blob
    job = pickle.loads(blob)
    assert job.args[0].actors.backend is None and job.args[0].pool is None
    with pytest.raises(TypeError, match="TeamSpec"):
        pickle.dumps(Players(parts.envs["train"], lambda env: {}, parts.executor))


def test_default_workers_follow_the_embedded_instances():
    from lang_pz.training import TrainConfig

    assert TrainConfig().worker_count() == 1  # one embedded instance serves one request at a time
    assert TrainConfig(backend_options={"embedded": {"instances": 2}}).worker_count() == 2
    assert TrainConfig(backend_options={"embedded": {"instances": 2}}, workers=5).worker_count() == 5
    assert TrainConfig(actor_backend="openai:m").worker_count() == 8


def test_more_embedded_instances_than_requests_in_flight_warn(tmp_path):
    from lang_pz.training import build

    cfg = config(tmp_path / "r", workers=1, backend_options={"embedded": {"instances": 3}})
    with pytest.warns(UserWarning, match="instances=3, but at most 1 LLM requests are in flight .* 2 instance"):
        build(cfg, backends=StandIn(AGENTS[:3]).backend).close()


def test_embedded_instances_are_the_actors_the_critic_and_optimiser_share_one(tmp_path, monkeypatch):
    import lang_pz.training.parts as loop

    built = []

    def fake_make_backend(spec, **options):  # records what build asks for; a scripted stand-in serves
        built.append((spec, options))
        return StandIn(AGENTS[:3]).backend

    monkeypatch.setattr(loop, "make_backend", fake_make_backend)
    loop.build(config(tmp_path / "r", backend_options={"embedded": {"instances": 2, "n_threads": 1}})).close()
    assert built == [("embedded", {"instances": 2, "n_threads": 1}), ("embedded", {"n_threads": 1})]
