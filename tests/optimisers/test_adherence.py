"""The update stage's actor check and joint changes of two agents.

Every test uses :class:`ScriptedBackend` stand-ins (no real model): an optimiser stand-in that
answers the update stage from a list, and an actor stand-in that plays what the last ``Policy:``
line names, except that it plays the text "play up" as down (the embedded 135M model's measured
failure, reproduced on purpose so the check has something to catch).
"""

from __future__ import annotations

import json
import re

import pytest

from lang_pz.backends.base import GenerationRequest
from lang_pz.critics import Credit, CriticReport
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.error import SchemaValidationError
from lang_pz.optimisers import TextualPolicyOptimiser
from lang_pz.optimisers.adherence import ActorCheck, Adherence, cited_decisions
from lang_pz.optimisers.gradient import Gradient
from lang_pz.optimisers.joint import joint_updates, pair_changes
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

WORDS = ["down", "stay", "up"]


def actor_reply(req: GenerationRequest) -> str:
    policy = re.findall(r"^Policy: (.*)$", req.prompt, re.MULTILINE)[-1].lower()
    if "play up" in policy:
        return "down"
    return next(w for w in WORDS if w in policy)


def trajectory(episode: int, agents=("piston_0", "piston_1"), n: int = 5) -> Trajectory:
    steps = [
        AgentStep(episode, t, a, f"OBS {a} ep{episode} k{t}", "down", "down", None, 0.0, legal_actions=WORDS)
        for t in range(n)
        for a in agents
    ]
    return Trajectory(episode=episode, seed=episode, steps=steps)


def report(episode: int, probes: list[Counterfactual], agents=("piston_0", "piston_1")) -> CriticReport:
    return CriticReport(
        episode=episode,
        team_return=0.0,
        credits={a: Credit(agent=a, credit=-0.5, explanation="x", steps=[0]) for a in agents},
        counterfactuals=probes,
    )


def up_probe(agent="piston_0", at=(1, 3), delta=50.0) -> Counterfactual:
    return Counterfactual(agents=(agent,), replacement="up", value=delta, delta=delta, steps=5, at_steps=at)


def grad_reply(change: str) -> str:
    return json.dumps({"keep": "", "change": change, "drop": "", "evidence_steps": []})


def policy_reply(text: str) -> str:
    return json.dumps({"policy": text})


# -- which decisions a direction cites -------------------------------------------------------


def test_cited_decisions_are_the_supporting_episodes_steps():
    trajs = [trajectory(0), trajectory(1)]
    reports = [report(0, [up_probe()]), report(1, [])]
    grad = Gradient(agent="piston_0", keep="", change="play up at steps [1, 3]", drop="", supported=True)
    found = cited_decisions("piston_0", grad, trajs, reports, at_least=0)
    assert [(d.episode, d.index, d.observation) for d in found] == [
        (0, 1, "OBS piston_0 ep0 k1"),
        (0, 3, "OBS piston_0 ep0 k3"),
    ]
    topped = cited_decisions("piston_0", grad, trajs, reports, at_least=4)  # the cited ones first
    assert [(d.episode, d.index) for d in topped] == [(0, 1), (0, 3), (0, 0), (0, 2)]
    every = Gradient(agent="piston_0", keep="", change="play up at every step", drop="", supported=True)
    assert len(cited_decisions("piston_0", every, trajs, reports)) == 10  # no report supports it: every episode
    spread = cited_decisions("piston_0", every, trajs, reports, limit=3)
    assert [(d.episode, d.index) for d in spread] == [(0, 0), (0, 4), (1, 4)]
    free = Gradient(agent="piston_0", keep="", change="go up more", drop="")
    assert cited_decisions("piston_0", free, trajs, reports) == []
    with pytest.raises(ValueError, match="limit"):
        cited_decisions("piston_0", grad, trajs, reports, limit=0)


def test_actor_check_counts_what_the_actor_plays():
    check = ActorCheck(ScriptedBackend(actor_reply))
    decisions = cited_decisions(
        "piston_0",
        Gradient(agent="piston_0", keep="", change="play up at every step", drop="", supported=True),
        [trajectory(0)],
    )
    a = check.measure("Always play up.", "up", decisions)
    assert (a.rate, a.decisions, a.played) == (0.0, 5, {"down": 5}) and not check.followed(a)
    assert a.describe() == "the actor played 'up' at 0 of 5 recorded decisions (0%) with this text (down 5)"
    assert check.followed(check.measure("Always push up.", "up", decisions))
    with pytest.raises(ValueError, match="min_rate"):
        ActorCheck(ScriptedBackend(actor_reply), min_rate=0.0)
    with pytest.raises(TypeError, match="actor must be"):
        ActorCheck("embedded")  # type: ignore[arg-type]


# -- the update stage with the check -----------------------------------------------------------


def optimiser(replies: list[str], **kw) -> tuple[TextualPolicyOptimiser, ScriptedBackend]:
    llm = ScriptedBackend(replies)
    return TextualPolicyOptimiser(llm, max_rewrite=1.0, actor=ScriptedBackend(actor_reply), **kw), llm


def test_a_text_its_actor_does_not_follow_is_retried_with_the_measured_adherence():
    opt, llm = optimiser(
        [grad_reply("play up at steps [1, 3]"), policy_reply("Always play up."), policy_reply("Always push up.")]
    )
    upd = opt.update("piston_0", "Always stay.", [report(0, [up_probe()])], trajectories=[trajectory(0)])
    assert upd.new == "Always push up." and upd.changed and not upd.refused
    assert upd.adherence == Adherence(text="Always push up.", word="up", rate=1.0, decisions=5, played={"up": 5})
    assert [a.text for a in upd.rejected] == ["Always play up."] and upd.rejected[0].rate == 0.0
    retry = llm.requests[-1].prompt
    assert "the actor played 'up' at 0 of 5 recorded decisions (0%) with this text (down 5)" in retry
    assert "it must play 'up' at 90% of them" in retry
    logged = json.loads(upd.model_dump_json(exclude={"generations"}))  # what gradients.jsonl holds
    assert logged["adherence"]["rate"] == 1.0 and logged["rejected"][0]["played"] == {"down": 5}


def test_a_text_never_followed_is_refused_and_the_policy_kept():
    opt, _ = optimiser([grad_reply("play up at steps [1, 3]")] + [policy_reply("Always play up.")] * 3)
    upd = opt.update("piston_0", "Always stay.", [report(0, [up_probe()])], trajectories=[trajectory(0)])
    assert upd.new == upd.old == "Always stay." and not upd.changed and upd.refused
    assert [a.text for a in upd.rejected] == ["Always play up."]  # measured once, not once an attempt
    assert upd.adherence is None


def test_a_schema_failure_without_a_measured_text_still_raises():
    opt, _ = optimiser([grad_reply("play up at steps [1, 3]")] + [policy_reply("Always stay. stay")] * 3)
    with pytest.raises(SchemaValidationError, match="does not say 'up'"):
        opt.update("piston_0", "Always stay.", [report(0, [up_probe()])], trajectories=[trajectory(0)])


def test_without_trajectories_or_actor_nothing_is_checked():
    replies = [grad_reply("play up at steps [1, 3]"), policy_reply("Always play up.")]
    opt, _ = optimiser(list(replies))
    upd = opt.update("piston_0", "Always stay.", [report(0, [up_probe()])])  # the old call: no trajectories
    assert upd.new == "Always play up." and upd.adherence is None and upd.rejected == []
    plain = TextualPolicyOptimiser(ScriptedBackend(list(replies)), max_rewrite=1.0)
    assert (
        plain.update("piston_0", "Always stay.", [report(0, [up_probe()])], trajectories=[trajectory(0)]).adherence is None
    )


def test_recorded_trajectories_serve_a_loop_that_cannot_pass_them():
    opt, _ = optimiser([grad_reply("play up at steps [1, 3]"), policy_reply("Always push up.")])
    opt.record([trajectory(0)])
    upd = opt.update("piston_0", "Always stay.", [report(0, [up_probe()])])
    assert upd.adherence is not None and upd.adherence.decisions == 5


# -- joint changes of two agents --------------------------------------------------------------

PAIR = Counterfactual(
    agents=("piston_0", "piston_1"),
    replacement="piston_0: down@steps 0-2; piston_1: up@step 4",
    value=80.0,
    delta=80.0,
    steps=5,
    at_steps=(0, 1, 2, 4),
)


def test_a_pair_is_offered_only_when_one_member_gains_nothing_alone():
    alone0 = Counterfactual(agents=("piston_0",), replacement="down", value=0.0, delta=0.0, steps=5, at_steps=(0, 1, 2))
    (pair,) = pair_changes(report(0, [alone0, up_probe("piston_1", (4,), 30.0), PAIR]))
    assert pair.agents == ("piston_0", "piston_1") and pair.gain == 80.0
    assert pair.alone == {"piston_0": 0.0, "piston_1": 30.0}
    assert pair.change("piston_0") == "play down at steps [0, 1, 2]" and pair.change("piston_1") == "play up at steps [4]"
    both_help = [up_probe("piston_0", (0,), 10.0), up_probe("piston_1", (4,), 30.0), PAIR]
    assert pair_changes(report(0, both_help)) == []  # each helps alone: per-agent updates find them
    assert pair_changes(report(0, [up_probe("piston_1", (4,), 90.0), PAIR])) == []  # no better than one alone
    random = PAIR.model_copy(update={"replacement": "piston_0: random@step 0; piston_1: up@step 4"})
    assert pair_changes(report(0, [random])) == []


def test_joint_update_rewrites_both_texts_checked_by_the_actor():
    def answer(req: GenerationRequest) -> str:
        return policy_reply("Always push down." if "piston_0" in req.prompt else "Always push up.")

    opt = TextualPolicyOptimiser(ScriptedBackend(answer), max_rewrite=1.0, actor=ScriptedBackend(actor_reply))
    policies = {"piston_0": "Always stay.", "piston_1": "Always stay."}
    (joint,) = joint_updates(opt, policies, [report(0, [PAIR])], [trajectory(0)])
    assert joint.agents == ["piston_0", "piston_1"] and joint.changed
    assert joint.texts == {"piston_0": "Always push down.", "piston_1": "Always push up."}
    assert joint.updates["piston_0"].adherence.decisions == 5 == joint.updates["piston_1"].adherence.decisions
    assert joint_updates(opt, policies, [report(0, [PAIR])], [trajectory(0)], skip=["piston_1"]) == []


def test_pairs_are_read_from_an_iterations_evidence_too():
    from lang_pz.critics.counterfactual import Evidence

    (pair,) = pair_changes(Evidence(episode=3, counterfactuals=[PAIR]))
    assert pair.episode == 3 and pair.words == {"piston_0": "down", "piston_1": "up"}
    with pytest.raises(ValueError, match="margin"):
        pair_changes(Evidence(episode=3), margin=-1.0)
