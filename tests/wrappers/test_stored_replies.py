"""Oversized replies are stored cut (info["action_text"], the trajectory JSONL's raw_output),
with their full length and a truncation marker; the parser still sees the whole reply."""

from __future__ import annotations

import json

import pytest

import lang_pz
from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.spaces import stored_text
from lang_pz.trajectory import TrajectoryWriter, read_trajectories

HUGE = "down " * 200_000  # a 1,000,000-character reply


class Replies(Policy):
    """Sends ``action`` and reports ``raw`` as what the model produced."""

    def __init__(self, action: str, raw: str) -> None:
        self.action, self.raw = action, raw

    def decide(self, observation, info=None) -> Decision:
        return Decision(action=self.action, raw_output=self.raw)


def test_stored_text():
    assert stored_text("k", "abc", 3) == {"k": "abc"}
    assert stored_text("k", "abcd", 3) == {"k": "abc", "k_chars": 4, "k_truncated": True}
    assert stored_text("k", 12345, 2) == {"k": "12", "k_chars": 5, "k_truncated": True}  # repr of a non-str
    with pytest.raises(ValueError, match="limit must be >= 0"):
        stored_text("k", "a", -1)


@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_a_huge_action_is_stored_cut_in_the_wrappers_info_and_seen_whole_by_the_parser(api):
    env = lang_pz.make("butterfly/pistonball-v0", api=api, n_pistons=5)
    bound = env.action_space("piston_0").max_length
    if api == "aec":
        env.reset(seed=0)
        env.step(HUGE)
        info = env.infos["piston_0"]
    else:
        env.reset(seed=0)
        _, _, _, _, infos = env.step({a: HUGE if a == "piston_0" else "down" for a in env.agents})
        info = infos["piston_0"]
    assert len(info["action_text"]) == bound and HUGE.startswith(info["action_text"])
    assert info["action_text_chars"] == len(HUGE) and info["action_text_truncated"] is True
    assert f"the action has {len(HUGE)} characters" in info["parse_error"]  # the parser saw it whole
    env.close()


def test_a_short_action_is_stored_whole_without_markers():
    env = lang_pz.make("butterfly/pistonball-v0", api="aec", n_pistons=5)
    env.reset(seed=0)
    env.step("down")
    assert {k for k in env.infos["piston_0"] if k.startswith("action_text")} == {"action_text"}
    env.close()


def test_a_task_envs_info_stores_a_huge_reply_cut():
    env = lang_pz.make("tasks/gsm8k-v0", source="demo", index=0)
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(HUGE)
    info = env.infos[agent]
    assert len(info["action_text"]) == env.ACTION_MAX_LENGTH
    assert info["action_text_chars"] == len(HUGE) and info["action_text_truncated"] is True
    assert str(len(HUGE)) in info["parse_error"]


def test_the_trajectory_file_stores_raw_output_cut_and_memory_keeps_it_whole(tmp_path):
    env = lang_pz.make("butterfly/pistonball-v0", api="parallel", n_pistons=5, max_cycles=3)
    policies = {a: ConstantPolicy("down") for a in env.possible_agents}
    policies["piston_0"] = Replies("down", "down" + " because" * 100)  # 804 characters, the action parses
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path, max_raw_output_chars=100) as writer:
        traj = rollout(env, policies, seed=0, writer=writer)
    env.close()
    whole = [s for s in traj.steps if s.agent == "piston_0"]
    assert whole and all(len(s.raw_output) == 804 and s.action == whole[0].action for s in whole)
    records = [json.loads(x) for x in path.read_text().splitlines()]
    steps = [r for r in records if r["type"] == "agent_step"]
    cut = [r for r in steps if r["agent"] == "piston_0"]
    assert all(len(r["raw_output"]) == 100 and r["raw_output_chars"] == 804 and r["raw_output_truncated"] for r in cut)
    assert all("raw_output_chars" not in r for r in steps if r["agent"] != "piston_0")
    back = read_trajectories(path)[0]
    assert [s.raw_output_chars for s in back.steps if s.agent == "piston_0"] == [804] * len(cut)
    assert {s.raw_output_chars for s in back.steps if s.agent != "piston_0"} == {None}
    again = tmp_path / "again.jsonl"
    with TrajectoryWriter(again) as writer:  # written again: still says it was cut
        for s in back.steps:
            writer.agent_step(s)
    assert all(json.loads(x).get("raw_output_truncated") for x in again.read_text().splitlines()[:1])
    with pytest.raises(ValueError, match="max_raw_output_chars must be an int >= 0"):
        TrajectoryWriter(tmp_path / "x.jsonl", max_raw_output_chars=-1)
