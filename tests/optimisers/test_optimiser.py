"""The textual policy optimiser: gradient -> aggregate -> apply, retries, limits, momentum.

Every test uses :class:`ScriptedBackend`, a scripted LLM stand-in that answers per stage (read
from the prompt); no test loads the real model.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from lang_pz.backends.base import GenerationRequest
from lang_pz.critics import Credit, CriticReport
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.error import SchemaValidationError
from lang_pz.optimisers import Gradient, Momentum, PolicyUpdate, TextualPolicyOptimiser
from lang_pz.optimisers.gradient import (
    evidence_changes,
    gradient_reply_model,
    policy_pattern,
    policy_reply_model,
    rewrite_fraction,
)
from lang_pz.optimisers.textual import DIRECTION_MAX_CHARS, MAX_REWRITE, evidence_for
from lang_pz.test import ScriptedBackend


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


def task_of(req: GenerationRequest) -> str:
    """The part of a prompt after the worked example."""
    return prompt_of(req).rsplit("Now your task:", 1)[-1]


def stage_of(req: GenerationRequest) -> str:
    task = task_of(req)
    if "Edit directions from this batch:" in task:
        return "agg"
    if "Critic's credits for" in task:
        return "grad"
    assert "New policy as JSON:" in task
    return "apply"


def report(episode: int, values: dict[str, tuple[float, str, list[int]]], counterfactuals=()) -> CriticReport:
    return CriticReport(
        episode=episode,
        team_return=0.0,
        credits={a: Credit(agent=a, credit=c, explanation=e, steps=s) for a, (c, e, s) in values.items()},
        counterfactuals=list(counterfactuals),
    )


REPORTS = [
    report(0, {"piston_0": (-1.0, "ZERO-A pushed up too early", [1, 2]), "piston_1": (0.5, "ONE-A held still", [0])}),
    report(1, {"piston_0": (-0.5, "ZERO-B stayed high", [2]), "piston_1": (0.0, "ONE-B did little", [4])}),
]
POLICIES = {"piston_0": "Always push up.", "piston_1": "Always stay where you are."}


def grad_reply(change="go down more", steps=(2,), keep="", drop="") -> str:
    return json.dumps({"keep": keep, "change": change, "drop": drop, "evidence_steps": list(steps)})


def policy_reply(text: str) -> str:
    return json.dumps({"policy": text})


def routed(replies: dict[str, list[str]]):
    """A scripted stand-in that answers by agent and stage (``"piston_0/grad"``, ``/agg``, ``/apply``)."""
    queues = {k: list(v) for k, v in replies.items()}

    def answer(req: GenerationRequest) -> str:
        p, task = prompt_of(req), task_of(req)
        agent = next(a for a in POLICIES if f"Agent: {a}" in task or f"agent {a}" in p)
        return queues[f"{agent}/{stage_of(req)}"].pop(0)

    return answer


# -- Gradient and schemas ------------------------------------------------------------------


def test_gradient_direction_joins_keep_change_drop():
    g = Gradient(agent="a", keep="KEEP-X", change="CHANGE-Y", drop="DROP-Z", evidence_steps=[3])
    assert g.direction == "keep: KEEP-X; change: CHANGE-Y; drop: DROP-Z"
    assert Gradient(agent="a", change="c").direction == "keep: ; change: c; drop: "
    with pytest.raises(ValidationError):
        Gradient(agent="a", change="")  # a gradient must say what to change
    with pytest.raises(ValidationError):
        Gradient(agent="a", change="c", evidence_steps=[0, 1, 2, 3])
    with pytest.raises(ValidationError):
        Gradient(agent="a", change="c", keep="x" * (DIRECTION_MAX_CHARS + 1))


def test_gradient_schema_restricts_evidence_to_cited_steps():
    llm = ScriptedBackend([grad_reply(steps=(1,))])
    credits = [r.credits["piston_0"] for r in REPORTS]
    TextualPolicyOptimiser(llm).gradient("piston_0", "Always push up.", credits)
    schema = llm.requests[0].json_schema
    assert schema == gradient_reply_model([1, 2]).model_json_schema()
    assert schema["properties"]["evidence_steps"]["items"]["enum"] == [1, 2]
    assert schema["required"] == ["keep", "change", "drop", "evidence_steps"]
    assert schema["additionalProperties"] is False
    for part in ("keep", "change", "drop"):
        assert schema["properties"][part]["maxLength"] == DIRECTION_MAX_CHARS
    assert gradient_reply_model([]).model_json_schema()["properties"]["evidence_steps"]["maxItems"] == 0


def test_gradient_prompt_shows_policy_credits_and_evidence():
    llm = ScriptedBackend([grad_reply(keep="stay low", change="go down more", drop="pushing up", steps=(2, 1))])
    credits = [r.credits["piston_0"] for r in REPORTS]
    g = TextualPolicyOptimiser(llm).gradient("piston_0", "Always push up.", credits, evidence=["EVIDENCE-LINE"])
    assert g == Gradient(agent="piston_0", keep="stay low", change="go down more", drop="pushing up", evidence_steps=[2, 1])
    task = task_of(llm.requests[0])
    assert "Current policy: Always push up." in task and "ZERO-A" in task and "ZERO-B" in task
    assert "Computed re-runs of piston_0's episodes:\n- EVIDENCE-LINE" in task
    llm = ScriptedBackend([grad_reply()])
    TextualPolicyOptimiser(llm).gradient("piston_0", "Always push up.", credits)
    assert "Computed re-runs" not in task_of(llm.requests[0])


def test_apply_prompt_and_schema():
    llm = ScriptedBackend([policy_reply("Always go down.")], prompt_format="chat")
    grad = Gradient(agent="piston_0", keep="KEEP-X", change="go down more", drop="DROP-Z")
    upd = TextualPolicyOptimiser(llm, max_policy_chars=40).apply("piston_0", "Always push up.", grad)
    assert upd.new == "Always go down." and upd.gradient == grad and len(upd.generations) == 1
    system, user = llm.requests[0].messages
    assert system.role == "system" and "piston_0" in system.content
    for line in ("Current policy: Always push up.", "Keep: KEEP-X", "Change: go down more", "Drop: DROP-Z"):
        assert line in user.content
    assert llm.requests[0].json_schema == policy_reply_model(40).model_json_schema()
    assert llm.requests[0].json_schema["properties"]["policy"]["maxLength"] == 40


def test_worked_examples_are_valid_replies_within_the_rewrite_limit():
    from lang_pz.optimisers.gradient import APPLY_SUPPORTED_EXAMPLE
    from lang_pz.optimisers.textual import (
        AGGREGATE_EXAMPLE,
        APPLY_EXAMPLE,
        GRADIENT_EXAMPLE,
    )

    for example in (GRADIENT_EXAMPLE, AGGREGATE_EXAMPLE):
        gradient_reply_model([0, 1, 2]).model_validate(json.loads(example.rsplit("\n", 1)[1]))
    for example, word in ((APPLY_EXAMPLE, None), (APPLY_SUPPORTED_EXAMPLE, "push")):
        new = json.loads(example.rsplit("\n", 1)[1])
        schema = policy_reply_model(300, word).model_json_schema()["properties"]["policy"]
        assert re.fullmatch(schema["pattern"].strip("^$"), new["policy"])
        old = example.split("\n", 1)[0].removeprefix("Current policy: ")
        assert rewrite_fraction(old, new["policy"]) <= MAX_REWRITE


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("Always play up.", True),
        ("up", True),
        ("Push up, then stay.", True),
        ("Always pushup.", False),
        ("Always stay.", False),
        ("Stay. " * 8 + "up", False),
        ("Always play up." + " x" * 128, True),
        ("Always play up." + " x" * 129, False),
    ],
)
def test_a_supported_word_is_in_the_decoding_pattern_early(text, ok):
    pattern = policy_pattern(300, "up")
    assert bool(re.fullmatch(pattern.strip("^$"), text)) is ok
    assert policy_pattern(300, "[0 3]") == policy_pattern(300)  # not a plain word: no constraint


# -- a full step ---------------------------------------------------------------------------


def full_script():
    return routed(
        {
            "piston_0/grad": [grad_reply("go down more", (1, 2)), grad_reply("go down", (2,))],
            "piston_0/agg": [grad_reply("go down more", (2,), drop="pushing up")],
            "piston_0/apply": [policy_reply("Always go down.")],
            "piston_1/grad": [grad_reply("keep still", (0,)), grad_reply("keep still", (4,))],
            "piston_1/agg": [grad_reply("keep still", (0, 4))],
            "piston_1/apply": [policy_reply("Always stay where you are.")],
        }
    )


def _step(optimiser, policies, reports):
    """LangMARL's gradients and propose stages over every agent with a policy (a failure would
    be recorded in the context)."""
    from lang_pz.methods.langmarl.steps import gradients, propose
    from lang_pz.training import Context

    ctx = Context()
    updates = propose(ctx, optimiser, policies, gradients(ctx, optimiser, policies, list(policies), reports))
    assert ctx.failures == []
    return updates


def test_step_updates_each_agent_from_its_own_credits_only():
    llm = ScriptedBackend(full_script())
    updates = _step(TextualPolicyOptimiser(llm), POLICIES, REPORTS)
    assert set(updates) == set(POLICIES)
    u0 = updates["piston_0"]
    assert isinstance(u0, PolicyUpdate)
    assert (u0.old, u0.new, u0.changed) == ("Always push up.", "Always go down.", True)
    assert u0.gradient == Gradient(agent="piston_0", change="go down more", drop="pushing up", evidence_steps=[2])
    assert [g.change for g in u0.gradients] == ["go down more", "go down"]
    assert not updates["piston_1"].changed
    assert len(u0.generations) == 4  # two gradients, one aggregate, one update
    assert [stage_of(r) for r in llm.requests].count("grad") == 4
    grads = [task_of(r) for r in llm.requests if stage_of(r) == "grad"]
    for p in grads:
        assert ("ZERO-" in p) != ("ONE-" in p)  # one agent's credits per prompt, never both
        if "Agent: piston_0" in p:
            assert "Always push up." in p and "Always stay where you are." not in p
    assert {("ZERO-A" in p, "ZERO-B" in p) for p in grads if "Agent: piston_0" in p} == {(True, False), (False, True)}


def test_aggregation_is_skipped_for_one_gradient_and_no_momentum():
    llm = ScriptedBackend([grad_reply("go down more", (1,)), policy_reply("Always go down.")])
    upd = TextualPolicyOptimiser(llm).update("piston_0", "Always push up.", REPORTS[:1])
    assert [stage_of(r) for r in llm.requests] == ["grad", "apply"]  # no aggregation call
    assert upd.gradient == upd.gradients[0] and len(upd.generations) == 2
    # the direct API agrees: no call, the one gradient is the aggregate
    g = Gradient(agent="piston_0", change="c")
    opt = TextualPolicyOptimiser(ScriptedBackend([]))
    assert opt.aggregate("piston_0", "p", [g]) == (g, [])


def test_aggregation_merges_the_batch_with_the_momentum_lines():
    momentum = Momentum(beta=0.5)
    momentum.push("piston_0", Gradient(agent="piston_0", change="OLDER-CHANGE", drop="OLDER-DROP"))
    momentum.push("piston_0", Gradient(agent="piston_0", change="OLD-CHANGE"))
    llm = ScriptedBackend(full_script())
    upd = TextualPolicyOptimiser(llm).update("piston_0", "Always push up.", REPORTS, momentum)
    stages = [stage_of(r) for r in llm.requests]
    assert stages == ["grad", "grad", "agg", "apply"]
    agg = task_of(llm.requests[2])
    assert "- keep: ; change: go down more; drop: ; steps [1, 2]" in agg
    assert "- keep: ; change: go down; drop: ; steps [2]" in agg
    assert "Earlier directions (momentum; weight 1 = last iteration):" in agg
    assert "- weight 1: keep: ; change: OLD-CHANGE; drop: " in agg
    assert "- weight 0.5: keep: ; change: OLDER-CHANGE; drop: OLDER-DROP" in agg
    assert agg.index("OLD-CHANGE") < agg.index("OLDER-CHANGE")  # newest first
    # the aggregation schema offers only the steps the batch's gradients cite
    assert llm.requests[2].json_schema["properties"]["evidence_steps"]["items"]["enum"] == [1, 2]
    # the apply stage follows the aggregate; the momentum is only read: the aggregate enters it
    # when the candidate is accepted (commit_momentum), never before
    assert "Drop: pushing up" in task_of(llm.requests[3])
    assert [g.change for _, g in momentum.get("piston_0")] == ["OLD-CHANGE", "OLDER-CHANGE"]
    from lang_pz.methods.langmarl.steps import commit_momentum

    commit_momentum(momentum, {"piston_0": upd.gradient}, accepted=[])
    assert [g.change for _, g in momentum.get("piston_0")] == ["OLD-CHANGE", "OLDER-CHANGE"]
    commit_momentum(momentum, {"piston_0": upd.gradient}, accepted=["piston_0"])
    assert momentum.get("piston_0")[0] == (1.0, upd.gradient)
    assert [g.change for _, g in momentum.get("piston_0")] == ["go down more", "OLD-CHANGE", "OLDER-CHANGE"]
    assert [w for w, _ in momentum.get("piston_0")] == [1.0, 0.5, 0.25]


def test_one_gradient_with_momentum_is_still_aggregated():
    momentum = Momentum()
    momentum.push("piston_0", Gradient(agent="piston_0", change="OLD-CHANGE"))
    llm = ScriptedBackend([grad_reply("go down", (1,)), grad_reply("go down more", (1,)), policy_reply("Always go down.")])
    upd = TextualPolicyOptimiser(llm).update("piston_0", "Always push up.", REPORTS[:1], momentum)
    assert [stage_of(r) for r in llm.requests] == ["grad", "agg", "apply"]
    assert "OLD-CHANGE" in task_of(llm.requests[1]) and upd.gradient.change == "go down more"
    assert [g.change for g in upd.gradients] == ["go down"]


def test_momentum_of_another_agent_is_not_shown():
    momentum = Momentum()
    momentum.push("piston_1", Gradient(agent="piston_1", change="OTHER-AGENT"))
    llm = ScriptedBackend([grad_reply(steps=(1,)), policy_reply("Always go down.")])
    TextualPolicyOptimiser(llm).update("piston_0", "Always push up.", REPORTS[:1], momentum)
    assert [stage_of(r) for r in llm.requests] == ["grad", "apply"]
    assert all("OTHER-AGENT" not in prompt_of(r) for r in llm.requests)
    assert [g.change for _, g in momentum.get("piston_1")] == ["OTHER-AGENT"]


# -- the rewrite limit ---------------------------------------------------------------------


def test_rewrite_limit_rejects_a_large_rewrite_then_accepts_a_smaller_one():
    old, big, small = "Always push up.", "Wait for the ball, then rise slowly near it.", "Always push down."
    frac = rewrite_fraction(old, big)
    assert frac > 0.5 >= rewrite_fraction(old, small)
    grad = Gradient(agent="piston_0", change="go down")
    llm = ScriptedBackend([policy_reply(big), policy_reply(small)])
    upd = TextualPolicyOptimiser(llm, max_rewrite=0.5).apply("piston_0", old, grad)
    assert upd.new == small and len(upd.generations) == 2
    retry = prompt_of(llm.requests[1])
    assert f"rewrites {frac:.0%} of the current one" in retry and "at most 50%" in retry
    llm = ScriptedBackend([policy_reply(big)] * 2)
    with pytest.raises(SchemaValidationError, match="policy update for piston_0") as info:
        TextualPolicyOptimiser(llm, max_rewrite=0.5, max_attempts=2).apply("piston_0", old, grad)
    assert len(info.value.errors) == 2 and "at most 50%" in info.value.errors[-1]
    # with no limit the same rewrite is accepted at once
    llm = ScriptedBackend([policy_reply(big)])
    assert TextualPolicyOptimiser(llm, max_rewrite=1.0).apply("piston_0", old, grad).new == big


@given(a=st.text(max_size=40), b=st.text(max_size=40))
def test_rewrite_fraction_is_a_share(a, b):
    f = rewrite_fraction(a, b)
    assert 0.0 <= f <= 1.0
    assert rewrite_fraction(a, a) == 0.0
    if a and b and not set(a) & set(b):
        assert f == 1.0


# -- retries and errors --------------------------------------------------------------------

BAD_GRADIENTS = {
    "uncited evidence step": (grad_reply(steps=(9,)), "not cited"),
    "empty change": (grad_reply(change="  "), "change is empty"),
    "repeated change": (grad_reply(change="go down go down go down go down go down go down"), "change repeats"),
    "repeated keep": (grad_reply(keep="stay low stay low stay low stay low stay low stay low"), "keep repeats"),
    "too long": (grad_reply(change="go down " * 20), f"at most {DIRECTION_MAX_CHARS}"),
    "missing keep": (json.dumps({"change": "d", "drop": "", "evidence_steps": []}), "keep"),
    "not json": ("go down", "not valid JSON"),
    "extra field": (json.dumps({"keep": "", "change": "d", "drop": "", "evidence_steps": [], "policy": "p"}), "policy"),
}


@pytest.mark.parametrize("case", sorted(BAD_GRADIENTS))
def test_bad_gradient_is_retried_with_the_error_then_raises(case):
    bad, needle = BAD_GRADIENTS[case]
    credits = [r.credits["piston_0"] for r in REPORTS]
    llm = ScriptedBackend([bad, grad_reply()])
    grad = TextualPolicyOptimiser(llm, seed=7).gradient("piston_0", "Always push up.", credits)
    assert grad.change == "go down more"
    assert "rejected" not in prompt_of(llm.requests[0])
    assert "rejected" in prompt_of(llm.requests[1]) and needle in prompt_of(llm.requests[1])
    assert (llm.requests[0].seed, llm.requests[1].seed) == (7, 8)
    assert llm.requests[1].temperature > llm.requests[0].temperature
    llm = ScriptedBackend([bad] * 2)
    with pytest.raises(SchemaValidationError, match="language gradient for piston_0") as info:
        TextualPolicyOptimiser(llm, max_attempts=2).gradient("piston_0", "Always push up.", credits)
    assert len(info.value.errors) == 2 and needle in info.value.errors[-1]


def test_bad_aggregate_is_retried_then_raises():
    gs = [Gradient(agent="piston_0", change="a", evidence_steps=[1]), Gradient(agent="piston_0", change="b")]
    llm = ScriptedBackend([grad_reply(steps=(5,)), grad_reply("go down", (1,))])
    agg, gens = TextualPolicyOptimiser(llm).aggregate("piston_0", "p", gs)
    assert agg.change == "go down" and len(gens) == 2 and "not cited" in prompt_of(llm.requests[1])
    llm = ScriptedBackend([grad_reply(steps=(5,))] * 2)
    with pytest.raises(SchemaValidationError, match="aggregated gradient for piston_0"):
        TextualPolicyOptimiser(llm, max_attempts=2).aggregate("piston_0", "p", gs)


BAD_POLICIES = {
    "empty": (policy_reply(""), "policy"),
    "blank": (policy_reply("   "), "policy is empty"),
    "too long": (policy_reply("Always push up. " * 30), "at most 300"),
    "non-ascii": (policy_reply("Always push up \u2191."), "printable ASCII"),
    "control character": (policy_reply("Always push up.\x07"), "printable ASCII"),
    "repetition": (policy_reply("to make the ball move, to make the ball move, to make the ball move"), "repeats"),
}


@pytest.mark.parametrize("case", sorted(BAD_POLICIES))
def test_bad_new_policy_is_retried_with_the_error_then_raises(case):
    bad, needle = BAD_POLICIES[case]
    grad = Gradient(agent="piston_0", change="go down more")
    llm = ScriptedBackend([bad, policy_reply("Always go down.")])
    opt = TextualPolicyOptimiser(llm, max_rewrite=1.0)
    assert opt.apply("piston_0", "Always push up.", grad).new == "Always go down."
    assert needle in prompt_of(llm.requests[1])
    llm = ScriptedBackend([bad] * 3)
    with pytest.raises(SchemaValidationError, match="policy update for piston_0") as info:
        TextualPolicyOptimiser(llm, max_attempts=3, max_rewrite=1.0).apply("piston_0", "Always push up.", grad)
    assert len(info.value.errors) == 3 and info.value.raw == bad


def test_new_policy_whitespace_is_collapsed():
    llm = ScriptedBackend([policy_reply("  Always push\n up.\tNow. ")])
    upd = TextualPolicyOptimiser(llm).apply("piston_0", "Always push up.", Gradient(agent="piston_0", change="c"))
    assert upd.new == "Always push up. Now." and len(upd.generations) == 1


def test_caller_errors_are_refused():
    opt = TextualPolicyOptimiser(ScriptedBackend([]))
    with pytest.raises(ValueError, match="piston_1"):
        opt.gradient("piston_0", "p", [REPORTS[0].credits["piston_1"]])
    with pytest.raises(ValueError, match="no credits"):
        opt.gradient("piston_0", "p", [])
    with pytest.raises(ValueError, match="no gradients"):
        opt.aggregate("piston_0", "p", [])
    with pytest.raises(ValueError, match="piston_1"):
        opt.aggregate("piston_0", "p", [Gradient(agent="piston_1", change="d")] * 2)
    with pytest.raises(ValueError, match="applied to agent"):
        opt.apply("piston_0", "p", Gradient(agent="piston_1", change="d"))
    with pytest.raises(ValueError, match="no report credits agent 'piston_7'"):
        opt.update("piston_7", "p", REPORTS)
    with pytest.raises(ValueError, match="max_policy_chars"):
        TextualPolicyOptimiser(ScriptedBackend([]), max_policy_chars=3)
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=f"max_rewrite must be in \\(0, 1\\], got {bad}"):
            TextualPolicyOptimiser(ScriptedBackend([]), max_rewrite=bad)
    with pytest.raises(ValueError, match="max_attempts"):
        TextualPolicyOptimiser(ScriptedBackend([]), max_attempts=0)
    assert opt.backend.requests == []  # nothing was asked of the model


def test_step_skips_uncredited_agents_and_ignores_agents_without_policy():
    llm = ScriptedBackend([grad_reply(steps=()), policy_reply("Go down.")])
    reports = [report(0, {"piston_0": (0.0, "ok", []), "opponent": (1.0, "won", [1])})]
    updates = _step(TextualPolicyOptimiser(llm), {"piston_0": "Go up.", "piston_7": "Go up."}, reports)
    assert set(updates) == {"piston_0"} and len(llm.requests) == 2
    assert "won" not in prompt_of(llm.requests[0])


def test_update_dumps_to_json():
    llm = ScriptedBackend(full_script())
    upd = _step(TextualPolicyOptimiser(llm), {"piston_0": "Always push up."}, REPORTS)["piston_0"]
    data = json.loads(json.dumps(upd.model_dump(mode="json")))
    assert data["new"] == "Always go down." and data["gradient"]["evidence_steps"] == [2]
    assert data["gradient"]["drop"] == "pushing up"
    assert [g["change"] for g in data["gradients"]] == ["go down more", "go down"]
    assert len(data["generations"]) == 4
    assert PolicyUpdate.model_validate(data).gradient == upd.gradient


# -- counterfactual evidence ---------------------------------------------------------------

PROBES = [
    Counterfactual(agents=("piston_0",), replacement="down", value=9.0, delta=4.0, steps=3),
    Counterfactual(agents=("piston_1",), replacement="up", value=1.0, delta=-4.0, steps=3),
    Counterfactual(agents=("piston_0", "piston_1"), replacement="random", value=2.0, delta=-3.0, steps=3),
]


def test_evidence_for_picks_only_the_probes_that_replaced_the_agent():
    r = report(0, {"piston_0": (0.5, "ok", [1]), "piston_1": (-0.5, "bad", [0])}, PROBES)
    agents = ["piston_0", "piston_1"]
    assert evidence_for("piston_0", r) == [PROBES[0].describe(agents), PROBES[2].describe(agents)]
    assert evidence_for("piston_1", r) == [PROBES[1].describe(agents), PROBES[2].describe(agents)]
    assert evidence_for("piston_0", REPORTS[0]) == []


def test_update_shows_each_agent_only_its_own_probes():
    r = report(0, {"piston_0": (0.5, "ok", [1]), "piston_1": (-0.5, "bad", [0])}, PROBES)
    llm = ScriptedBackend(
        routed(
            {
                "piston_0/grad": [grad_reply(steps=(1,))],
                "piston_0/apply": [policy_reply("Always push down.")],
                "piston_1/grad": [grad_reply(steps=(0,))],
                "piston_1/apply": [policy_reply("Always stay where you are.")],
            }
        )
    )
    _step(TextualPolicyOptimiser(llm, directions="free"), POLICIES, [r])
    grads = {a: task_of(q) for q in llm.requests if stage_of(q) == "grad" for a in POLICIES if f"Agent: {a}" in task_of(q)}
    agents = ["piston_0", "piston_1"]
    assert PROBES[0].describe(agents) in grads["piston_0"] and PROBES[0].describe(agents) not in grads["piston_1"]
    assert PROBES[1].describe(agents) in grads["piston_1"] and PROBES[1].describe(agents) not in grads["piston_0"]
    assert all(PROBES[2].describe(agents) in p for p in grads.values())


# -- momentum ------------------------------------------------------------------------------


def _g(i: int, agent: str = "a") -> Gradient:
    return Gradient(agent=agent, change=f"change {chr(65 + i)}", evidence_steps=[i])


@pytest.mark.parametrize("beta,min_weight", [(0.5, 0.2), (0.8, 0.3), (0.0, 0.2), (0.9, 1.0)])
def test_momentum_decays_and_forgets(beta, min_weight):
    m = Momentum(beta=beta, min_weight=min_weight)
    for i in range(6):
        m.push("a", _g(i))
        items = m.get("a")
        ages = range(len(items))
        assert [g for _, g in items] == [_g(i - k) for k in ages]  # newest first
        assert [w for w, _ in items] == pytest.approx([beta**k for k in ages])
        assert all(w >= min_weight for w, _ in items)
        # everything old enough to weigh less than min_weight is forgotten, nothing else
        assert len(items) == min(i + 1, sum(beta**k >= min_weight - 1e-9 for k in range(i + 1)))
    assert m.get("b") == []


def test_momentum_is_per_agent_and_get_returns_a_copy():
    m = Momentum()
    m.push("a", _g(0))
    m.push("b", _g(1, "b"))
    m.push("a", _g(2))
    assert [g.change for _, g in m.get("a")] == ["change C", "change A"]
    assert [w for w, _ in m.get("b")] == [1.0]
    m.get("a").clear()
    assert len(m.get("a")) == 2


def test_momentum_json_round_trip():
    m = Momentum(beta=0.7, min_weight=0.3)
    for i in range(3):
        m.push("piston_0", _g(i, "piston_0"))
    m.push("piston_1", Gradient(agent="piston_1", keep="k", change="c", drop="d", evidence_steps=[4, 5]))
    back = Momentum.from_json(json.loads(json.dumps(m.to_json())))
    assert back == m and back.beta == 0.7 and back.min_weight == 0.3
    back.push("piston_0", _g(3, "piston_0"))
    m.push("piston_0", _g(3, "piston_0"))
    assert back.get("piston_0") == m.get("piston_0")  # the restored memory decays the same way


@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"beta": 1.0}, "beta"),
        ({"beta": -0.1}, "beta"),
        ({"min_weight": 0.0}, "min_weight"),
        ({"min_weight": 1.5}, "min_weight"),
    ],
)
def test_momentum_bad_settings(kw, needle):
    with pytest.raises(ValueError, match=needle):
        Momentum(**kw)


# -- directions that rest on the evidence ---------------------------------------------------


def test_evidence_changes_are_the_actions_re_runs_found_better():
    r = report(
        0,
        {"piston_0": (0.5, "ok", [1]), "piston_1": (-0.5, "bad", [0])},
        PROBES
        + [
            Counterfactual(agents=("piston_0",), replacement="stay", value=20.0, delta=15.0, steps=3, at_steps=(1, 2)),
            Counterfactual(agents=("piston_0",), replacement="default", value=30.0, delta=25.0, steps=3),
        ],
    )
    assert evidence_changes("piston_0", r) == ["play stay at steps [1, 2]", "play down at every step"]
    assert evidence_changes("piston_1", r) == []  # its only single-agent re-run lost; group probes do not count


def test_a_supported_change_is_chosen_among_the_evidence_and_merged_among_them():
    r0 = report(0, {"piston_0": (0.5, "ok", [1])}, PROBES[:1])
    r1 = report(1, {"piston_0": (-0.5, "bad", [2])}, PROBES[:1])
    llm = ScriptedBackend(
        [
            grad_reply("go down more", (1,)),  # not a supported change: rejected, asked again
            grad_reply("play down at every step", (1,)),
            grad_reply("play down at every step", (2,)),
            grad_reply("something new", (2,)),
            grad_reply("play down at every step", (2,)),
            policy_reply("Always push down."),
        ]
    )
    upd = TextualPolicyOptimiser(llm).update("piston_0", "Always push up.", [r0, r1])
    grad_schema = llm.requests[0].json_schema["properties"]["change"]
    assert grad_schema["enum"] == ["play down at every step"]
    assert "The re-runs support these changes: play down at every step" in task_of(llm.requests[0])
    assert "must be one of the supported changes" in task_of(llm.requests[1])
    assert all(g.supported for g in upd.gradients)
    agg = [r for r in llm.requests if stage_of(r) == "agg"]
    assert agg[0].json_schema["properties"]["change"]["enum"] == ["play down at every step"]
    assert upd.gradient.change == "play down at every step" and upd.gradient.supported
    assert upd.new == "Always push down."


def test_free_directions_stay_free_text():
    r = report(0, {"piston_0": (0.5, "ok", [1])}, PROBES[:1])
    llm = ScriptedBackend([grad_reply("go down more", (1,)), policy_reply("Always push down.")])
    upd = TextualPolicyOptimiser(llm, directions="free").update("piston_0", "Always push up.", [r])
    assert "enum" not in llm.requests[0].json_schema["properties"]["change"]
    assert upd.gradient.change == "go down more" and not upd.gradient.supported


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ("Always stay. stay", "does not say 'up'"),  # the 135M model's rewrites, measured
        ("Never push, always stay", "does not say 'up'"),
        ("Always stay. Then up", "keeps the current one ('Always stay.') whole"),
        ("Always pushup.", "does not say 'up'"),  # a word inside another word is not the word
    ],
)
def test_a_supported_update_must_name_the_supported_word(bad, needle):
    grad = Gradient(agent="piston_0", change="play up at steps [0]", supported=True)
    llm = ScriptedBackend([policy_reply(bad), policy_reply("Always play up.")])
    upd = TextualPolicyOptimiser(llm, max_rewrite=1.0).apply("piston_0", "Always stay.", grad)
    assert upd.new == "Always play up."
    assert "the new policy must say up" in prompt_of(llm.requests[0])
    assert needle in task_of(llm.requests[1])
    with pytest.raises(SchemaValidationError, match="policy update for piston_0"):
        TextualPolicyOptimiser(ScriptedBackend([policy_reply(bad)] * 3), max_rewrite=1.0).apply(
            "piston_0", "Always stay.", grad
        )


def test_free_or_unsupported_changes_need_no_word():
    for grad in (
        Gradient(agent="piston_0", change="play up at every step"),  # the same words, not from evidence
        Gradient(agent="piston_0", change="push harder", supported=True),  # not an evidence phrase
    ):
        llm = ScriptedBackend([policy_reply("Always stay low.")])
        assert TextualPolicyOptimiser(llm).apply("piston_0", "Always stay.", grad).new == "Always stay low."
        assert "the new policy must say" not in prompt_of(llm.requests[0])
    # an agent whose policy already names the word may keep it (the evidence asked for that word)
    grad = Gradient(agent="piston_0", change="play up at every step", supported=True)
    llm = ScriptedBackend([policy_reply("Always push up. Really.")])
    assert TextualPolicyOptimiser(llm).apply("piston_0", "Always push up.", grad).new == "Always push up. Really."


def test_a_supported_update_names_no_other_action():
    # the adversary's case: "Always play up stay at every step." named the word and every other one
    grad = Gradient(agent="piston_0", change="play up at every step", supported=True, words=["down", "stay", "up"])
    llm = ScriptedBackend([policy_reply("Always play up stay at every step."), policy_reply("Always push up.")])
    assert TextualPolicyOptimiser(llm).apply("piston_0", "Always stay.", grad).new == "Always push up."
    assert "no other action (down, stay)" in prompt_of(llm.requests[0])
    assert "names 'stay' besides 'up'" in task_of(llm.requests[1])
    # a word inside the supported one is not another action
    grad = Gradient(
        agent="player_0", change="play pick up onion at every step", supported=True, words=["pick up onion", "up"]
    )
    llm = ScriptedBackend([policy_reply("Always pick up onion.")])
    assert TextualPolicyOptimiser(llm).apply("player_0", "Always wait 1.", grad).new == "Always pick up onion."


def test_the_words_come_from_what_the_agent_played_and_its_re_runs():
    from lang_pz.critics.base import AgentEvidence

    r = report(0, {"piston_0": (-0.5, "bad", [1]), "piston_1": (0.5, "ok", [0])}, PROBES)
    r = r.model_copy(
        update={
            "evidence": {"piston_0": AgentEvidence(agent_return=1.0, action_counts={"stay": 4}, parse_errors=0, n_steps=4)}
        }
    )
    llm = ScriptedBackend([grad_reply("play down at every step", (1,)), policy_reply("Always push down.")])
    upd = TextualPolicyOptimiser(llm).update("piston_0", "Always stay.", [r])
    assert upd.gradient.words == sorted({"stay"} | {c.replacement for c in PROBES if c.agents == ("piston_0",)})


@pytest.mark.parametrize("word", ["[4]", "[check]"])
def test_a_word_a_policy_text_cannot_hold_is_not_required(word):
    grad = Gradient(agent="player_0", change=f"play {word} at every step", supported=True, words=[word, "[3]"])
    llm = ScriptedBackend([policy_reply("Take four.")])
    assert TextualPolicyOptimiser(llm).apply("player_0", "Take three.", grad).new == "Take four."
    assert llm.requests[0].json_schema["properties"]["policy"]["pattern"] == policy_pattern(300)


def test_a_short_policy_limit_gets_no_word_pattern():
    assert policy_pattern(43, "up") == policy_pattern(43) and "{0,-" not in policy_pattern(44, "up")
