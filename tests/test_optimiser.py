"""The textual policy optimiser: per-agent gradients, validated rewrites, retries, errors.

Unit tests use :class:`ScriptedBackend`, a scripted LLM stand-in. The ``integration`` test
runs one optimiser step with the real SmolLM2-135M and checks that the updates validate.
"""

from __future__ import annotations

import json

import pytest

from lang_pz.backends import ScriptedBackend
from lang_pz.backends.base import GenerationRequest
from lang_pz.critics import Credit, CriticReport
from lang_pz.error import SchemaValidationError
from lang_pz.optimisers import Gradient, PolicyUpdate, TextualPolicyOptimiser, gradient_reply_model, policy_reply_model


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


def report(episode: int, values: dict[str, tuple[float, str, list[int]]]) -> CriticReport:
    return CriticReport(
        episode=episode,
        team_return=0.0,
        credits={a: Credit(agent=a, credit=c, explanation=e, steps=s) for a, (c, e, s) in values.items()},
    )


REPORTS = [
    report(0, {"piston_0": (-1.0, "ZERO-A pushed up too early", [1, 2]), "piston_1": (0.5, "ONE-A held still", [0])}),
    report(1, {"piston_0": (-0.5, "ZERO-B stayed high", [2]), "piston_1": (0.0, "ONE-B did little", [4])}),
]
POLICIES = {"piston_0": "Always push up.", "piston_1": "Always stay where you are."}


def grad_reply(direction="go down more", steps=(2,)) -> str:
    return json.dumps({"direction": direction, "evidence_steps": list(steps)})


def policy_reply(text: str) -> str:
    return json.dumps({"policy": text})


def routed(replies: dict[str, list[str]]):
    """A scripted stand-in that answers by agent and stage (read from the prompt)."""
    queues = {k: list(v) for k, v in replies.items()}

    def answer(req: GenerationRequest) -> str:
        p = prompt_of(req)
        task = p.rsplit("Now your task:", 1)[-1]
        stage = "grad" if "Edit direction as JSON" in task else "apply"
        agent = next(a for a in POLICIES if f"Agent: {a}" in task or f"agent {a}" in p)
        return queues[f"{agent}/{stage}"].pop(0)

    return answer


def test_step_updates_each_agent_from_its_own_credits_only():
    llm = ScriptedBackend(
        routed({
            "piston_0/grad": [grad_reply("go down more", (1, 2))],
            "piston_0/apply": [policy_reply("Always go down.")],
            "piston_1/grad": [grad_reply("keep still", (0,))],
            "piston_1/apply": [policy_reply("Always stay where you are.")],
        })
    )
    updates = TextualPolicyOptimiser(llm).step(POLICIES, REPORTS)
    assert set(updates) == set(POLICIES)
    u0 = updates["piston_0"]
    assert isinstance(u0, PolicyUpdate)
    assert (u0.old, u0.new, u0.changed) == ("Always push up.", "Always go down.", True)
    assert u0.gradient == Gradient(agent="piston_0", direction="go down more", evidence_steps=[1, 2])
    assert not updates["piston_1"].changed and len(u0.generations) == 2
    grads = [prompt_of(r).rsplit("Now your task:", 1)[1] for r in llm.requests if "Edit direction as JSON" in prompt_of(r).rsplit("Now your task:", 1)[1]]
    assert len(grads) == 2
    g0 = next(p for p in grads if "Agent: piston_0" in p)
    g1 = next(p for p in grads if "Agent: piston_1" in p)
    assert "ZERO-A" in g0 and "ZERO-B" in g0 and "ONE-" not in g0
    assert "ONE-A" in g1 and "ONE-B" in g1 and "ZERO-" not in g1
    assert "Always push up." in g0 and "Always stay where you are." not in g0


def test_gradient_schema_restricts_evidence_to_cited_steps():
    llm = ScriptedBackend([grad_reply(steps=(1,))])
    credits = [r.credits["piston_0"] for r in REPORTS]
    TextualPolicyOptimiser(llm).gradient("piston_0", "Always push up.", credits)
    schema = llm.requests[0].json_schema
    assert schema == gradient_reply_model([1, 2]).model_json_schema()
    assert schema["properties"]["evidence_steps"]["items"]["enum"] == [1, 2]
    assert schema["required"] == ["direction", "evidence_steps"]
    assert gradient_reply_model([]).model_json_schema()["properties"]["evidence_steps"]["maxItems"] == 0


def test_apply_prompt_and_schema():
    llm = ScriptedBackend([policy_reply("Always go down.")], prompt_format="chat")
    upd = TextualPolicyOptimiser(llm, max_policy_chars=40).apply(
        "piston_0", "Always push up.", Gradient(agent="piston_0", direction="go down more")
    )
    assert upd.new == "Always go down."
    system, user = llm.requests[0].messages
    assert "Current policy: Always push up." in user.content and "Edit direction: go down more" in user.content
    assert llm.requests[0].json_schema == policy_reply_model(40).model_json_schema()
    assert llm.requests[0].json_schema["properties"]["policy"]["maxLength"] == 40


BAD_GRADIENTS = {
    "uncited evidence step": (grad_reply(steps=(9,)), "not cited"),
    "empty direction": (grad_reply(direction="  "), "direction is empty"),
    "repetition": (grad_reply(direction="go down go down go down go down go down go down"), "repeats"),
    "not json": ("go down", "not valid JSON"),
    "extra field": (json.dumps({"direction": "d", "evidence_steps": [], "policy": "p"}), "policy"),
}


@pytest.mark.parametrize("case", sorted(BAD_GRADIENTS))
def test_bad_gradient_is_retried_with_the_error_then_raises(case):
    bad, needle = BAD_GRADIENTS[case]
    credits = [r.credits["piston_0"] for r in REPORTS]
    llm = ScriptedBackend([bad, grad_reply()])
    grad = TextualPolicyOptimiser(llm).gradient("piston_0", "Always push up.", credits)
    assert grad.direction == "go down more"
    assert "rejected" in prompt_of(llm.requests[1]) and needle in prompt_of(llm.requests[1])
    llm = ScriptedBackend([bad] * 2)
    with pytest.raises(SchemaValidationError, match="language gradient for piston_0") as info:
        TextualPolicyOptimiser(llm, max_attempts=2).gradient("piston_0", "Always push up.", credits)
    assert len(info.value.errors) == 2 and needle in info.value.errors[-1]


BAD_POLICIES = {
    "empty": (policy_reply(""), "policy"),
    "blank": (policy_reply("   "), "policy is empty"),
    "too long": (policy_reply("Always push up. " * 30), "at most 300"),
    "non-ascii": (policy_reply("Always push up \u2191."), "printable ASCII"),
    "newline": (policy_reply("Always push up.\nNow."), "printable ASCII"),
    "repetition": (policy_reply("to make the ball move, to make the ball move, to make the ball move"), "repeats"),
}


@pytest.mark.parametrize("case", sorted(BAD_POLICIES))
def test_bad_new_policy_is_retried_with_the_error_then_raises(case):
    bad, needle = BAD_POLICIES[case]
    grad = Gradient(agent="piston_0", direction="go down more")
    llm = ScriptedBackend([bad, policy_reply("Always go down.")])
    assert TextualPolicyOptimiser(llm).apply("piston_0", "Always push up.", grad).new == "Always go down."
    assert needle in prompt_of(llm.requests[1])
    llm = ScriptedBackend([bad] * 3)
    with pytest.raises(SchemaValidationError, match="policy update for piston_0") as info:
        TextualPolicyOptimiser(llm, max_attempts=3).apply("piston_0", "Always push up.", grad)
    assert len(info.value.errors) == 3 and info.value.raw == bad


def test_worked_examples_are_valid_replies():
    from lang_pz.optimisers.textual import APPLY_EXAMPLE, GRADIENT_EXAMPLE

    grad = json.loads(GRADIENT_EXAMPLE.rsplit("\n", 1)[1])
    gradient_reply_model([0, 1, 2]).model_validate(grad)
    policy_reply_model(300).model_validate(json.loads(APPLY_EXAMPLE.rsplit("\n", 1)[1]))


def test_caller_errors_are_refused():
    opt = TextualPolicyOptimiser(ScriptedBackend([]))
    with pytest.raises(ValueError, match="piston_1"):
        opt.gradient("piston_0", "p", [REPORTS[0].credits["piston_1"]])
    with pytest.raises(ValueError, match="no credits"):
        opt.gradient("piston_0", "p", [])
    with pytest.raises(ValueError, match="applied to agent"):
        opt.apply("piston_0", "p", Gradient(agent="piston_1", direction="d"))
    with pytest.raises(ValueError, match="max_policy_chars"):
        TextualPolicyOptimiser(ScriptedBackend([]), max_policy_chars=3)


def test_step_skips_uncredited_agents_and_ignores_agents_without_policy():
    llm = ScriptedBackend([grad_reply(steps=()), policy_reply("Always go down.")])
    reports = [report(0, {"piston_0": (0.0, "ok", []), "opponent": (1.0, "won", [1])})]
    updates = TextualPolicyOptimiser(llm).step({"piston_0": "Up.", "piston_7": "Up."}, reports)
    assert set(updates) == {"piston_0"} and len(llm.requests) == 2
    assert "won" not in prompt_of(llm.requests[0])


def test_update_dumps_to_json():
    llm = ScriptedBackend([grad_reply(steps=(2,)), policy_reply("Always go down.")])
    upd = TextualPolicyOptimiser(llm).step({"piston_0": "Up."}, REPORTS)["piston_0"]
    data = json.loads(json.dumps(upd.model_dump(mode="json")))
    assert data["new"] == "Always go down." and data["gradient"]["evidence_steps"] == [2]


# -- the real model ------------------------------------------------------------------------


@pytest.mark.integration
def test_embedded_optimiser_step_returns_validated_updates(embedded):
    updates = TextualPolicyOptimiser(embedded, max_policy_chars=120).step(POLICIES, REPORTS)
    assert set(updates) == set(POLICIES)
    cited = {"piston_0": {1, 2}, "piston_1": {0, 4}}
    for agent, upd in updates.items():
        assert upd.agent == agent and upd.old == POLICIES[agent]
        assert 0 < len(upd.new) <= 120 and all(32 <= ord(ch) < 127 for ch in upd.new)
        assert upd.gradient.agent == agent and upd.gradient.direction
        assert set(upd.gradient.evidence_steps) <= cited[agent]
