"""The re-run critics' words must agree with their re-runs (lang_pz.critics.claims).

The recorded case is iteration 0 of a ``make demo`` run (5-piston Pistonball, SmolLM2-135M
explaining): every piston's re-runs changed nothing except piston_4's (+304.687), and the model
copied its prompt's example, writing "its play did not matter" for piston_4 and "pushing at the
wrong time hurt" for piston_0. The scripted backend replays that reply.
"""

from __future__ import annotations

import json

import pytest

from lang_pz.critics.claims import checked_words, claim, computed_words, contradiction
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

PISTONS = [f"piston_{i}" for i in range(5)]
#: (agent, replacement, delta) of the recorded demo episode's whole-episode re-runs.
RECORDED = [
    (a, w, 0.0) for a, ws in zip(PISTONS[:4], (("stay", "up"), ("down", "stay"), ("stay", "up"), ("stay", "up"))) for w in ws
]
RECORDED += [("piston_4", "stay", 304.687), ("piston_4", "up", 304.687)]
#: What SmolLM2-135M wrote for that episode (copied from its prompt's example).
SMOL_REPLY = {"piston_0": "pushing at the wrong time hurt"} | dict.fromkeys(PISTONS[1:], "its play did not matter")


def demo_trajectory() -> Trajectory:
    t = Trajectory(episode=0, seed=0)
    for k in range(25):
        a = PISTONS[k % 5]
        word = "up" if a == "piston_1" else "down"
        t.steps.append(AgentStep(0, k, a, "o", word, word, None, -98.4375 / 5))
    return t


def probes(rows=RECORDED) -> list[Counterfactual]:
    return [Counterfactual(agents=(a,), replacement=w, value=-492.187 + d, delta=d, steps=5) for a, w, d in rows]


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ("its play did not matter", "no effect"),
        ("made no difference", "no effect"),
        ("it didn't change anything", "no effect"),
        ("irrelevant to the team", "no effect"),
        ("its play changed nothing", "no effect"),  # negations after the word, and quantifiers
        ("had zero effect", "no effect"),
        ("little impact on the team", "no effect"),
        ("it costs nothing", "no effect"),
        ("its move changed the outcome", "effect"),
        ("pushing at the wrong time hurt", "effect"),
        ("its play mattered", "effect"),
        ("a ruined everything", "effect"),
        ("b was perfect", None),
        ("pushed down", None),
    ],
)
def test_claim_reads_what_the_words_say(words, said):
    assert claim(words) == said


def test_the_recorded_demo_words_are_replaced_where_they_contradict_the_reruns():
    backend = ScriptedBackend(lambda req: json.dumps({a: {"explanation": w} for a, w in SMOL_REPLY.items()}))
    report = DifferenceCritic(backend).assess(demo_trajectory(), None, probes())
    said = {a: c.explanation for a, c in report.credits.items()}
    # before: "its play did not matter (stay at every step: team +304.7)"
    assert said["piston_4"] == "another play would do better (stay at every step: team +304.7)"
    assert claim(said["piston_4"].split(" (")[0]) != "no effect" and report.credits["piston_4"].credit == -1.0
    # before: "pushing at the wrong time hurt (no re-run changed the return)"
    assert said["piston_0"] == "its play did not matter (no re-run changed the return)"
    for a in PISTONS[1:4]:  # the model's words agree with the numbers there: kept
        assert said[a] == "its play did not matter (no re-run changed the return)"
    assert [e.split(":")[0] for e in report.errors] == ["piston_0", "piston_4"]
    assert "+305" in report.errors[1] and "wrong time hurt" in report.errors[0]


def test_the_words_follow_the_numbers_in_both_directions():
    moved = [("a", "up", 0.0), ("a", "down", -3.0), ("b", "up", 0.0)]
    # a: a re-run changed the return (-3): "did not matter" is wrong; b: none did: "it hurt" is wrong
    words, notes = checked_words({"a": "did not matter", "b": "it hurt the team"}, probes(moved))
    assert words == {"a": "no re-run did better", "b": "its play did not matter"} and len(notes) == 2
    kept, none = checked_words({"a": "its play hurt", "b": "it did not matter"}, probes(moved))
    assert kept == {"a": "its play hurt", "b": "it did not matter"} and none == []
    assert contradiction("did not matter", 0.0, 0.0) is None
    assert contradiction("did not matter", 0.0, 0.004) is not None  # a small change is still a change
    assert computed_words(-1.0, 2.0) == "another play would do better"
    for lo, hi in ((0.0, 0.0), (-1.0, 0.0), (-1.0, 2.0)):
        assert len(computed_words(lo, hi)) <= 30 and not any(ch.isdigit() for ch in computed_words(lo, hi))


def test_a_whole_episode_change_is_the_fact_when_the_windows_changed_nothing():
    rows = [Counterfactual(agents=(a,), replacement="up", value=0.0, delta=0.0, steps=5, at_steps=(0,)) for a in PISTONS]
    rows.append(Counterfactual(agents=("piston_2",), replacement="stay", value=7.0, delta=7.0, steps=5))
    report = DifferenceCritic().assess(demo_trajectory(), None, rows)
    assert report.credits["piston_2"].credit == -1.0
    assert report.credits["piston_2"].explanation == "stay at every step: team +7.0"  # was "no re-run changed the return"
    tiny = DifferenceCritic(
        significance=None
    ).assess(  # a gain of 0.01 is no verdict; the words are the test
        demo_trajectory(), None, probes([(a, "up", 0.0) for a in PISTONS[1:]] + [("piston_0", "up", 0.01)])
    )
    assert tiny.credits["piston_0"].explanation.endswith("team +0.01")  # not "+0.0" next to a credit of -1
