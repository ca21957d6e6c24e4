"""The centralised critic and ask_structured: rendering, validation, retries, errors.

Unit tests use :class:`ScriptedBackend`, a scripted LLM stand-in. The ``integration`` test
runs the real SmolLM2-135M on a small hand-built 3-agent trajectory and checks only that the
report validates (what a 135M model says is not meaningful; see the project guide).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from lang_pz.backends.base import GenerationRequest
from lang_pz.critics import CentralCritic, Credit, CriticReport
from lang_pz.critics.base import compute_evidence
from lang_pz.critics.central import CRITIC_MODES, TEAM, reply_model
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.critics.render import GLOBAL_EXAMPLE, own_view, subsample_steps
from lang_pz.error import LangPZError, SchemaValidationError
from lang_pz.structured import ask_structured, repeated_phrase
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

AGENTS = ("piston_0", "piston_1", "piston_2")


def make_trajectory(n_steps: int = 4, agents=AGENTS, episode: int = 3) -> Trajectory:
    """A small hand-built Pistonball-like trajectory (piston_0 down, piston_1 stay, piston_2 up)."""
    acts = dict(zip(agents, ("down", "stay", "up", "up")))
    rewards = dict(zip(agents, (1.0, 0.25, -0.5, 0.0)))
    traj = Trajectory(episode=episode, seed=0)
    for t in range(n_steps):
        traj.states[t] = f"STATE-{t}: ball x={40 + 12 * t} px, moving right"
        for a in agents:
            traj.steps.append(
                AgentStep(
                    episode=episode,
                    step=t,
                    agent=a,
                    observation=f"OBS-{a}-{t}",
                    raw_output=acts[a],
                    action=acts[a],
                    parse_error=None,
                    reward=rewards[a],
                )
            )
    traj.returns = {a: rewards[a] * n_steps for a in agents}
    return traj


def reply(agents=AGENTS, credits=(0.5, 0.0, -0.5), steps=((1,), (0, 2), (3,)), extra=None) -> str:
    body = {
        a: {"credit": c, "steps": list(s), "explanation": f"{a} did its part"} for a, c, s in zip(agents, credits, steps)
    }
    body.update(extra or {})
    return json.dumps(body)


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


# -- a valid reply -------------------------------------------------------------------------


def test_valid_reply_gives_a_credit_per_agent():
    llm = ScriptedBackend([reply()])  # scripted stand-in
    report = CentralCritic(llm).assess(make_trajectory(), {"piston_0": "Always go down."})
    assert set(report.credits) == set(AGENTS)
    c = report.credits["piston_2"]
    assert c == Credit(agent="piston_2", credit=-0.5, explanation="piston_2 did its part", steps=[3])
    assert report.episode == 3 and report.team_return == pytest.approx(3.0)
    assert report.attempts == 1 and report.errors == []
    assert report.evidence["piston_0"].action_counts == {"down": 4}
    assert report.usage["calls"] == 1


def test_one_call_reads_states_actions_evidence_and_policies():
    llm = ScriptedBackend([reply()])
    CentralCritic(llm).assess(make_trajectory(), {"piston_0": "Always go down.", "piston_1": "Stay."})
    assert len(llm.requests) == 1
    p = prompt_of(llm.requests[0])
    for t in range(4):
        assert f"STATE-{t}" in p
    assert "piston_0 down; piston_1 stay; piston_2 up" in p
    assert "Team return: 3.0" in p and "piston_2: return -2.0; actions up x4; parse errors 0" in p
    assert "Always go down." in p and "Steps (all 4)" in p
    assert "OBS-piston_0-0" not in p  # the compact rendering shows states, not observations


def test_long_trajectories_are_subsampled_and_say_so():
    llm = ScriptedBackend([reply(steps=((0,), (50,), (99,)))])
    report = CentralCritic(llm, max_prompt_steps=10).assess(make_trajectory(n_steps=100))
    p = prompt_of(llm.requests[0])
    assert "Steps (10 of 100, evenly spaced; others omitted)" in p
    real = p.split("Now the real episode:")[1]  # after the worked example
    assert sum(line.startswith("Step ") for line in real.splitlines()) == 10
    assert "STATE-0:" in p and "STATE-99:" in p and "STATE-50:" not in p
    assert "computed from all 100 steps" in p
    assert report.shown_steps == subsample_steps(range(100), 10) and report.total_steps == 100
    assert report.credits["piston_1"].steps == [50]  # an existing step not shown is allowed


def test_prompt_budget_cuts_states_then_shows_fewer_steps():
    traj = make_trajectory(n_steps=100)
    for t in traj.states:
        traj.states[t] = f"STATE-{t} " + "x" * 500
    text, shown = CentralCritic(ScriptedBackend([]), max_prompt_chars=3000).layout(traj)
    assert len(text) <= 3000
    assert 2 <= len(shown) < 40 and f"Steps ({len(shown)} of 100, evenly spaced; others omitted; states cut to" in text
    assert shown == subsample_steps(range(100), len(shown))


def test_worked_example_is_a_valid_reply():
    from lang_pz.critics.render import CRITIC_EXAMPLE

    example = json.loads(CRITIC_EXAMPLE.rsplit("Credits as JSON:\n", 1)[1])
    model = reply_model(["robot_a", "robot_b"], [0, 1, 2])
    CentralCritic.validate_reply(model.model_validate(example), ["robot_a", "robot_b"], [0, 1, 2])


def test_schema_lists_every_agent_once_and_nothing_else():
    llm = ScriptedBackend([reply()])
    CentralCritic(llm).assess(make_trajectory())
    schema = llm.requests[0].json_schema
    assert schema == reply_model(list(AGENTS), [0, 1, 2, 3]).model_json_schema()
    assert schema["required"] == list(AGENTS) and schema["additionalProperties"] is False
    item = schema["$defs"]["AgentCredit"]["properties"]
    assert item["credit"]["enum"] == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert item["steps"]["items"]["enum"] == [0, 1, 2, 3] and item["steps"]["maxItems"] == 3
    assert item["explanation"]["maxLength"] == 80


def test_chat_backends_get_system_and_user_messages():
    llm = ScriptedBackend([reply()], prompt_format="chat")
    CentralCritic(llm).assess(make_trajectory())
    system, user = llm.requests[0].messages
    assert system.role == "system" and "critic" in system.content
    assert user.role == "user" and "STATE-0" in user.content


def test_agent_ids_need_not_be_identifiers():
    traj = make_trajectory(agents=("player 1", "player-2"))
    llm = ScriptedBackend([reply(agents=("player 1", "player-2"), credits=(1, -1), steps=((0,), (1,)))])
    assert set(CentralCritic(llm).assess(traj).credits) == {"player 1", "player-2"}


def test_actions_render_as_the_policy_text_or_the_applied_action():
    traj = make_trajectory()
    for s in traj.steps:
        s.action = {"down": 0, "stay": 1, "up": 2}[s.raw_output]  # what a Discrete env records
    traj.steps[0].raw_output, traj.steps[0].action, traj.steps[0].parse_error = "sideways!", 1, "no action word"
    traj.steps[1].raw_output, traj.steps[1].action = " 0.5", 0.123456
    llm = ScriptedBackend([reply()])
    report = CentralCritic(llm).assess(traj)
    p = prompt_of(llm.requests[0]).split("Now the real episode:")[1]
    assert "piston_2 up" in p and "piston_1 0.5;" in p
    assert "piston_0 1 (unparsable output 'sideways!')" in p
    assert report.evidence["piston_0"].action_counts == {"down": 3, "1": 1}
    assert report.evidence["piston_0"].parse_errors == 1


def test_empty_trajectory_is_an_error():
    with pytest.raises(LangPZError, match="no agent steps"):
        CentralCritic(ScriptedBackend([])).assess(Trajectory(episode=0, seed=0))


def test_report_dumps_to_json():
    report = CentralCritic(ScriptedBackend([reply()])).assess(make_trajectory())
    data = json.loads(json.dumps(report.model_dump(mode="json")))
    assert data["credits"]["piston_0"]["credit"] == 0.5
    assert CriticReport(episode=0, team_return=0.0, credits={}).shown_steps == []


# -- validation and retries ----------------------------------------------------------------

BAD_REPLIES = {
    "missing agent": (reply(agents=AGENTS[:2]), "piston_2"),
    "unknown agent": (reply(extra={"piston_9": {"credit": 0, "steps": [], "explanation": "x"}}), "piston_9"),
    "credit out of range": (reply(credits=(1.5, 0.0, 0.0)), "outside [-1, 1]"),
    "non-existent step": (reply(steps=((1,), (7,), (3,))), "step(s) [7]"),
    "duplicate agent": ('{"piston_0": {"credit": 0, "steps": [], "explanation": "a"}, ' + reply()[1:], "duplicate key"),
    "not json": ("The pistons did well.", "not valid JSON"),
    "empty explanation": (reply().replace("piston_1 did its part", "   "), "explanation is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_REPLIES))
def test_bad_reply_is_retried_with_the_error_in_the_next_prompt(case):
    bad, needle = BAD_REPLIES[case]
    llm = ScriptedBackend([bad, reply()])
    report = CentralCritic(llm).assess(make_trajectory())
    assert report.attempts == 2 and len(report.errors) == 1 and needle in report.errors[0]
    first, second = (prompt_of(r) for r in llm.requests)
    assert "rejected" not in first
    assert "Your previous reply was rejected" in second and needle in second
    assert llm.requests[1].seed != llm.requests[0].seed  # retries are not a replay of the first call


@pytest.mark.parametrize("case", sorted(BAD_REPLIES))
def test_bad_replies_raise_after_max_attempts(case):
    bad, needle = BAD_REPLIES[case]
    llm = ScriptedBackend([bad] * 3)
    with pytest.raises(SchemaValidationError, match="critic report for episode 3") as info:
        CentralCritic(llm, max_attempts=3).assess(make_trajectory())
    assert len(info.value.errors) == 3 and needle in info.value.errors[-1]
    assert info.value.raw == bad and len(llm.requests) == 3


def test_never_hands_a_failed_reply_to_every_agent():
    llm = ScriptedBackend(["all agents did fine"] * 2)
    with pytest.raises(SchemaValidationError):
        CentralCritic(llm, max_attempts=2).assess(make_trajectory())


# -- helpers -------------------------------------------------------------------------------


@given(n=st.integers(1, 300), k=st.integers(1, 60))
def test_subsample_steps_properties(n, k):
    steps = list(range(0, 2 * n, 2))
    out = subsample_steps(steps, k)
    assert len(out) == min(n, k) and out == sorted(set(out)) and set(out) <= set(steps)
    assert out[0] == steps[0]
    if k >= 2:
        assert out[-1] == steps[-1]


def test_evidence_counts_parse_errors_and_falls_back_to_summed_rewards():
    traj = make_trajectory(n_steps=2)
    traj.steps[0].parse_error = "garbage"
    traj.returns = {}
    ev = compute_evidence(traj)
    assert ev["piston_0"].parse_errors == 1 and ev["piston_0"].agent_return == 2.0


class _Answer(BaseModel):
    n: int


def test_ask_structured_passes_errors_and_sets_the_schema():
    seen: list[list[str]] = []

    def build(errors):
        seen.append(errors)
        return GenerationRequest(prompt="Give n. " + " ".join(errors))

    llm = ScriptedBackend(['{"n": "x"}', '{"n": 3}'])
    value, gens = ask_structured(llm, build, _Answer, what="answer")
    assert value == _Answer(n=3) and len(gens) == 2
    assert seen[0] == [] and len(seen[1]) == 1 and "n:" in seen[1][0]
    assert llm.requests[0].json_schema == _Answer.model_json_schema()


def test_ask_structured_runs_the_semantic_check_and_refuses_other_schemas():
    def odd(a: _Answer) -> None:
        if a.n % 2 == 0:
            raise ValueError(f"n={a.n} is even")

    llm = ScriptedBackend(['{"n": 2}', '{"n": 4}'])
    with pytest.raises(SchemaValidationError, match="n=4 is even") as info:
        ask_structured(llm, lambda e: GenerationRequest(prompt="p"), _Answer, what="odd", max_attempts=2, validate=odd)
    assert info.value.errors == ["n=2 is even", "n=4 is even"]
    with pytest.raises(ValueError, match="json_schema"):
        ask_structured(
            ScriptedBackend(["{}"]),
            lambda e: GenerationRequest(prompt="p", json_schema={"type": "object"}),
            _Answer,
            what="x",
        )
    with pytest.raises(ValueError, match="max_attempts"):
        ask_structured(ScriptedBackend([]), lambda e: GenerationRequest(prompt="p"), _Answer, what="x", max_attempts=0)


def test_repeated_phrase():
    assert repeated_phrase("to make the ball move, to make the ball move, to make the ball move") == "to make the ball"
    assert repeated_phrase("Always push up when the ball is left.") is None


# -- the real model ------------------------------------------------------------------------


@pytest.mark.integration
def test_embedded_critic_returns_a_validated_report(embedded):
    traj = make_trajectory(n_steps=6)
    report = CentralCritic(embedded).assess(
        traj, {"piston_0": "Always go down.", "piston_1": "Always stay.", "piston_2": "Always push up."}
    )
    assert set(report.credits) == set(AGENTS)
    for a, c in report.credits.items():
        assert c.agent == a and -1 <= c.credit <= 1 and 0 < len(c.explanation) <= 80
        assert set(c.steps) <= set(range(6))
    assert 1 <= report.attempts <= 3


# -- modes and counterfactual evidence -----------------------------------------------------


def team_reply(credit: float = -0.5, steps=(1, 2), explanation: str = "SHARED-CRITIQUE of the team") -> str:
    return json.dumps({TEAM: {"credit": credit, "steps": list(steps), "explanation": explanation}})


def test_default_mode_is_central_credit():
    report = CentralCritic(ScriptedBackend([reply()])).assess(make_trajectory())
    assert report.mode == "central_credit" and report.counterfactuals == []
    assert CRITIC_MODES == ("central_credit", "central_global", "independent")


def test_central_global_gives_every_agent_the_one_shared_credit():
    llm = ScriptedBackend([team_reply()])
    report = CentralCritic(llm, mode="central_global").assess(make_trajectory())
    assert len(llm.requests) == 1 and report.mode == "central_global"
    schema = llm.requests[0].json_schema
    assert schema["required"] == [TEAM] and list(schema["properties"]) == [TEAM]
    assert schema == reply_model([TEAM], [0, 1, 2, 3]).model_json_schema()
    assert set(report.credits) == set(AGENTS)
    for a, c in report.credits.items():
        assert c == Credit(agent=a, credit=-0.5, explanation="SHARED-CRITIQUE of the team", steps=[1, 2])
    p = prompt_of(llm.requests[0])
    assert "one shared credit" in p and GLOBAL_EXAMPLE in p
    real = p.split("Now the real episode:")[1]
    assert "STATE-0" in real and "piston_0 down; piston_1 stay; piston_2 up" in real  # the central view


def test_central_global_rejects_per_agent_replies():
    llm = ScriptedBackend([reply(), team_reply()])
    report = CentralCritic(llm, mode="central_global").assess(make_trajectory())
    assert report.attempts == 2 and len(report.errors) == 1 and "piston_0" in report.errors[0]
    llm = ScriptedBackend([reply()] * 2)
    with pytest.raises(SchemaValidationError):
        CentralCritic(llm, mode="central_global", max_attempts=2).assess(make_trajectory())


def test_global_worked_example_is_a_valid_reply():
    example = json.loads(GLOBAL_EXAMPLE.rsplit("Credits as JSON:\n", 1)[1])
    model = reply_model([TEAM], [0, 1, 2])
    CentralCritic.validate_reply(model.model_validate(example), [TEAM], [0, 1, 2])


def _independent_answer(credits: dict[str, float]):
    """Answers each per-agent call with a reply for the one agent the prompt names."""

    def answer(req: GenerationRequest) -> str:
        real = prompt_of(req).split("Now the real episode:")[1]
        (agent,) = [a for a in AGENTS if f"Agents: {a}." in real]
        return json.dumps({agent: {"credit": credits[agent], "steps": [0], "explanation": f"EXPL-{agent}"}})

    return answer


def test_independent_makes_one_call_per_agent_on_its_own_view():
    credits = dict(zip(AGENTS, (1.0, 0.0, -1.0)))
    llm = ScriptedBackend(_independent_answer(credits))
    traj = make_trajectory()
    policies = {a: f"POLICY-{a}" for a in AGENTS}
    report = CentralCritic(llm, mode="independent").assess(traj, policies)
    assert len(llm.requests) == len(AGENTS) and report.mode == "independent" and report.attempts == 3
    assert {a: c.credit for a, c in report.credits.items()} == credits
    assert all(c.agent == a and c.explanation == f"EXPL-{a}" for a, c in report.credits.items())
    for req in llm.requests:
        p = prompt_of(req)
        (me,) = [a for a in AGENTS if f"Agents: {a}." in p]
        assert req.json_schema["required"] == [me]
        for t in range(4):
            assert f"OBS-{me}-{t}" in p  # its own observations, in place of the global state
        assert "STATE-" not in p  # no global state
        for other in set(AGENTS) - {me}:
            assert other not in p  # no other agent's actions, observations, policy or return
        assert f"POLICY-{me}" in p
        assert f"{me}: return {traj.returns[me]}" in p
    assert report.evidence == compute_evidence(traj) and report.total_steps == 4
    assert report.team_return == traj.team_return


def test_independent_raises_when_one_agent_fails():
    def answer(req: GenerationRequest) -> str:
        if "Agents: piston_1." in prompt_of(req):
            return "no idea"
        return _independent_answer(dict.fromkeys(AGENTS, 0.0))(req)

    with pytest.raises(SchemaValidationError):
        CentralCritic(ScriptedBackend(answer), mode="independent", max_attempts=2).assess(make_trajectory())


def test_own_view_keeps_only_the_agents_part():
    traj = make_trajectory()
    traj.finished = True
    view = own_view(traj, "piston_1")
    assert view.agents == ["piston_1"] and len(view.steps) == 4
    assert view.states == {t: f"OBS-piston_1-{t}" for t in range(4)}
    assert view.returns == {"piston_1": traj.returns["piston_1"]}
    assert (view.episode, view.seed, view.finished) == (traj.episode, traj.seed, True)


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="'global'") as info:
        CentralCritic(ScriptedBackend([]), mode="global")
    for m in CRITIC_MODES:
        assert m in str(info.value)


CF = [
    Counterfactual(agents=("piston_0",), replacement="up", value=5.0, delta=2.0, steps=4),
    Counterfactual(agents=("piston_2",), replacement="default", value=-1.0, delta=-4.0, steps=4),
    Counterfactual(agents=AGENTS, replacement="random", value=0.5, delta=-2.5, steps=4),
]


@pytest.mark.parametrize("mode", ["central_credit", "central_global"])
def test_counterfactual_lines_appear_in_the_prompt(mode):
    llm = ScriptedBackend([team_reply() if mode == "central_global" else reply()])
    report = CentralCritic(llm, mode=mode).assess(make_trajectory(), counterfactuals=CF)
    real = prompt_of(llm.requests[0]).split("Now the real episode:")[1]
    assert "Counterfactual re-runs (same seed, computed):" in real
    for c in CF:
        assert f"- {c.describe(list(AGENTS))}" in real
    assert "every agent had played random actions" in real
    assert real.index("Counterfactual re-runs") < real.index("Steps (")  # evidence before the steps
    assert report.counterfactuals == list(CF)
    assert json.loads(json.dumps(report.model_dump(mode="json")))["counterfactuals"][0]["agents"] == ["piston_0"]


def test_no_counterfactual_section_without_probes():
    llm = ScriptedBackend([reply()])
    CentralCritic(llm).assess(make_trajectory())
    assert "Counterfactual re-runs" not in prompt_of(llm.requests[0])


def test_independent_shows_each_agent_only_its_own_probes():
    llm = ScriptedBackend(_independent_answer(dict.fromkeys(AGENTS, 0.0)))
    report = CentralCritic(llm, mode="independent").assess(make_trajectory(), counterfactuals=CF)
    by_agent = {a: prompt_of(r) for r in llm.requests for a in AGENTS if f"Agents: {a}." in prompt_of(r)}
    assert CF[0].describe(["piston_0"]) in by_agent["piston_0"]
    assert CF[1].describe(["piston_2"]) in by_agent["piston_2"]
    assert "Counterfactual re-runs" not in by_agent["piston_1"]
    assert all("random actions" not in p for p in by_agent.values())  # team probes are not shown
    assert report.counterfactuals == list(CF)
