"""Every registered language environment, in every API it supports, passes lang_pz.test."""

from __future__ import annotations

import warnings

import pytest
from pettingzoo.test import api_test, parallel_api_test
from support import any_sandbox

import lang_pz
from lang_pz.test import language_api_test
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

# Read from the registry at collection time: a newly registered env is tested automatically.
CASES = [
    pytest.param(env_id, api, id=f"{env_id}[{api}]")
    for env_id, spec in sorted(lang_pz.registry.items())
    for api in spec.apis
]


@pytest.mark.parametrize(("env_id", "api"), CASES)
def test_registered_env_complies(env_id, api):
    assert language_api_test(env_id, api=api, kwargs=any_sandbox(env_id)) == [api]


def test_every_registered_env_is_covered():
    assert {p.values[0] for p in CASES} == set(lang_pz.registry)


@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_pistonball_20_pistons_full_episode_api_test(api):
    env = lang_pz.make("butterfly/pistonball-v0", api=api, n_pistons=20)
    assert len(env.possible_agents) == 20
    if api == "aec":
        api_test(env, num_cycles=125)
    else:
        parallel_api_test(env, num_cycles=125)


def test_pistonball_3_pistons():
    with pytest.warns(UserWarning, match="3 pistons"):
        assert language_api_test("butterfly/pistonball-v0", kwargs={"n_pistons": 3}) == ["parallel", "aec"]


def test_pistonball_continuous_and_hold():
    language_api_test("butterfly/pistonball-v0", kwargs={"n_pistons": 4, "continuous": True, "hold": 2}, num_cycles=20)


def test_rps_five_moves():
    language_api_test("classic/rps-v0", kwargs={"num_actions": 5})


def _rps(api):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.classic import rps_v2
    return rps_v2.parallel_env(max_cycles=5) if api == "parallel" else rps_v2.env(max_cycles=5)


@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_constructor_with_generic_adapter_complies(api):
    wrapper = LanguageParallelWrapper if api == "parallel" else LanguageAECWrapper
    assert language_api_test(lambda: wrapper(_rps(api))) == [api]


# -- the checks catch broken environments -------------------------------------------------


class AcceptsAnything(LanguageAdapter):
    """Broken: maps any text to an action, so garbage never sets parse_error."""

    def parse(self, env, agent, text, observation, info):
        return 0


class ListsAnIllegalWord(LanguageAdapter):
    """Broken: advertises a word its parser rejects."""

    def legal_actions(self, env, agent, observation, info):
        return ["0", "1", "2", "lizard"]


class RoundTripBroken(LanguageAdapter):
    """Broken: action_text does not parse back to the action."""

    def action_text(self, env, agent, action):
        return "0"


@pytest.mark.parametrize(
    ("adapter", "message"),
    [
        (AcceptsAnything, "cannot be expressed: its text '1' parses to 0"),
        (ListsAnIllegalWord, "legal action 'lizard' does not parse"),
        (RoundTripBroken, "parses to 0, not back to"),
    ],
)
@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_broken_adapters_are_caught(adapter, message, api):
    wrapper = LanguageParallelWrapper if api == "parallel" else LanguageAECWrapper
    with pytest.raises(AssertionError, match=message.replace("[", r"\[").replace("]", r"\]")):
        language_api_test(lambda: wrapper(_rps(api), adapter()), api_tests=False, seed_tests=False)


def test_garbage_that_parses_is_caught():
    from lang_pz.test.checks import check_decoded

    with pytest.raises(AssertionError, match=r"did not set info\['parse_error'\]"):
        check_decoded({"action_text": "qwzx", "action": 0, "parse_error": None, "fallback": False}, "qwzx", True, "here")


def test_strict_flag_that_does_nothing_is_caught():
    class IgnoresStrict(LanguageAECWrapper):
        def step(self, action):
            self.strict = False
            super().step(action)

    with pytest.raises(AssertionError, match="strict mode accepted garbage"):
        language_api_test(lambda: IgnoresStrict(_rps("aec")), api_tests=False, seed_tests=False)


def test_unknown_id_raises():
    with pytest.raises(lang_pz.error.UnknownEnvironmentError):
        language_api_test("classic/tictactoe-v9")


def test_observation_outside_its_space_is_caught():
    from lang_pz.spaces import text_observation_space
    from lang_pz.test.checks import check_observation

    space = text_observation_space(10)
    check_observation(space, {"text": "ok: 1\n2"}, "here")
    check_observation(space, {"text": "\u00e9t\u00e9 K\u2665 \u250c\u2500"}, "here")  # Unicode is in the space
    with pytest.raises(AssertionError, match="characters outside the charset: \\['\\\\x01'\\]"):
        check_observation(space, {"text": "a\x01b"}, "here")
    with pytest.raises(AssertionError, match="length 11"):
        check_observation(space, {"text": "x" * 11}, "here")
    with pytest.raises(AssertionError, match="must be"):
        check_observation(space, "plain str", "here")


@pytest.mark.parametrize("env_id", ["classic/rps-v0", "butterfly/pistonball-v0"])
def test_parallel_env_through_parallel_to_aec_complies(env_id):
    from pettingzoo.utils.conversions import parallel_to_aec

    kwargs = lang_pz.registry[env_id].test_kwargs

    def aec_of_parallel():
        return parallel_to_aec(lang_pz.make(env_id, api="parallel", **kwargs))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pistonball's few-pistons warning
        assert language_api_test(aec_of_parallel, num_cycles=20) == ["aec"]
