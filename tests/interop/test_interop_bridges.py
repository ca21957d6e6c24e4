"""lang_pz.interop bridges on real envs: encoders, vector/Discrete/numeric-info wrappers, Gymnasium
vector envs and SuperSuit vector envs on Text spaces."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import parallel_api_test
from support import any_sandbox

import lang_pz
from lang_pz.error import LangPZError
from lang_pz.interop import FunctionEncoder, HashedBagOfWords, register_text_spaces, to_vector_env
from lang_pz.interop.gym import GymDiscreteActions, GymEncodeObservations
from lang_pz.interop.wrappers import DiscreteActions, action_words

ROOT = Path(__file__).resolve().parents[2]  # subprocesses import this checkout's lang_pz


def pistonball(**kw):
    return lang_pz.make("butterfly/pistonball-v0", **{"n_pistons": 3, "hold": 5, "max_cycles": 50, **kw})


# -- encoders ---------------------------------------------------------------------------------
def test_hashed_bag_of_words_is_deterministic_across_processes():
    text = "You are piston_1. Your height: 24 of 64 px. Ball: 50 px to your right."
    here = HashedBagOfWords()(text)
    code = (
        "import sys, numpy as np; from lang_pz.interop import HashedBagOfWords; "
        f"np.save(sys.stdout.buffer, HashedBagOfWords()({text!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, cwd=ROOT)
    import io

    there = np.load(io.BytesIO(out.stdout))
    assert here.dtype == np.float32 and here.shape == (256,)
    np.testing.assert_array_equal(here, there)  # CRC-32, not Python's salted hash()


def test_hashed_bag_of_words_sees_numbers_and_words():
    enc = HashedBagOfWords(dim=64)
    a, b = enc("Your height: 24 px"), enc("Your height: 40 px")
    c = enc("Ball: to your left"), enc("Ball: to your right")
    assert not np.allclose(a, b)  # a number changes the vector
    assert not np.allclose(*c)
    assert np.all(np.isfinite(enc("x " * 5000 + "1e308 99999999999")))


def test_function_encoder_checks_shape():
    enc = FunctionEncoder(lambda t: [len(t), 1.0], dim=2)
    np.testing.assert_array_equal(enc("abc"), np.array([3, 1], np.float32))
    with pytest.raises(LangPZError, match=r"shape \(2,\).*expected \(3,\)"):
        FunctionEncoder(lambda t: [1.0, 2.0], dim=3)("x")
    with pytest.raises(LangPZError, match="dim"):
        HashedBagOfWords(dim=2)


# -- PettingZoo wrappers ----------------------------------------------------------------------
def test_vector_env_passes_parallel_api_test():
    parallel_api_test(to_vector_env(pistonball()), num_cycles=20)


def test_discrete_actions_send_the_action_words():
    env = to_vector_env(pistonball(), numeric_infos=False)
    assert env.action_space("piston_0") == spaces.Discrete(3)
    obs, infos = env.reset(seed=0)
    assert obs["piston_0"].shape == (256,) and obs["piston_0"].dtype == np.float32
    _, _, _, _, infos = env.step({"piston_0": 0, "piston_1": 1, "piston_2": np.int64(2)})
    assert [infos[a]["action_text"] for a in ("piston_0", "piston_1", "piston_2")] == ["down", "stay", "up"]
    assert not any(infos[a]["fallback"] for a in infos)
    with pytest.raises(LangPZError, match=r"index in 0\.\.2, got 3"):
        env.step({"piston_0": 3, "piston_1": 0, "piston_2": 0})


def test_numeric_infos_keep_fixed_numeric_keys():
    env = to_vector_env(pistonball())
    _, infos = env.reset(seed=0)
    assert set(infos["piston_0"]) == {"fallback", "action_mask"}
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, 1))
    assert set(infos["piston_0"]) == {"fallback", "action_mask"}
    assert infos["piston_0"]["fallback"] is False


def test_action_mask_follows_legal_actions_on_overcooked_skills():
    pytest.importorskip("overcooked_ai_py")
    env = DiscreteActions(lang_pz.make("overcooked/cramped_room-v0", actions="macro", horizon=20))
    _, infos = env.reset(seed=0)
    words = env.words["player_0"]
    mask = infos["player_0"]["action_mask"]
    legal = set(infos["player_0"]["legal_actions"])
    assert mask.tolist() == [int(w in legal) for w in words]
    assert 0 < mask.sum() < len(words)  # some skills impossible at the start


def test_action_words_refuses_continuous_actions():
    with pytest.raises(LangPZError, match="no finite action set"):
        action_words(pistonball(continuous=True), "piston_0")
    env = DiscreteActions(pistonball(continuous=True), actions=["-1", "0", "1"])
    env.reset(seed=0)
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, 2))
    assert infos["piston_0"]["action_text"] == "1"


def test_gymnasium_bridges_pass_check_env():
    from gymnasium.utils.env_checker import check_env

    env = GymDiscreteActions(GymEncodeObservations(lang_pz.make("classic_control/cartpole-v0")))
    check_env(env, skip_render_check=True)
    assert env.action_space == spaces.Discrete(2) and env.observation_space.shape == (256,)


# -- Gymnasium vector envs and SuperSuit on Text ----------------------------------------------
ASYNC = textwrap.dedent("""
    import sys, gymnasium
    from gymnasium import spaces

    class Echo(gymnasium.Env):  # a plain Gymnasium env with a Text observation, no lang_pz
        observation_space = spaces.Dict({"text": spaces.Text(64, charset="abcdefghijklmnopqrstuvwxyz ")})
        action_space = spaces.Text(64, charset="abcdefghijklmnopqrstuvwxyz ")
        def reset(self, seed=None, options=None):
            return {"text": "hello there"}, {}
        def step(self, action):
            return {"text": "you said " + action}, 0.0, False, False, {}

    if sys.argv[1] == "registered":
        import lang_pz  # importing lang_pz registers Gymnasium's vector utilities for Text
    shared = sys.argv[2] == "shared"
    make = Echo
    try:
        env = gymnasium.vector.AsyncVectorEnv([make, make], shared_memory=shared)
    except ValueError as e:
        print("ERROR", e, "|", e.__cause__); sys.exit(0)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(("push left", "push right"))
    sync = gymnasium.vector.SyncVectorEnv([make, make])
    sync.reset(seed=0)
    same, *_ = sync.step(("push left", "push right"))
    if not shared:
        assert same["text"] == obs["text"], (same, obs)
    print(repr(obs["text"][0][:40]))
    env.close()
""")


def _async(registered: bool, shared: bool) -> str:
    args = ["registered" if registered else "plain", "shared" if shared else "copy"]
    return subprocess.run(
        [sys.executable, "-c", ASYNC, *args], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()


def test_async_vector_env_shared_memory_is_refused_loudly():
    # the upstream behaviour this guards against: silent garbage (the charset's first character
    # repeated: '000...' for Gymnasium's default charset) instead of the text
    garbage = _async(registered=False, shared=True)
    assert garbage.startswith("'aaaaaaaaaa") and "you said" not in garbage
    refused = _async(registered=True, shared=True)
    assert refused.startswith("ERROR") and "shared_memory=False" in refused
    copied = _async(registered=True, shared=False)
    assert copied.startswith("'you said push left")


def test_supersuit_vector_env_on_text_env():
    import supersuit as ss

    register_text_spaces()
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(pistonball()), 2, num_cpus=0)
    obs, _ = vec.reset(seed=0)
    texts = obs["text"]
    assert len(texts) == 6 and all(isinstance(t, str) and t.startswith("You are piston_") for t in texts)
    obs, rewards, *_ = vec.step(("up",) * 6)
    assert len(obs["text"]) == 6 and rewards.shape == (6,)


def test_supersuit_vector_envs_work_after_a_plain_import_of_lang_pz():
    code = (
        "import lang_pz, supersuit as ss; "
        "env = lang_pz.make('butterfly/pistonball-v0', n_pistons=5, max_cycles=20); "
        "print(ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 1, num_cpus=0).reset(seed=0)[0]['text'][0][:15])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.startswith("You are piston_")


def test_register_text_spaces_rejects_other_types():
    with pytest.raises(TypeError, match="Text"):
        register_text_spaces(spaces.Box)  # type: ignore[arg-type]
    assert gymnasium.vector.utils.iterate.dispatch(spaces.Text) is not None


# -- defects of issue 22 ----------------------------------------------------------------------
def test_action_words_see_through_turn_based_aec_to_parallel():
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    env = turn_based_aec_to_parallel(lang_pz.make("classic/connect_four-v0"))
    assert action_words(env, "player_0") == [f"column {c}" for c in range(1, 8)]  # action_text: parses back
    vec = to_vector_env(env)
    obs, infos = vec.reset(seed=0)
    assert vec.action_space("player_0") == spaces.Discrete(7) and obs["player_0"].shape == (256,)
    _, _, _, _, infos = vec.step({"player_0": 3, "player_1": 0})
    assert infos["player_0"]["fallback"] is False


def test_supersuit_multiprocess_refusal_names_options_that_exist():
    import inspect

    import supersuit as ss

    register_text_spaces()
    with pytest.raises(Exception, match="num_cpus=0 or 1") as exc:
        ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(pistonball()), 2, num_cpus=2)
    offered = set(inspect.signature(ss.concat_vec_envs_v1).parameters)
    assert "num_cpus" in offered and "shared_memory" not in offered
    assert "concat_vec_envs_v1 use num_cpus" in str(exc.value)
    # what the message says works does work: in process, and encoded observations in 2 workers
    ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(pistonball()), 2, num_cpus=1).reset(seed=0)
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(to_vector_env(pistonball())), 2, num_cpus=2)
    try:
        obs, _ = vec.reset(seed=0)
        obs, rewards, *_ = vec.step(np.ones(6, dtype=np.int64))
        assert obs.shape == (6, 256) and np.count_nonzero(obs) > 6 * 50 and rewards.shape == (6,)
    finally:
        vec.close()


def test_encoder_keeps_order_and_values():
    enc = HashedBagOfWords()
    assert not np.array_equal(enc("position: 3 5"), enc("position: 5 3"))  # swapped numbers
    assert not np.array_equal(enc("X . .\n. O ."), enc(". X .\nO . ."))  # a board's order
    assert not np.array_equal(enc("You are agent_0."), enc("You are agent_1."))
    assert not np.array_equal(enc("height: 1000001"), enc("height: 1000002"))  # beyond float32 squashing
    env = pistonball(n_pistons=5)
    obs, _ = env.reset(seed=0)
    a, b = (enc(obs[p]["text"]) for p in ("piston_0", "piston_1"))
    assert np.count_nonzero(a) > 100 and np.count_nonzero(a != b) > 100  # was 61 and 64 of 256


def _observations(env_id: str, api: str, cycles: int = 25, seeds: tuple[int, ...] = (0, 1)) -> list[str]:
    """Observation texts of seeded episodes of ``env_id`` with random legal words."""
    env = lang_pz.make(env_id, api=api, **lang_pz.registry[env_id].test_kwargs, **any_sandbox(env_id))
    rng, texts = np.random.default_rng(0), []

    def word(info):
        legal = info.get("legal_actions")
        if legal:
            return legal[int(rng.integers(len(legal)))]
        if "action_range" in info:
            return f"{rng.uniform(*info['action_range']):.2f}"
        return f"Answer: {int(rng.integers(100))} Evidence: 1.1 #### {int(rng.integers(100))}"

    for seed in seeds:
        if api == "aec":
            env.reset(seed=seed)
            for _agent in env.agent_iter(cycles * len(env.possible_agents)):
                obs, _, term, trunc, info = env.last()
                texts.append(obs["text"])
                env.step(None if term or trunc else word(info))
        elif api == "parallel":
            obs, infos = env.reset(seed=seed)
            for _ in range(cycles):
                texts.extend(o["text"] for o in obs.values())
                if not env.agents:
                    break
                obs, _, _, _, infos = env.step({a: word(infos[a]) for a in env.agents})
        else:
            obs, info = env.reset(seed=seed)
            for _ in range(cycles):
                texts.append(obs["text"])
                obs, _, term, trunc, info = env.step(word(info))
                if term or trunc:
                    break
    env.close()
    return texts


@pytest.mark.parametrize("env_id", sorted(lang_pz.registry))
def test_distinct_observations_give_distinct_vectors_on_every_registered_env(env_id):
    if env_id.startswith("overcooked/"):
        pytest.importorskip("overcooked_ai_py")
    import warnings

    enc = HashedBagOfWords()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = sorted(set(_observations(env_id, lang_pz.registry[env_id].apis[0])))
    assert len(texts) >= 3, texts
    vectors = {enc(t).tobytes(): t for t in texts}
    assert len(vectors) == len(texts), f"{len(texts) - len(vectors)} of {len(texts)} distinct observations collide"


def test_box_actions_send_vectors_as_text_that_parses_back():
    from lang_pz.interop.gym import GymBoxActions, GymEncodeObservations
    from lang_pz.interop.wrappers import box_text
    from lang_pz.text import codec
    from lang_pz.wrappers import LanguageGymWrapper

    env = to_vector_env(pistonball(n_pistons=5, continuous=True), numeric_infos=False)
    parallel_api_test(to_vector_env(pistonball(n_pistons=5, continuous=True)), num_cycles=10)
    assert env.action_space("piston_0") == spaces.Box(-1.0, 1.0, (1,), np.float32)
    env.reset(seed=0)
    _, _, _, _, infos = env.step(
        {
            "piston_0": np.float32(0.123456789),
            "piston_1": [5.0],
            "piston_2": np.array([-0.5]),
            "piston_3": 0,
            "piston_4": np.array([[1e-9]]),
        }
    )
    assert infos["piston_0"]["action"] == [float(np.float32(0.123456789))]  # exactly, not 3 digits
    assert infos["piston_1"]["action"] == [1.0] and not infos["piston_1"]["fallback"]  # clipped into the bounds
    assert not any(infos[a]["fallback"] for a in infos)
    with pytest.raises(LangPZError, match="finite"):
        env.step(dict.fromkeys(env.agents, np.nan))
    with pytest.raises(LangPZError, match="1 number"):
        env.step({a: [0.1, 0.2] for a in env.agents})
    box = spaces.Box(np.float32(0.1), np.float32(0.7), (2, 2), np.float32)  # bounds not exact in decimal
    x = box.low + np.float32(1e-8)
    np.testing.assert_array_equal(codec.parse_action(box, box_text(box, x)), np.clip(x, box.low, box.high))
    pendulum = GymBoxActions(GymEncodeObservations(LanguageGymWrapper(gymnasium.make("Pendulum-v1"))))
    from gymnasium.utils.env_checker import check_env

    check_env(pendulum, skip_render_check=True)
    assert pendulum.action_space == spaces.Box(-2.0, 2.0, (1,), np.float32)
