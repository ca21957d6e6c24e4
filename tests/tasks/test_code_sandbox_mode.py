"""The code task envs' ``sandbox=`` keyword argument and the sandbox check at make()/reset."""

from __future__ import annotations

import warnings

import pytest
from support import requires_bwrap

import lang_pz
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.tasks.datasets import demo_items
from lang_pz.tasks.sandbox import SandboxConfig, isolation

ENV_IDS = ("tasks/humaneval-v0", "tasks/mbpp-v0")


def _play(env, reply: str) -> float:
    env.reset(seed=0)
    env.step(reply)
    return sum(env.rewards.values())


@requires_bwrap
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sandbox_kwarg_picks_the_mode(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rlimits mode warns once per configuration
        env = lang_pz.make(env_id, source="demo", index=0, turns=("coder",), sandbox="rlimits")
    assert env.sandbox.bubblewrap is False and env.sandbox.timeout_s == 10.0
    benchmark = "humaneval" if "humaneval" in env_id else "mbpp"
    item = demo_items(benchmark)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _play(env, item.prompt + item.canonical_solution if item.entry_point else item.canonical_solution) == 1.0
    assert lang_pz.make(env_id, source="demo", sandbox="bubblewrap").sandbox.bubblewrap is None
    env = lang_pz.make(env_id, source="demo", timeout_s=3.0, sandbox={"max_processes": 4})
    assert (env.sandbox.timeout_s, env.sandbox.max_processes, env.sandbox.memory_mb) == (3.0, 4, 512)
    config = SandboxConfig(timeout_s=2.0, memory_mb=256)
    assert lang_pz.make(env_id, source="demo", sandbox=config).sandbox is config


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sandbox": "rlimit"}, r"sandbox must be one of \['bubblewrap', 'rlimits'\].*got 'rlimit'"),
        ({"sandbox": 3}, r"sandbox must be 'bubblewrap', 'rlimits'.*got int 3"),
        ({"sandbox": {"bubblewrapp": False}}, r"\['bubblewrapp'\] are not SandboxConfig fields; valid: .*'bubblewrap'"),
        ({"sandbox": {"timeout_s": 2}, "timeout_s": 3.0}, r"timeout_s given both as a keyword argument and in sandbox="),
        ({"sandbox": SandboxConfig(), "memory_mb": 1024}, r"memory_mb given both .* set memory_mb inside the SandboxConfig"),
        ({"sandbox": {"memory_mb": 1}}, r"memory_mb must be an integer >= 64, got 1"),
    ],
)
def test_bad_sandbox_kwargs_are_refused_with_the_fix(kwargs, match):
    with pytest.raises(InvalidKwargError, match=match):
        lang_pz.make("tasks/mbpp-v0", source="demo", **kwargs)


@pytest.fixture
def no_bubblewrap(monkeypatch):
    """This machine as one without bwrap: ``which`` finds nothing and no earlier probe is cached."""
    monkeypatch.setattr(isolation.shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(isolation, "_probed", {})


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_missing_bubblewrap_is_refused_at_make_with_the_fix(env_id, no_bubblewrap):
    with pytest.raises(
        LangPZError, match=r"apt-get install bubblewrap.*SandboxConfig\(bubblewrap=False\).*sandbox='rlimits'"
    ):
        lang_pz.make(env_id, source="demo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = lang_pz.make(env_id, source="demo", sandbox="rlimits")  # the opt-in still works
        env.reset(seed=0)


def test_a_sandbox_replaced_after_make_is_checked_at_reset(no_bubblewrap):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = lang_pz.make("tasks/mbpp-v0", source="demo", sandbox="rlimits")
    env.sandbox = SandboxConfig(bubblewrap=True)
    with pytest.raises(LangPZError, match="apt-get install bubblewrap"):
        env.reset(seed=0)
    env.sandbox = "rlimits"
    with pytest.raises(LangPZError, match="env.sandbox must be a SandboxConfig, got str 'rlimits'"):
        env.reset(seed=0)


def test_a_bwrap_path_that_is_no_program_counts_as_missing(tmp_path, monkeypatch):
    """``/dev/null`` bound over /usr/bin/bwrap (how a machine without the package is simulated), an
    empty folder or a file without the execute bit: ``bwrap is not installed``, with the fix."""
    script = tmp_path / "bwrap"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    monkeypatch.setattr(isolation.shutil, "which", lambda *a, **k: str(script))
    assert isolation.find_bwrap() == str(script)
    plain = tmp_path / "plain"
    plain.write_text("")
    (tmp_path / "folder").mkdir()
    for fake in ("/dev/null", str(tmp_path / "folder"), str(plain)):
        monkeypatch.setattr(isolation.shutil, "which", lambda *a, fake=fake, **k: fake)
        assert isolation.find_bwrap() is None, fake
    monkeypatch.setattr(isolation, "_probed", {})
    with pytest.raises(LangPZError, match=r"bwrap is not installed.*apt-get install bubblewrap.*sandbox='rlimits'"):
        lang_pz.make("tasks/mbpp-v0", source="demo")
