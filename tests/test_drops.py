"""Gradients whose "drop" names an action the agent never played are flagged (lang_pz.drops).

The recorded case is iteration 0 of a ``make demo`` run (5-piston Pistonball, SmolLM2-135M):
piston_4 played ``down`` at all 5 of its decisions, and its gradient said ``drop: up at every
step`` (the re-runs' replacement word, copied).
"""

from __future__ import annotations

from lang_pz.drops import played_actions, unplayed_drops

CREDITS_ITER_0 = [
    {
        "episode": 0,
        "evidence": {
            "piston_1": {"action_counts": {"up": 5}},
            "piston_4": {"action_counts": {"down": 5}},
        },
        "counterfactuals": [
            {"agents": ["piston_4"], "replacement": "stay"},
            {"agents": ["piston_4"], "replacement": "up"},
            {"agents": ["piston_1"], "replacement": "random"},
        ],
    }
]


def gradient(agent: str, drop: str) -> dict:
    return {"agent": agent, "gradient": {"agent": agent, "keep": "", "change": "play stay", "drop": drop}}


def test_the_recorded_demo_drop_is_flagged():
    [note] = unplayed_drops([gradient("piston_4", "up at every step")], CREDITS_ITER_0)
    assert note == "piston_4's gradient says drop 'up at every step' but piston_4 never played up (played down x5)"


def test_a_drop_of_a_played_action_or_of_no_action_word_is_not_flagged():
    played, words = played_actions(CREDITS_ITER_0 * 2)  # two episodes: counts add up
    assert played["piston_4"] == {"down": 10} and words == {"down", "stay", "up"}  # "random" is no action
    ok = [gradient("piston_4", "pushing down"), gradient("piston_1", "up at every step"), gradient("piston_4", "")]
    ok += [gradient("piston_4", "waiting too long"), gradient("piston_9", "up"), gradient("piston_4", "upward-ish stays")]
    assert unplayed_drops(ok, CREDITS_ITER_0) == []
    both = unplayed_drops([gradient("piston_4", "Up, then Stay")], CREDITS_ITER_0)
    assert both == ["piston_4's gradient says drop 'Up, then Stay' but piston_4 never played stay or up (played down x5)"]
    assert unplayed_drops([gradient("piston_4", "up")], []) == []  # no evidence: nothing to compare


def test_parts_of_a_damaged_record_are_ignored_and_the_rest_still_flags():
    damaged = [
        {"evidence": {"piston_4": {"action_counts": {"down": 5, "stay": "many"}}, "piston_0": [1]}},
        {"evidence": "text", "counterfactuals": [7, {"replacement": "up"}]},
    ]
    played, words = played_actions(damaged)
    assert played == {"piston_4": {"down": 5}, "piston_0": {}} and words == {"down", "up"}
    grads = [{"agent": "piston_4", "gradient": "drop up"}, gradient("piston_4", "up")]
    assert unplayed_drops(grads, damaged) == [
        "piston_4's gradient says drop 'up' but piston_4 never played up (played down x5)"
    ]
