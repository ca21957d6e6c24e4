"""lang_pz.envs.overcooked.planners: a damaged planner cache is rebuilt; an unusable one is named."""

from __future__ import annotations

import pickle

import pytest

import lang_pz
from lang_pz.envs.overcooked import planners as overcooked_planners
from lang_pz.error import LangPZError


class _RaisesTypeError:
    """Pickles to a file whose loading raises TypeError (a corrupt cache need not raise UnpicklingError)."""

    def __reduce__(self):
        return (int, ("1", 2, 3))


def _planners(tmp_path, monkeypatch):
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(overcooked_planners, "_MEMO", {})
    env = lang_pz.make("overcooked/cramped_room-v0", actions="skills")
    env.reset(seed=0)
    return sorted((tmp_path / "overcooked").glob("*.pkl"))


def test_a_cache_file_whose_loading_raises_any_error_is_rebuilt(tmp_path, monkeypatch):
    files = _planners(tmp_path, monkeypatch)
    assert len(files) == 2
    for f in files:
        f.write_bytes(pickle.dumps(_RaisesTypeError()))
        with pytest.raises(TypeError):
            pickle.loads(f.read_bytes())
    assert _planners(tmp_path, monkeypatch) == files  # rebuilt, not a traceback
    for f in files:
        assert type(pickle.loads(f.read_bytes())).__name__ in ("MediumLevelActionManager", "MotionPlanner")
    assert not list((tmp_path / "overcooked").glob("*.tmp"))


def test_a_cache_dir_that_is_a_file_names_the_variable_and_the_folder(tmp_path, monkeypatch):
    not_a_dir = tmp_path / "cache.txt"
    not_a_dir.write_text("x")
    with pytest.raises(LangPZError) as err:
        _planners(not_a_dir, monkeypatch)
    msg = str(err.value)
    assert f"cannot keep Overcooked planners in {not_a_dir / 'overcooked'}" in msg
    assert "set LANG_PZ_CACHE_DIR to a writable folder" in msg and repr(str(not_a_dir)) in msg
