"""lang_pz.policies.learned: an SB3 model acting inside lang_pz rollouts from the raw observation,
with exactly the preprocessing of training."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

import lang_pz
from lang_pz.error import LangPZError
from lang_pz.policies.learned import SB3Policy, SuperSuitPixels
from lang_pz.rollout import rollout

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("stable_baselines3") is None,
    reason="stable-baselines3 not installed: pip install 'lang_pz[sb3]'",
)

KW = {"n_pistons": 5, "hold": 5, "max_cycles": 125}


def raw_env():
    from pettingzoo.butterfly import pistonball_v6
    from supersuit import frame_skip_v0

    return frame_skip_v0(pistonball_v6.parallel_env(n_pistons=5, continuous=False, max_cycles=125), 5)


def test_pixels_match_the_supersuit_wrappers_step_by_step():
    pixels = SuperSuitPixels()  # the raw env of test_learned_policy_in_a_lang_pz_rollout_replays_the_raw_env
    inner = raw_env()
    wrapped = pixels.wrap(raw_env())
    raw_obs, _ = inner.reset(seed=4)
    obs, _ = wrapped.reset(seed=4)
    stacks = {a: pixels.start() for a in inner.possible_agents}
    t = 0
    while inner.agents:
        for a in inner.agents:
            stacks[a] = pixels.push(stacks[a], raw_obs[a])
            assert stacks[a].shape == (42, 42, 3)
            np.testing.assert_array_equal(stacks[a], obs[a], err_msg=f"step {t} {a}")
        actions = {a: (t + i) % 3 for i, a in enumerate(inner.agents)}
        raw_obs, *_ = inner.step(actions)
        obs, *_ = wrapped.step(actions)
        t += 1
    assert t >= 3


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    from stable_baselines3 import PPO

    from lang_pz.interop import sb3_vec_env

    model = PPO("CnnPolicy", sb3_vec_env(SuperSuitPixels().wrap(raw_env())), n_steps=16, batch_size=80, seed=1, device="cpu")
    model.learn(80)
    path = tmp_path_factory.mktemp("sb3") / "ppo.zip"
    model.save(str(path))
    return path


#: The pixel baseline of benchmarks/results/baselines.md (train_sb3_pistonball.py --obs pixels, 1.5 MB).
TRAINED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "sb3_pistonball5.zip"
#: The same trained on the observation text (``--obs text``, 0.6 MB), with HashedBagOfWordsV1.
TRAINED_TEXT = TRAINED.with_name("sb3_pistonball5_text.zip")


def test_learned_policy_in_a_lang_pz_rollout_replays_the_raw_env():
    from stable_baselines3 import PPO

    model_path = TRAINED

    policies = {a: SB3Policy.load(model_path, SuperSuitPixels()) for a in (f"piston_{i}" for i in range(5))}
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    model = PPO.load(str(model_path), device="cpu")
    for seed in (5100, 5101):
        traj = rollout(env, policies, seed=seed)
        assert all(s.meta["raw_observation"] is True for s in traj.steps)
        raw = SuperSuitPixels().wrap(raw_env())
        obs, _ = raw.reset(seed=seed)
        total, actions_raw = 0.0, []
        while raw.agents:
            acts = {a: int(model.predict(obs[a], deterministic=True)[0]) for a in raw.agents}
            actions_raw.append(acts)
            obs, rewards, *_ = raw.step(acts)
            total += sum(rewards.values())
        played = [s.action for s in traj.steps]  # the applied inner action (index)
        expected = [acts[a] for acts in actions_raw for a in sorted(acts)]
        assert played == expected
        assert traj.team_return == pytest.approx(total)


def test_learned_policy_needs_the_raw_observation(model_path):
    policy = SB3Policy.load(model_path, SuperSuitPixels())
    with pytest.raises(LangPZError, match="raw_observation"):
        policy.decide({"text": "You are piston_0."}, {"legal_actions": ["down", "stay", "up"]})
    with pytest.raises(LangPZError, match="3 actions"):
        policy.decide({"text": ""}, {"raw_observation": np.zeros((457, 120, 3), np.uint8), "legal_actions": ["a"]})
    with pytest.raises(FileNotFoundError, match="train_sb3_pistonball"):
        SB3Policy.load(model_path.parent / "missing.zip", SuperSuitPixels())
    with pytest.raises(LangPZError, match="RGB image"):
        SuperSuitPixels().frame(np.zeros((4, 4)))


def test_text_trained_model_as_a_policy_reads_the_text_not_the_raw_observation():
    from stable_baselines3 import PPO

    from lang_pz.interop import to_vector_env
    from lang_pz.interop.encoders import HashedBagOfWordsV1

    model = PPO.load(str(TRAINED_TEXT), device="cpu")
    policy = SB3Policy(model, HashedBagOfWordsV1(), observation="text")
    assert policy.reads_raw_observation is False
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    traj = rollout(env, dict.fromkeys(env.possible_agents, policy), seed=5)
    assert all("raw_observation" not in s.meta for s in traj.steps)
    vec = to_vector_env(lang_pz.make("butterfly/pistonball-v0", **KW), HashedBagOfWordsV1())
    obs, _ = vec.reset(seed=5)
    expected = []
    while vec.agents:
        acts = {a: int(model.predict(obs[a], deterministic=True)[0]) for a in vec.agents}
        expected += [acts[a] for a in sorted(acts)]
        obs, *_ = vec.step(acts)
    assert [s.action for s in traj.steps] == expected and len(set(expected)) > 1
    assert traj.team_return > 400  # the trained baseline plays well (random averages about 240)


# -- a model someone hands over cannot run code --------------------------------------------


def test_a_safe_load_gives_the_model_sb3s_own_load_gives():
    from stable_baselines3 import PPO

    from lang_pz.interop.encoders import HashedBagOfWordsV1

    for path in (TRAINED, TRAINED_TEXT):
        ours = SB3Policy.load(path, HashedBagOfWordsV1(), observation="text").model
        theirs = PPO.load(str(path), device="cpu")
        assert type(ours.policy) is type(theirs.policy)
        assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
        assert ours.clip_range(1.0) == theirs.clip_range(1.0)
        mine, sb3 = ours.policy.state_dict(), theirs.policy.state_dict()
        assert mine.keys() == sb3.keys() and all((mine[k] == sb3[k]).all() for k in mine)


class _Plant:
    """Unpickling it creates the folder ``marker``: proof that a planted pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _planted(tmp_path: Path, key: str) -> Path:
    """The text model with its ``data`` entry ``key`` replaced by a pickle that runs code."""
    with zipfile.ZipFile(TRAINED_TEXT) as src:
        data = json.loads(src.read("data"))
        data[key] = {
            ":type:": "<class 'collections.deque'>",
            ":serialized:": base64.b64encode(pickle.dumps(_Plant(tmp_path / "ran"))).decode(),
        }
        out = tmp_path / "shared.zip"
        with zipfile.ZipFile(out, "w") as dst:
            for name in src.namelist():
                dst.writestr(name, json.dumps(data) if name == "data" else src.read(name))
    return out


@pytest.mark.parametrize("key", ["ep_info_buffer", "observation_space", "policy_kwargs"])
def test_a_pickle_planted_in_a_model_zip_never_runs(tmp_path, key):
    from lang_pz.interop.encoders import HashedBagOfWordsV1

    path = _planted(tmp_path, key)
    if key == "ep_info_buffer":  # training state: replaced, the model loads
        SB3Policy.load(path, HashedBagOfWordsV1(), observation="text")
    else:
        with pytest.raises(LangPZError, match=f"{key}.*could only be unpickled"):
            SB3Policy.load(path, HashedBagOfWordsV1(), observation="text")
    assert not (tmp_path / "ran").exists()
