"""Role differentiation (lang_pz.differentiation): the two measures on hand-computed cases, and
read from a synthetic run folder into the report and the viewer's data."""

from __future__ import annotations

import json
import math

import pytest
from role_runs import role_run

from lang_pz.differentiation import (
    action_divergence,
    jaccard_distance,
    policy_divergence,
    role_differentiation,
    words,
)
from lang_pz.report import load_run, plot_learning_curve, summary_text


def step(agent, action, legal=("down", "stay", "up")):
    return {"type": "agent_step", "agent": agent, "action": action, "legal_actions": list(legal) if legal else None}


def test_words_and_jaccard_distance():
    assert words("Push UP, then push up!") == {"push", "up", "then"}
    assert jaccard_distance("Always push up.", "always push UP") == 0.0
    assert jaccard_distance("Always push up.", "Always push down.") == pytest.approx(0.5)  # 2 shared of 4
    assert jaccard_distance("up", "down") == 1.0 and jaccard_distance("", "...") == 0.0
    assert policy_divergence({"a": "x"}) is None
    assert policy_divergence({"a": "x y", "b": "x y", "c": "z"}) == pytest.approx(2 / 3)


def test_action_divergence_is_jensen_shannon_in_bits_over_comparable_pairs():
    same = [step("a", 2), step("b", 2), step("a", 0), step("b", 0)]
    assert action_divergence(same) == (0.0, 1)
    div, pairs = action_divergence([step("a", 0), step("b", 2)])
    assert (div, pairs) == (pytest.approx(1.0), 1)
    # a: half 0, half 2; b: all 2 -> JSD = H(mix) - mean H = H(1/4, 3/4) - 1/2
    half = [step("a", 0), step("a", 2), step("b", 2), step("b", 2)]
    h = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    assert action_divergence(half)[0] == pytest.approx(h - 0.5)
    # free-text agents, and agents offered no common word, are not compared
    assert action_divergence([step("a", "x", None), step("b", "y", None)]) == (None, 0)
    assert action_divergence([step("a", 0, ["yes"]), step("b", 0, ["no"])]) == (None, 0)
    assert action_divergence([step("a", 0), step("b", 0), step("c", "hi", None)]) == (0.0, 1)


def test_a_run_folder_per_iteration_and_final(tmp_path):
    rows = role_differentiation(role_run(tmp_path / "run"))
    assert [r.iteration for r in rows] == [0, 1, None]
    assert [r.policy_divergence for r in rows] == [0.0, pytest.approx(1 / 3), pytest.approx(1 / 3)]
    assert [r.action_divergence for r in rows] == [0.0, pytest.approx(2 / 3), None]
    assert [(r.agents, r.action_pairs, r.decisions) for r in rows] == [(3, 3, 24), (3, 3, 24), (3, 0, 0)]
    assert role_differentiation(tmp_path / "not-a-run") == []


def test_the_report_says_it(tmp_path):
    run = load_run(role_run(tmp_path / "run"))
    text = summary_text(run)
    assert "  iter 0: policy text 0.00, actions 0.00 (3 pairs, 24 decisions)" in text
    assert "  iter 1: policy text 0.33, actions 0.67 (3 pairs, 24 decisions)" in text
    assert "  final: policy text 0.33" in text and "started from policies with the same words" in text
    png = plot_learning_curve(run, tmp_path / "c.png")
    from matplotlib.image import imread

    assert imread(png).shape[0] > 600  # the role panel below the curve (6 in at 110 dpi)


def test_the_viewer_data_holds_it(tmp_path):
    from lang_pz.viewer import write_view

    index = write_view(role_run(tmp_path / "run"), tmp_path / "page")
    text = (index.parent / "data" / "view.js").read_text()
    view = json.loads(text[len("LPZ.view(") : -3])
    assert [(r["iteration"], r["policy_divergence"]) for r in view["differentiation"]] == [
        (0, 0.0),
        (1, pytest.approx(1 / 3)),
        (None, pytest.approx(1 / 3)),
    ]
