"""Third-party families wrapped without an adapter get the one registered for them (lang_pz.text.families):
every MPE2 scenario, SISL pursuit and multiwalker, KAZ. Before, their text was unlabelled numbers,
bare action indices, or "array of shape (27, 5) (min -1, mean -0.0198, max 0.825)"."""

from __future__ import annotations

import importlib
import importlib.util
import re

import numpy as np
import pytest
from gymnasium import spaces

from lang_pz.error import InvalidKwargError
from lang_pz.test import language_api_test
from lang_pz.test.checks import check_not_summary
from lang_pz.text import families
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

MPE2 = [
    "simple_v3",
    "simple_adversary_v3",
    "simple_crypto_v3",
    "simple_push_v3",
    "simple_reference_v3",
    "simple_speaker_listener_v4",
    "simple_spread_v3",
    "simple_tag_v3",
    "simple_world_comm_v3",
    "simple_formation_v1",
    "simple_line_v1",
    "collect_treasure_v1",
]
_NUMBER_LINE = re.compile(r"^Observation[^\n]*\[[-0-9., e]+\]$", flags=re.MULTILINE)


def _module(name: str):
    package = name.split(".")[0]
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # multiwalker without Box2D
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("scenario", MPE2)
def test_every_mpe2_scenario_names_every_number(scenario):
    from lang_pz.envs.mpe.family import MPEFamilyAdapter

    env = LanguageParallelWrapper(_module(f"mpe2.{scenario}").parallel_env(max_cycles=5))
    assert type(env.adapter) is MPEFamilyAdapter
    observations, infos = env.reset(seed=0)
    for agent in env.possible_agents:
        labels = env.adapter.observation_labels(env.env, agent)
        assert labels is not None and labels.size == env.env.observation_space(agent).shape[0], agent
        text = observations[agent]["text"]
        assert not _NUMBER_LINE.search(text), text  # numbers come with names, not as one bare list
        assert "from you (x, y)" in text or "message" in text or "colour" in text, text
        assert infos[agent]["legal_actions"][0] in ("stay", "red") or " and say " in infos[agent]["legal_actions"][0]


@pytest.mark.parametrize("scenario", ["simple_tag_v3", "simple_world_comm_v3", "collect_treasure_v1"])
def test_mpe2_family_complies(scenario):
    module = _module(f"mpe2.{scenario}")
    assert language_api_test(lambda: LanguageParallelWrapper(module.parallel_env(max_cycles=8)), num_cycles=8) == [
        "parallel"
    ]


def test_mpe2_partial_observability_names_the_nearest():
    module = _module("mpe2.simple_spread_v3")
    env = LanguageParallelWrapper(module.parallel_env(N=4, num_landmark_neighbors=2, num_agent_neighbors=2))
    observations, _ = env.reset(seed=0)
    text = observations["agent_0"]["text"]
    assert "nearest landmark 2 from you" in text and "nearest other agent 2's message" in text
    assert env.adapter.observation_labels(env.env, "agent_0").size == env.env.observation_space("agent_0").shape[0]


def test_mpe2_continuous_actions_are_named_components():
    module = _module("mpe2.simple_tag_v3")
    env = LanguageParallelWrapper(module.parallel_env(continuous_actions=True, max_cycles=5))
    _, infos = env.reset(seed=0)
    assert [c[0] for c in infos["agent_0"]["action_components"]] == ["none", "left", "right", "down", "up"]
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, "right=0.5 up=0.2"))
    assert infos["agent_0"]["parse_error"] is None


def test_kaz_is_a_table_of_named_rows_and_words():
    module = _module("pettingzoo.butterfly.knights_archers_zombies_v11")
    env = LanguageParallelWrapper(module.parallel_env(max_cycles=20))
    observations, infos = env.reset(seed=0)
    text = observations["archer_0"]["text"]
    assert "distance" in text and "heading x" in text and "\nyou:" in text and "knight_1:" in text
    assert "absent" in text  # KAZ's all-zero rows (no sword, arrow or zombie yet) are one line
    assert "mean" not in text
    assert infos["archer_0"]["legal_actions"] == ["forward", "backward", "counterclockwise", "clockwise", "attack", "wait"]
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, "I turn clockwise"))
    assert infos["archer_0"]["action"] == 3


def test_kaz_complies():
    module = _module("pettingzoo.butterfly.knights_archers_zombies_v11")
    assert language_api_test(lambda: LanguageParallelWrapper(module.parallel_env(max_cycles=15)), num_cycles=15) == [
        "parallel"
    ]


def test_pursuit_is_a_map_with_evaders_and_moves():
    module = _module("pettingzoo.sisl.pursuit_v5")
    env = LanguageAECWrapper(module.env(max_cycles=10))
    env.reset(seed=0)
    text = env.observe("pursuer_0")["text"]
    assert "@" in text and "Evaders in view" in text and "#" in text
    assert env.infos["pursuer_0"]["legal_actions"] == ["left", "right", "up", "down", "stay"]
    assert language_api_test(lambda: LanguageAECWrapper(module.env(max_cycles=10)), num_cycles=10) == ["aec"]


def test_multiwalker_names_its_31_numbers_and_torques():
    module = _module("pettingzoo.sisl.multiwalker_v9")
    env = LanguageParallelWrapper(module.parallel_env(max_cycles=10))
    observations, infos = env.reset(seed=0)
    text = observations["walker_0"]["text"]
    for name in ("hull angle", "knee 2 speed", "lidar", "right neighbour", "package angle"):
        assert name in text
    assert [c[0] for c in infos["walker_0"]["action_components"]] == ["hip_1", "knee_1", "hip_2", "knee_2"]
    assert language_api_test(lambda: LanguageParallelWrapper(module.parallel_env(max_cycles=10)), num_cycles=10) == [
        "parallel"
    ]


class _Waterworld:
    """A stand-in for PettingZoo <= 1.24's waterworld raw env (PettingZoo 1.27 has none)."""

    metadata = {"name": "waterworld_v4"}

    def __init__(self, n_sensors: int, speed_features: bool) -> None:
        self.env = type("Base", (), {"n_sensors": n_sensors, "speed_features": speed_features})()
        self.unwrapped = self


@pytest.mark.parametrize(("speed", "size"), [(True, 8 * 30 + 2), (False, 5 * 30 + 2)])
def test_waterworld_layout_from_its_documentation(speed, size):
    raw = _Waterworld(30, speed)
    adapter = families.adapter_for(raw)
    labels = adapter.observation_labels(raw, "pursuer_0")
    assert labels.size == size
    text = labels.render(np.linspace(0, 1, size))
    assert ("pursuer speed, sensors 1-30" in text) is speed and text.endswith("touching poison (1 yes): 1")


# -- the registry -----------------------------------------------------------------------------


def test_keys_and_lookup_order():
    raw = _Waterworld(4, True)
    assert families.keys_of(raw)[:2] == ["waterworld_v4", "waterworld"]
    assert type(families.adapter_for(object())) is LanguageAdapter  # nothing registered: generic


def test_register_refuses_a_second_adapter_for_a_key_and_bad_factories():
    with pytest.raises(InvalidKwargError, match="registered for 'mpe2' already"):
        families.register_adapter("mpe2", LanguageAdapter)
    with pytest.raises(InvalidKwargError, match="'module:attribute'"):
        families.register_adapter("mine", "no_colon_here")
    with pytest.raises(InvalidKwargError, match="non-empty str"):
        families.register_adapter("", LanguageAdapter)


def test_a_user_family_is_registered_once_and_found_by_name(monkeypatch):
    monkeypatch.setattr(families, "ADAPTERS", dict(families.ADAPTERS))
    made = []

    def factory(env):
        made.append(env)
        return LanguageAdapter(["a", "b", "c"])

    families.register_adapter("rps", factory)
    module = _module("pettingzoo.classic.rps_v2")
    env = LanguageAECWrapper(module.env(max_cycles=3))
    assert made and env.adapter.action_names == ["a", "b", "c"]


# -- the compliance check catches a summary ---------------------------------------------------


class _Summary(LanguageAdapter):
    """The old generic text: shape, min, mean and max only."""

    def observation_text(self, env, agent, observation):
        a = np.asarray(observation)
        return f"array of shape {a.shape} (min {a.min():.3g}, mean {a.mean():.3g}, max {a.max():.3g})"


def test_an_observation_that_is_only_a_summary_fails_the_compliance_check():
    module = _module("pettingzoo.butterfly.knights_archers_zombies_v11")
    with pytest.raises(AssertionError, match="only a summary"):
        language_api_test(
            lambda: LanguageParallelWrapper(module.parallel_env(max_cycles=5), _Summary()),
            api_tests=False,
            seed_tests=False,
            num_cycles=3,
        )


def test_text_from_the_state_is_not_a_summary():
    class FromState(LanguageAdapter):
        def observation_text(self, env, agent, observation):
            return "the board as the env draws it"

    box = spaces.Box(-1, 1, (6,))
    wrapper = type("W", (), {"adapter": FromState(), "env": type("E", (), {"observation_space": box})()})()
    check_not_summary(wrapper, None, np.linspace(-1, 1, 6).astype(np.float32), "here")
