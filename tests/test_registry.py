"""The registry: ids, kwargs checking with "did you mean", missing optional dependencies."""

from __future__ import annotations

import inspect
import re
import sys
import textwrap

import pytest

import lang_pz
from lang_pz.error import DependencyNotInstalled, InvalidKwargError, UnknownEnvironmentError
from lang_pz.registration import EnvSpec, kwargs_of, register, registry

ALL_IDS = sorted(registry)


@pytest.fixture
def temporary_spec():
    """Register specs for one test and remove them afterwards."""
    added: list[str] = []

    def add(spec: EnvSpec) -> EnvSpec:
        register(spec)
        added.append(spec.id)
        return spec

    yield add
    import gymnasium
    import pettingzoo

    for env_id in added:
        registry.pop(env_id, None)
        gymnasium.registry.pop(env_id, None)  # register() mirrors a spec into the registries users know
        for mirrored in (getattr(pettingzoo, "aec_registry", {}), getattr(pettingzoo, "parallel_registry", {})):
            mirrored.pop(env_id, None)


def test_builtin_ids_registered():
    for env_id in (
        "butterfly/pistonball-v0",
        "classic/tictactoe-v0",
        "classic/connect_four-v0",
        "classic/rps-v0",
        "classic_control/cartpole-v0",
        "toy_text/frozen_lake-v0",
    ):
        assert env_id in registry


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_spec_is_well_formed(env_id):
    s = registry[env_id]
    assert re.fullmatch(r"[a-z0-9_]+/[a-z0-9_]+-v\d+", env_id), env_id
    assert s.apis and set(s.apis) <= {"aec", "parallel", "gymnasium"}
    assert s.description
    fn = s.load()
    params = inspect.signature(fn).parameters
    assert "api" in params
    accepted = kwargs_of(env_id)
    for key in {**s.kwargs, **s.test_kwargs}:
        assert key in accepted, f"{env_id}: test/default kwarg {key!r} is not accepted"


@pytest.mark.parametrize(
    ("typo", "expected"),
    [
        ("butterfly/pistonbal-v0", "butterfly/pistonball-v0"),
        ("classic/tictactoe-v3", "classic/tictactoe-v0"),
        ("classic/connect4-v0", "classic/connect_four-v0"),
        ("toy_text/frozenlake-v0", "toy_text/frozen_lake-v0"),
        ("classic_control/CartPole-v1", "classic_control/cartpole-v0"),
    ],
)
def test_unknown_id_suggests_close_id(typo, expected):
    with pytest.raises(UnknownEnvironmentError) as info:
        lang_pz.make(typo)
    message = str(info.value)
    assert repr(typo) in message and "Did you mean" in message and repr(expected) in message


def test_unknown_id_without_close_match():
    with pytest.raises(UnknownEnvironmentError) as info:
        lang_pz.make("zzzz/qqqq-v9")
    assert "Did you mean" not in str(info.value) and "lang-pz envs" in str(info.value)
    assert isinstance(info.value, KeyError)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "suggestion"),
    [
        ("butterfly/pistonball-v0", {"n_piston": 5}, "n_pistons"),
        ("butterfly/pistonball-v0", {"max_cycle": 5}, "max_cycles"),
        ("classic/rps-v0", {"num_action": 5}, "num_actions"),
        ("classic/tictactoe-v0", {"stric": True}, "strict"),
        ("toy_text/frozen_lake-v0", {"is_slipery": False}, "is_slippery"),
        ("classic_control/cartpole-v0", {"max_episode_step": 10}, "max_episode_steps"),
    ],
)
def test_unknown_kwarg_suggests_close_kwarg(env_id, kwargs, suggestion):
    with pytest.raises(InvalidKwargError) as info:
        lang_pz.make(env_id, **kwargs)
    message = str(info.value)
    assert repr(next(iter(kwargs))) in message
    assert f"Did you mean {suggestion!r}" in message


@pytest.mark.parametrize("n_pistons", [1, 0, 21, 100, -3, "5", 2.5])
def test_bad_n_pistons_names_the_value(n_pistons):
    with pytest.raises(InvalidKwargError) as info:
        lang_pz.make("butterfly/pistonball-v0", n_pistons=n_pistons)
    assert repr(n_pistons) in str(info.value) and "n_pistons" in str(info.value)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "shown"),
    [
        ("butterfly/pistonball-v0", {"hold": 0}, "0"),
        ("classic/rps-v0", {"num_actions": 4}, "4"),
        ("classic/rps-v0", {"num_actions": 1}, "1"),
        ("classic/rps-v0", {"max_cycles": 0}, "0"),
        ("classic/tictactoe-v0", {"strict": "yes"}, "'yes'"),
        ("toy_text/frozen_lake-v0", {"map_name": "5x5"}, "'5x5'"),
        ("toy_text/frozen_lake-v0", {"is_slippery": "no"}, "'no'"),
        ("classic_control/cartpole-v0", {"max_episode_steps": -1}, "-1"),
    ],
)
def test_bad_values_name_the_value(env_id, kwargs, shown):
    with pytest.raises(InvalidKwargError) as info:
        lang_pz.make(env_id, **kwargs)
    assert shown in str(info.value) and next(iter(kwargs)) in str(info.value)


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_unsupported_api_rejected(env_id):
    unsupported = [a for a in ("aec", "parallel", "gymnasium") if a not in registry[env_id].apis]
    for api in unsupported:
        with pytest.raises(InvalidKwargError, match=re.escape(repr(api))):
            lang_pz.make(env_id, api=api)


def test_default_api_is_the_first():
    from pettingzoo import AECEnv, ParallelEnv

    assert isinstance(lang_pz.make("classic/tictactoe-v0"), AECEnv)
    assert isinstance(lang_pz.make("classic/rps-v0"), ParallelEnv)
    assert isinstance(lang_pz.make("classic/rps-v0", api="aec"), AECEnv)


def test_missing_entry_point_module_names_the_extra(temporary_spec):
    temporary_spec(
        EnvSpec(
            id="test/missing-v0",
            entry_point="lang_pz_no_such_package.envs:make_env",
            description="needs a package that is not installed",
            extra="fancy",
        )
    )
    with pytest.raises(DependencyNotInstalled) as info:
        lang_pz.make("test/missing-v0")
    message = str(info.value)
    assert "test/missing-v0" in message and "lang_pz_no_such_package" in message
    assert "pip install 'lang_pz[fancy]'" in message
    assert isinstance(info.value, ImportError)


def test_entry_point_importing_a_missing_dependency(temporary_spec, tmp_path, monkeypatch):
    (tmp_path / "lang_pz_tmp_envmod.py").write_text(
        textwrap.dedent("""
        import lang_pz_absent_dependency  # noqa: F401

        def make_env(api="parallel"):
            raise AssertionError("unreachable")
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    temporary_spec(
        EnvSpec(
            id="test/needs_dep-v0",
            entry_point="lang_pz_tmp_envmod:make_env",
            description="imports a missing dependency",
            extra="somegame",
        )
    )
    try:
        with pytest.raises(DependencyNotInstalled) as info:
            lang_pz.make("test/needs_dep-v0")
    finally:
        sys.modules.pop("lang_pz_tmp_envmod", None)
    assert "lang_pz_absent_dependency" in str(info.value)
    assert "lang_pz[somegame]" in str(info.value)


def test_temporary_specs_are_removed():
    assert not any(env_id.startswith("test/") for env_id in registry)


def test_duplicate_registration_rejected():
    with pytest.raises(ValueError, match="already registered"):
        register(registry["classic/rps-v0"])


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"continuous": "false"}, "continuous"),
        ({"max_cycles": 0}, "max_cycles"),
        ({"time_penalty": "abc"}, "time_penalty"),
        ({"render_mode": "foo"}, "render_mode"),
        ({"strict": "no"}, "strict"),
        ({"n_pistons": True}, "n_pistons"),
        ({"hold": 2.5}, "hold"),
    ],
)
def test_pistonball_rejects_wrong_types_naming_the_value(kwargs, named):
    with pytest.raises(InvalidKwargError, match=named):
        lang_pz.make("butterfly/pistonball-v0", **kwargs)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_numeric_kwargs_must_be_finite(bad):
    from lang_pz.error import InvalidKwargError

    with pytest.raises(InvalidKwargError, match="finite"):
        lang_pz.make("butterfly/pistonball-v0", n_pistons=3, time_penalty=bad)


@pytest.mark.parametrize(
    ("typo", "expected", "unrelated"),
    [
        ("butterfly/pistonbal-v0", "butterfly/pistonball-v0", "tasks/humaneval-v0"),
        ("classic/tictactoe-v3", "classic/tictactoe-v0", "classic/connect_four-v0"),
        ("classic/connect4-v0", "classic/connect_four-v0", "classic/rps-v0"),
        ("tictactoe", "classic/tictactoe-v0", "classic/rps-v0"),
    ],
)
def test_unknown_id_suggests_only_close_ids(typo, expected, unrelated):
    """A typo's hint names the close id and no unrelated one (difflib's 0.4 cutoff suggested
    'tasks/humaneval-v0' for 'butterfly/pistonbal-v0')."""
    with pytest.raises(UnknownEnvironmentError) as info:
        lang_pz.make(typo)
    message = str(info.value)
    assert repr(expected) in message and repr(unrelated) not in message


@pytest.mark.parametrize("bad", [None, 123, ["butterfly/pistonball-v0"]])
def test_a_non_str_id_is_a_clear_error(bad):
    from lang_pz.error import UnknownEnvironmentError

    with pytest.raises(UnknownEnvironmentError, match="an environment id is a str"):
        lang_pz.make(bad)


def test_gymnasium_make_builds_lang_pz_single_agent_ids_with_the_same_checks():
    import gymnasium

    env = gymnasium.make("classic_control/cartpole-v0", max_episode_steps=5)
    obs, info = env.reset(seed=0)
    assert "Cart position" in obs["text"] and info["legal_actions"]
    with pytest.raises(InvalidKwargError, match="Did you mean 'max_episode_steps'"):
        gymnasium.make("classic_control/cartpole-v0", max_episode_step=5)


def test_pettingzoo_make_builds_lang_pz_multi_agent_ids():
    import pettingzoo

    if not hasattr(pettingzoo, "make"):
        pytest.skip("this PettingZoo has no registry")
    env = pettingzoo.make("parallel", "classic/rps-v0", max_cycles=3)
    obs, _ = env.reset(seed=0)
    assert all("text" in o for o in obs.values())
    assert "classic/tictactoe-v0" in pettingzoo.aec_registry
    # AEC only: asked for as parallel, an error that says so and how to get a ParallelEnv (PettingZoo's own
    # lookup said "NameNotFound ... Available environments: [...]" or "Namespace 'openspiel' not found")
    with pytest.raises(InvalidKwargError) as info:
        pettingzoo.make("parallel", "classic/tictactoe-v0")
    said = str(info.value)
    assert "classic/tictactoe-v0 has no 'parallel' API" in said and "pettingzoo.make('aec', " in said
    assert "turn_based_aec_to_parallel" in said
    with pytest.raises(InvalidKwargError, match=r"single-agent: gymnasium.make\('classic_control/cartpole-v0'\)"):
        pettingzoo.make("aec", "classic_control/cartpole-v0")


def test_a_family_makes_any_name_and_says_which_extra_it_needs(temporary_spec):
    from lang_pz.registration import families, register_family

    register_family(EnvSpec(id="zz_family", entry_point="lang_pz_no_such_module:make", description="x", extra="zz"))
    try:
        with pytest.raises(DependencyNotInstalled, match=r"zz_family/anything needs .*lang_pz\[zz\]"):
            lang_pz.make("zz_family/anything")
        assert "zz_family/anything" not in registry
    finally:
        families.pop("zz_family")


def test_an_id_without_version_is_the_highest_registered_version(temporary_spec):
    """As gymnasium.make and pettingzoo.make resolve it (``classic/tictactoe`` was refused)."""
    assert lang_pz.spec("classic/tictactoe").id == "classic/tictactoe-v0"
    with pytest.raises(UnknownEnvironmentError, match="Did you mean 'classic/tictactoe-v0'"):
        lang_pz.make("classic/tictactoe-v3")  # a version that is not registered is not resolved
    entry_point = registry["classic/tictactoe-v0"].entry_point
    temporary_spec(EnvSpec(id="classic/tictactoe-v7", entry_point=entry_point, description="x", apis=("aec",)))
    assert lang_pz.spec("classic/tictactoe").id == "classic/tictactoe-v7"


def test_an_api_an_env_lacks_says_how_to_get_one():
    with pytest.raises(InvalidKwargError) as info:
        lang_pz.make("classic/tictactoe-v0", api="parallel")
    assert "has no 'parallel' API" in str(info.value) and "turn_based_aec_to_parallel" in str(info.value)


def test_canonical_id_names_the_registered_id_and_never_raises():
    from lang_pz.evaluation.bases import env_family
    from lang_pz.registration import canonical_id

    assert canonical_id("butterfly/pistonball") == "butterfly/pistonball-v0"
    assert canonical_id("no/such-v3") == "no/such-v3"
    assert env_family("butterfly/pistonball") == "pistonball"  # the fault benchmark's defaults follow
