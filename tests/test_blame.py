"""Who an iteration's critic blamed and where (lang_pz.blame), from credit records.

The first record is iteration 1 of a recorded ``make demo`` run (5-piston Pistonball,
counterfactual critic with whole-episode re-runs only): piston_1 and piston_3 share the lowest
credit, and their credits cite no single step because their re-runs replaced every step.
"""

from __future__ import annotations

import json

from lang_pz.blame import blame_text, blamed_agents, span
from lang_pz.runs import read_jsonl


def record(episode: int, credits: dict[str, float], steps: dict[str, list[int]] | None = None, probes=()) -> dict:
    steps = steps or {}
    return {
        "episode": episode,
        "credits": {a: {"agent": a, "credit": c, "explanation": "x", "steps": steps.get(a, [])} for a, c in credits.items()},
        "counterfactuals": [{"agents": [a], "replacement": "up", "delta": 1.0, "at_steps": at} for a, at in probes],
    }


DEMO_ITER_1 = record(
    1,
    {"piston_0": 0.0, "piston_1": -1.0, "piston_2": 0.0, "piston_3": -1.0, "piston_4": 0.0},
    probes=[(a, None) for a in ("piston_0", "piston_1", "piston_2", "piston_3", "piston_4")],
)


def test_the_demo_iteration_names_both_blamed_pistons_at_every_step():
    assert blamed_agents([DEMO_ITER_1]) == (["piston_1", "piston_3"], -1.0)
    assert blame_text([DEMO_ITER_1]) == "blamed piston_1 at every step and piston_3 at every step (credit -1.00)"


def test_cited_steps_per_episode_and_the_mean_decides_who():
    eps = [
        record(0, {"a": -1.0, "b": 0.0}, {"a": [5, 3, 4]}, [("a", (1,))]),
        record(1, {"a": 0.2, "b": -0.4}, {"b": [9]}),  # a not negative here: this episode cites nothing for a
    ]
    assert blame_text(eps) == "blamed a (credit -0.40) at steps 3-5 in episode 0"
    windowed = [record(0, {"a": -1.0, "b": 0.0}, probes=[("a", (1,)), ("a", None)])]
    assert blame_text(windowed) == "blamed a (credit -1.00) citing no step"  # a window probe: not every step
    assert span([8, 3, 5, 3]) == "steps 3,5,8" and span([2]) == "step 2"


def test_no_one_singled_out_and_no_records():
    assert blame_text([record(0, {"a": 0.2, "b": -0.001})]) == "no one blamed (lowest credit +0.00)"
    assert blame_text([record(0, {"a": -0.5, "b": -0.5})]) == "every agent blamed alike (credit -0.50): no one singled out"
    assert blame_text([]) is None and blame_text([{"episode": 0, "credits": {"a": {"credit": "bad"}}}]) is None


def test_read_jsonl_skips_a_cut_line_and_a_missing_file(tmp_path):
    f = tmp_path / "credits.jsonl"
    f.write_text(json.dumps(DEMO_ITER_1) + "\n" + '{"episode": 2, "cred')
    assert read_jsonl(f) == [DEMO_ITER_1] and read_jsonl(tmp_path / "none.jsonl") == []


def test_damaged_records_are_skipped_not_a_traceback(tmp_path):
    f = tmp_path / "credits.jsonl"
    f.write_bytes(b'[1, 2]\n"text"\n\xff\xfe\n' + json.dumps(DEMO_ITER_1).encode() + b"\n")
    assert read_jsonl(f) == [DEMO_ITER_1]
    nan = {"episode": 0, "credits": {"a": {"credit": float("nan")}, "b": {"credit": -0.5, "steps": ["x", 2, True]}}}
    assert blame_text([nan]) == "blamed b (credit -0.50) at step 2"  # a NaN credit is not a credit
    assert blame_text([{**nan, "credits": {"a": {"credit": float("nan")}}}]) is None
    assert blame_text([{"episode": 0, "credits": [1]}, {"episode": 1, "credits": {"a": {"credit": -1.0}}}]) == (
        "blamed a (credit -1.00) citing no step in episode 1"
    )
