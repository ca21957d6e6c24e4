"""lang_pz.envs.overcooked.planners: planners are built in each process, never read from or
written to a file, so no cache folder can hand a process a pickle to run."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

import lang_pz
from lang_pz.envs.overcooked import planners as overcooked_planners

pytest.importorskip("overcooked_ai_py")

#: Files a cache folder may hold from earlier lang_pz versions (which unpickled them): its own
#: cramped_room planners, and overcooked_ai's motion planner / action manager pickles.
PICKLES_ONCE_READ = (
    "overcooked/cramped_room-1.1.0-np2-mlam-31a4c1930fc0a30f.pkl",
    "overcooked/cramped_room-1.1.0-np2-counter-mp-4a19d5ebb1d695b8.pkl",
    "overcooked/cramped_room-1.1.0-np1-mlam-31a4c1930fc0a30f.pkl",
    "overcooked/cramped_room-1.1.0-np1-counter-mp-4a19d5ebb1d695b8.pkl",
    "overcooked/overcooked_ai/cramped_room_mp.pkl",
    "overcooked/overcooked_ai/cramped_room_am.pkl",
)


class _Plant:
    """Unpickling it creates the folder ``marker``: proof that a planted pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _skills_env(cache_dir, monkeypatch):
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(overcooked_planners, "_MEMO", {})
    env = lang_pz.make("overcooked/cramped_room-v0", actions="macro")
    env.reset(seed=0)
    env.step({"player_0": "pick up onion", "player_1": "pick up onion"})
    return env


def test_planted_planner_pickles_are_never_loaded(tmp_path, monkeypatch):
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    for name in PICKLES_ONCE_READ:
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).write_bytes(pickle.dumps(_Plant(marker)))
    _skills_env(cache, monkeypatch)
    assert not marker.exists()


def test_building_planners_unpickles_nothing_and_writes_nothing(tmp_path, monkeypatch):
    import overcooked_ai_py
    from overcooked_ai_py.planning import planners

    site = Path(overcooked_ai_py.__file__).parent / "data" / "planners"
    before = sorted(p.name for p in site.iterdir())
    saved = (planners.PLANNERS_DIR, planners.MotionPlanner.__dict__["from_pickle_or_compute"])

    def refuse(*args, **kwargs):
        raise AssertionError("a planner was unpickled")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    _skills_env(tmp_path, monkeypatch)
    assert not list(tmp_path.rglob("*"))  # nothing kept in the cache folder
    assert sorted(p.name for p in site.iterdir()) == before  # nor in site-packages
    assert (planners.PLANNERS_DIR, planners.MotionPlanner.__dict__["from_pickle_or_compute"]) == saved


def test_planners_are_built_once_per_process_and_layout(tmp_path, monkeypatch):
    from overcooked_ai_py.planning import planners

    _skills_env(tmp_path, monkeypatch)

    def refuse(*args, **kwargs):
        raise AssertionError("planner rebuilt although this process has it")

    monkeypatch.setattr(planners.MediumLevelActionManager, "__init__", refuse)
    monkeypatch.setattr(planners.MotionPlanner, "__init__", refuse)
    lang_pz.make("overcooked/cramped_room-v0", actions="macro").reset(seed=1)
