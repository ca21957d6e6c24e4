"""The critic benchmark: FaultyPolicy, blame scoring, baselines, fault injection, Who&When, CLI.

Unit tests use :class:`ScriptedBackend` (a scripted LLM stand-in) as the critic's model: a
script that reads the prompt's action lines and blames the agent that played ``stay`` (the
Pistonball heuristic never does, so only the idle-faulty agent does) must score 1.0; one that
blames someone else must score 0. The ``integration`` test runs the real embedded model and
checks only the structure of the results (a 135M model's accuracy is noise).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from lang_pz.backends import ScriptedBackend
from lang_pz.backends.base import GenerationRequest
from lang_pz.cli import app
from lang_pz.critics import CentralCritic, Credit, CriticReport
from lang_pz.evaluation.faults import (
    RandomCritic,
    blame,
    chance_step_hit,
    fault_truth,
    run_fault_benchmark,
    score_report,
    summarise,
    wilson_interval,
)
from lang_pz.evaluation.whowhen import (
    clip_message,
    read_whowhen,
    run_whowhen_benchmark,
    to_trajectory,
)
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.policies import FaultyPolicy
from lang_pz.policies.base import Decision, Policy
from lang_pz.trajectory import AgentStep, Trajectory

WHOWHEN = Path(__file__).parent / "data" / "whowhen"
PISTONBALL = "butterfly/pistonball-v0"
PB_KW = {"n_pistons": 5, "hold": 1}
LEGAL = {"legal_actions": ["down", "stay", "up"]}


class Counting(Policy):
    """Plays the given actions in turn and counts its calls."""

    def __init__(self, actions=("up",)):
        self.actions, self.calls = list(actions), 0

    def decide(self, observation, info=None):
        a = self.actions[self.calls % len(self.actions)]
        self.calls += 1
        return Decision(action=a, raw_output=a)


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


def acting(prompt: str) -> dict[str, dict[int, str]]:
    """agent -> step -> action, from the prompt's "Step t:" / "  actions: a x; b y" lines."""
    out: dict[str, dict[int, str]] = {}
    real = prompt.split("Now the real episode:")[-1]
    step = None
    for line in real.splitlines():
        m = re.match(r"Step (\d+):", line)
        if m:
            step = int(m.group(1))
        elif line.startswith("  actions: ") and step is not None:
            for part in line[len("  actions: "):].split("; "):
                agent, _, act = part.partition(" ")
                out.setdefault(agent, {})[step] = act
    return out


def credit_reply(credits: dict[str, float], steps: dict[str, list[int]]) -> str:
    return json.dumps({a: {"credit": c, "steps": steps.get(a, [])[:3], "explanation": "scripted"}
                       for a, c in credits.items()})


def stay_blamer(req: GenerationRequest) -> str:
    """Blames the agent that played 'stay', citing its 'stay' steps."""
    acts = acting(prompt_of(req))
    stays = {a: [t for t, x in s.items() if x == "stay"] for a, s in acts.items()}
    return credit_reply({a: (-1.0 if stays[a] else 0.5) for a in acts}, stays)


def other_blamer(req: GenerationRequest) -> str:
    """Blames the first agent that never played 'stay', citing its first step."""
    acts = acting(prompt_of(req))
    other = next(a for a, s in acts.items() if "stay" not in s.values())
    return credit_reply({a: (-1.0 if a == other else 0.5) for a in acts}, {other: [min(acts[other])]})


def flat(req: GenerationRequest) -> str:
    acts = acting(prompt_of(req))
    return credit_reply({a: 0.0 for a in acts}, {a: [min(s)] for a, s in acts.items()})


def report(credits: dict[str, float], steps: dict[str, list[int]] | None = None) -> CriticReport:
    steps = steps or {}
    return CriticReport(episode=0, team_return=0.0, credits={
        a: Credit(agent=a, credit=c, explanation="x", steps=steps.get(a, [])) for a, c in credits.items()})


# -- FaultyPolicy ------------------------------------------------------------------------


def test_faulty_policy_replaces_exactly_the_given_decisions():
    base = Counting(["up", "down"])
    p = FaultyPolicy(base, "idle", steps=[1, 2, 4])
    played = [p("obs", LEGAL) for _ in range(6)]
    assert played == ["up", "stay", "stay", "down", "stay", "down"]
    assert base.calls == 6  # the base is asked at every decision, replaced or not
    assert p.replaced_decisions == [1, 2, 4] and p.faulty_decisions == [1, 2, 4]
    assert [r.base_action for r in p.log] == ["up", "down", "up", "down", "up", "down"]
    p.reset()
    assert p("obs", LEGAL) == "up" and len(p.log) == 1


def test_replaced_but_identical_is_not_faulty():
    p = FaultyPolicy(Counting(["stay", "up"]), "idle", steps=[0, 1])
    assert [p("o", LEGAL) for _ in range(2)] == ["stay", "stay"]
    assert p.replaced_decisions == [0, 1] and p.faulty_decisions == [1]


def test_harmful_word_mapping_and_random_faults():
    p = FaultyPolicy(Counting(["up", "down"]), "harmful", [0, 1], action={"up": "down", "down": "up"})
    assert [p("o", LEGAL) for _ in range(2)] == ["down", "up"]
    assert FaultyPolicy(Counting(), "harmful", [0], action="down")("o", LEGAL) == "down"
    r1 = FaultyPolicy(Counting(), "random", range(50), seed=3)
    r2 = FaultyPolicy(Counting(), "random", range(50), seed=3)
    a1 = [r1("o", LEGAL) for _ in range(50)]
    assert a1 == [r2("o", LEGAL) for _ in range(50)] and set(a1) == set(LEGAL["legal_actions"])
    # idle without a no-op word: the empty text, which the environment's fallback handles
    assert FaultyPolicy(Counting(), "idle", [0])("o", {"legal_actions": ["left", "right"]}) == ""


def test_faulty_policy_errors_name_the_fix():
    with pytest.raises(LangPZError, match="choose one of idle, harmful, random"):
        FaultyPolicy(Counting(), "lazy", [0])  # type: ignore[arg-type]
    with pytest.raises(LangPZError, match="needs action="):
        FaultyPolicy(Counting(), "harmful", [0])
    with pytest.raises(LangPZError, match=">= 0"):
        FaultyPolicy(Counting(), "idle", [-1])
    with pytest.raises(LangPZError, match="drop it"):
        FaultyPolicy(Counting(), "random", [0], action="up")
    with pytest.raises(LangPZError, match="legal_actions"):
        FaultyPolicy(Counting(), "random", [0])("o", {})
    with pytest.raises(LangPZError, match="no entry for base action 'up'"):
        FaultyPolicy(Counting(), "harmful", [0], action={"down": "up"})("o", LEGAL)


def test_fault_truth_maps_decisions_to_trajectory_steps():
    traj = Trajectory(episode=0, seed=0)
    for t in range(6):  # AEC-like: a and b alternate, b acts at steps 1, 3, 5
        agent = "a" if t % 2 == 0 else "b"
        traj.steps.append(AgentStep(0, t, agent, "o", "x", "x", None, 0.0))
    p = FaultyPolicy(Counting(["up", "stay", "up"]), "idle", [1, 2])
    for _ in range(3):
        p("o", LEGAL)
    assert fault_truth(traj, p, "b") == ([3, 5], [5])


# -- scoring and baselines -----------------------------------------------------------------


def test_blame_lowest_credit_and_tie_rules():
    r = report({"a": 0.5, "b": -0.5, "c": 0.0}, {"b": [4, 7]})
    b = blame(r)
    assert (b.agent, b.steps, b.tied) == ("b", (4, 7), ("b",))
    tie = report({"a": -1.0, "b": -1.0, "c": 0.0}, {"a": [1], "b": [2]})
    assert blame(tie).agent is None and blame(tie).steps == ()
    assert blame(tie, tie="first").agent == "a"
    picks = {blame(tie, tie="random", rng=np.random.default_rng(s)).agent for s in range(20)}
    assert picks == {"a", "b"}
    with pytest.raises(LangPZError, match="rng="):
        blame(tie, tie="random")
    with pytest.raises(LangPZError, match="choose one of"):
        blame(tie, tie="lowest")  # type: ignore[arg-type]


def test_score_report_window_and_tolerance():
    r = report({"a": 0.5, "b": -1.0}, {"b": [6]})
    assert score_report(r, "b", [3, 4])["agent_hit"] and not score_report(r, "b", [3, 4])["step_hit"]
    assert score_report(r, "b", [3, 4], tolerance=2)["joint_hit"]
    s = score_report(r, "a", [6])
    assert not s["agent_hit"] and s["step_hit"] and not s["joint_hit"]


def test_chance_step_hit_is_the_window_fraction():
    steps = list(range(10))
    assert chance_step_hit(steps, [3, 4]) == pytest.approx(2 / 10)
    assert chance_step_hit(steps, [3, 4], tolerance=1) == pytest.approx(4 / 10)
    assert chance_step_hit(steps, [0], tolerance=2) == pytest.approx(3 / 10)  # clipped at the start
    with pytest.raises(LangPZError, match="no faulty step"):
        chance_step_hit(steps, [])


def test_wilson_interval_contains_the_rate_and_narrows():
    for hits, n in ((0, 10), (3, 10), (10, 10), (30, 100)):
        lo, hi = wilson_interval(hits, n)
        assert 0.0 <= lo <= hits / n <= hi <= 1.0
    assert np.subtract(*wilson_interval(30, 100)[::-1]) < np.subtract(*wilson_interval(3, 10)[::-1])


def test_random_critic_scores_near_chance():
    traj = Trajectory(episode=0, seed=0)
    agents = [f"p{i}" for i in range(5)]
    for t in range(10):
        traj.steps += [AgentStep(0, t, a, "o", "up", "up", None, 0.0) for a in agents]
    critic, n = RandomCritic(seed=1), 1000
    scores = [score_report(critic.assess(traj), "p2", [3, 4]) for _ in range(n)]
    agent_rate = sum(s["agent_hit"] for s in scores) / n
    step_rate = sum(s["step_hit"] for s in scores) / n
    lo, hi = wilson_interval(round(agent_rate * n), n)
    assert lo <= 1 / 5 <= hi  # indistinguishable from the analytic chance
    lo, hi = wilson_interval(round(step_rate * n), n)
    assert lo <= chance_step_hit(range(10), [3, 4]) <= hi
    assert all(len(s["tied"]) == 1 for s in scores)  # distinct credits: never a tie


# -- fault injection -----------------------------------------------------------------------


def test_critic_that_finds_the_faulty_agent_scores_one(tmp_path):
    critic = CentralCritic(ScriptedBackend(stay_blamer))
    out = tmp_path / "cases.jsonl"
    lines: list[str] = []
    s = run_fault_benchmark(PISTONBALL, critic, cases=4, env_kwargs=PB_KW, out=out, progress=lines.append)
    assert (s.cases, s.agent_acc, s.step_acc, s.joint_acc) == (4, 1.0, 1.0, 1.0)
    assert s.critic_failures == 0 and len(lines) == 4
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(records) == 4
    for r in records:
        assert r["critic"]["blamed"] == r["faulty_agent"]
        assert set(r["faulty_steps"]) <= set(r["replaced_steps"]) and r["faulty_actions"] == ["stay", "stay"]
        assert r["chance_agent"] == pytest.approx(0.2) and 0 < r["chance_step"] <= 1
    assert len({r["faulty_agent"] for r in records} | {r["replaced_steps"][0] for r in records}) > 2


def test_critic_that_blames_another_agent_scores_zero():
    s = run_fault_benchmark(PISTONBALL, CentralCritic(ScriptedBackend(other_blamer)), cases=3, env_kwargs=PB_KW)
    assert s.agent_acc == 0.0 and s.joint_acc == 0.0


def test_uniform_credits_are_ties_and_misses_by_default():
    s = run_fault_benchmark(PISTONBALL, CentralCritic(ScriptedBackend(flat)), cases=3, env_kwargs=PB_KW)
    assert s.ties == 3 and s.agent_acc == 0.0 and s.step_acc == 0.0


def test_a_failing_critic_is_a_counted_miss():
    s = run_fault_benchmark(PISTONBALL, CentralCritic(ScriptedBackend(lambda r: "not json"), max_attempts=1),
                            cases=2, env_kwargs=PB_KW)
    assert s.critic_failures == 2 and s.agent_acc == 0.0 and s.cases == 2


def test_harmful_fault_plays_the_opposite_move(tmp_path):
    out = tmp_path / "h.jsonl"
    run_fault_benchmark(PISTONBALL, RandomCritic(0), cases=3, fault="harmful", env_kwargs=PB_KW, out=out)
    for r in map(json.loads, out.read_text().splitlines()):
        opposite = {"up": "down", "down": "up"}
        assert r["faulty_actions"] == [opposite[a] for a in r["base_actions"]]


def test_fault_benchmark_rejects_bad_arguments():
    with pytest.raises(InvalidKwargError, match="cases"):
        run_fault_benchmark(PISTONBALL, RandomCritic(), cases=0)
    with pytest.raises(InvalidKwargError, match="--fault-action"):
        run_fault_benchmark("classic/rps-v0", RandomCritic(), fault="harmful")
    with pytest.raises(InvalidKwargError, match="single-agent"):
        run_fault_benchmark("toy_text/frozen_lake-v0", RandomCritic())


def test_summarise_counts_from_records():
    rec = {"chance_agent": 0.5, "chance_step": 0.25,
           "critic": {"agent_hit": True, "step_hit": False, "joint_hit": False, "tied": ["a"], "error": None},
           "random_critic": {"agent_hit": False, "step_hit": True, "joint_hit": False, "tied": ["b"], "error": None}}
    s = summarise("x", [rec, {**rec, "critic": {**rec["critic"], "agent_hit": False, "error": "E"}}], skipped=1)
    assert (s.cases, s.agent_acc, s.random_step_acc, s.critic_failures, s.skipped) == (2, 0.5, 1.0, 1, 1)


# -- Who&When ------------------------------------------------------------------------------


def test_whowhen_reader_reports_every_malformed_file():
    data = read_whowhen(WHOWHEN)
    assert sorted(c.name for c in data.cases) == ["good_algorithm_style.json", "good_handcrafted_style.json"]
    reasons = {m.name: m.reason for m in data.malformed}
    assert set(reasons) == {"bad_not_json.json", "bad_missing_key.json", "bad_step_out_of_range.json",
                            "bad_unknown_agent.json"}
    assert "not JSON" in reasons["bad_not_json.json"]
    assert "mistake_step" in reasons["bad_missing_key.json"]
    assert "outside history" in reasons["bad_step_out_of_range.json"]
    assert "'Verifier' never speaks" in reasons["bad_unknown_agent.json"]
    with pytest.raises(LangPZError, match="does not exist"):
        read_whowhen(WHOWHEN / "missing")


def test_whowhen_case_to_trajectory():
    case = next(c for c in read_whowhen(WHOWHEN).cases if c.name == "good_handcrafted_style.json")
    assert case.mistake_agent == "WebSurfer" and case.mistake_step == 3
    traj = to_trajectory(case, 7, max_chars=60)
    assert traj.agents == ["human", "Orchestrator", "WebSurfer"]  # "(thought)" notes dropped
    assert [s.step for s in traj.steps] == list(range(6)) and traj.episode == 7
    assert traj.team_return == pytest.approx(-1.0)
    assert all(len(s.observation) <= 60 for s in traj.steps)
    assert traj.states[3].startswith("WebSurfer: I opened") and traj.states[3].endswith("from 1850.")
    long = "word " * 100 + "THE END"
    clipped = clip_message(long, 80)
    assert len(clipped) == 80 and clipped.endswith("THE END") and " ... " in clipped


def test_whowhen_scripted_critic_that_knows_the_answer_scores_one(tmp_path):
    data = read_whowhen(WHOWHEN)
    truth = {c.messages[c.mistake_step][1][:30]: (c.mistake_agent, c.mistake_step) for c in data.cases}

    def oracle(req: GenerationRequest) -> str:
        p = prompt_of(req).split("Now the real episode:")[-1]
        agent, step = next(v for k, v in truth.items() if " ".join(k.split()) in p)
        agents = re.search(r"Agents: (.*)\.", p).group(1).split(", ")
        return credit_reply({a: (-1.0 if a == agent else 0.5) for a in agents}, {agent: [step]})

    out = tmp_path / "ww.jsonl"
    s, malformed = run_whowhen_benchmark(WHOWHEN, CentralCritic(ScriptedBackend(oracle)), out=out)
    assert (s.cases, s.agent_acc, s.step_acc, s.skipped, len(malformed)) == (2, 1.0, 1.0, 4, 4)
    assert 0 < s.chance_agent_acc < 1 and 0 < s.chance_step_acc < 1
    assert len(out.read_text().splitlines()) == 2


# -- CLI -----------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_runs_and_writes_results(tmp_path, monkeypatch):
    import lang_pz.backends

    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec: ScriptedBackend(stay_blamer))
    out = tmp_path / "res"
    res = runner.invoke(app, ["eval-critic", "--env", PISTONBALL, "--kw", "n_pistons=5", "--kw", "hold=1",
                              "--cases", "2", "--whowhen", str(WHOWHEN), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "agent acc" in res.output and PISTONBALL in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert [s["cases"] for s in summary["summaries"]] == [2, 2]
    assert summary["summaries"][0]["agent_acc"] == 1.0
    assert (out / "whowhen.jsonl").exists() and len(list(out.glob("*pistonball*.jsonl"))) == 1


def test_cli_refuses_used_out_and_bad_arguments(tmp_path):
    (tmp_path / "old.txt").write_text("x")
    res = runner.invoke(app, ["eval-critic", "--env", PISTONBALL, "--out", str(tmp_path)])
    assert res.exit_code == 2 and "already exists" in res.output
    res = runner.invoke(app, ["eval-critic", "--out", str(tmp_path / "new")])
    assert res.exit_code == 2 and "--env" in res.output and "--whowhen" in res.output
    res = runner.invoke(app, ["eval-critic", "--env", PISTONBALL, "--fault", "idel", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "'idle'" in res.output
    res = runner.invoke(app, ["eval-critic", "--whowhen", str(tmp_path / "nope"), "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "not a folder" in res.output
    res = runner.invoke(app, ["eval-critic", "--env", "butterfly/pistonbal-v0", "--backend", "nope",
                              "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "butterfly/pistonball-v0" in res.output
    assert not (tmp_path / "n").exists()


# -- the real embedded model ---------------------------------------------------------------


@pytest.mark.integration
def test_embedded_critic_on_pistonball_faults(embedded, tmp_path):
    out = tmp_path / "cases.jsonl"
    s = run_fault_benchmark(PISTONBALL, CentralCritic(embedded), cases=2, env_kwargs=PB_KW, out=out)
    assert s.cases + s.skipped == 2 and s.cases >= 1
    for value in (s.agent_acc, s.step_acc, s.random_agent_acc, s.chance_step_acc):
        assert 0.0 <= value <= 1.0
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(records) == s.cases
    for r in records:
        c = r["critic"]
        assert c["error"] is not None or set(c["credits"]) == {f"piston_{i}" for i in range(5)}
        assert c["blamed"] is None or c["blamed"] in c["credits"]


# -- Overcooked and the math task environments ------------------------------------------------

OVERCOOKED = "overcooked/cramped_room-v0"
OC_KW = {"actions": "skills", "horizon": 38}
GSM8K = "tasks/gsm8k-v0"


def divergence_blamer(reference: dict[str, dict[int, str]]):
    """A scripted critic that knows the unfaulted episode (``reference``: agent -> step ->
    action, as the critic is shown it) and blames the agent whose action first departs from
    it, citing that step."""

    def reply(req: GenerationRequest) -> str:
        acts = acting(prompt_of(req))
        first = min((t, a) for a, s in acts.items() for t, x in s.items() if reference[a].get(t) != x)
        t, agent = first
        return credit_reply({a: (-1.0 if a == agent else 0.5) for a in acts}, {agent: [t]})

    return reply


def shown(traj: Trajectory) -> dict[str, dict[int, str]]:
    from lang_pz.critics.base import shown_action

    out: dict[str, dict[int, str]] = {}
    for s in traj.steps:
        out.setdefault(s.agent, {})[s.step] = shown_action(s)
    return out


@pytest.fixture(scope="module")
def overcooked_clean():
    pytest.importorskip("overcooked_ai_py")
    import lang_pz
    from lang_pz.evaluation.faults import base_factory
    from lang_pz.rollout import rollout

    env = lang_pz.make(OVERCOOKED, **OC_KW)
    make = base_factory("greedy", OVERCOOKED)
    return rollout(env, {a: make(env, a, 0) for a in env.possible_agents}, seed=0)


@pytest.mark.parametrize("fault", ["idle", "harmful"])
def test_overcooked_faults_have_true_labels_and_an_oracle_critic_scores_one(overcooked_clean, fault, tmp_path):
    assert overcooked_clean.team_return > 0  # the greedy team delivers a soup within the horizon
    reference = shown(overcooked_clean)
    critic = CentralCritic(ScriptedBackend(divergence_blamer(reference)))
    out = tmp_path / "oc.jsonl"
    s = run_fault_benchmark(OVERCOOKED, critic, cases=4, fault=fault, env_kwargs=OC_KW, out=out)
    assert (s.cases, s.agent_acc, s.step_acc, s.critic_failures) == (4, 1.0, 1.0, 0)
    assert s.settings["base"] == "greedy" and s.chance_agent_acc == pytest.approx(0.5)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    word = "wait 1" if fault == "idle" else "place on counter"
    for r in records:
        assert r["base"] == "greedy" and r["clean_team_return"] == overcooked_clean.team_return
        assert set(r["faulty_actions"]) == {word}
        assert set(r["faulty_steps"]) <= set(r["replaced_steps"])
        # a faulty step is one where the base policy chose something else than the fault
        n_differ = sum(b != f for b, f in zip(r["base_actions"], r["faulty_actions"]))
        assert len(r["faulty_steps"]) == n_differ >= 1
        assert 0 < r["chance_step"] < 0.2  # ~30 skill steps, a 2-step window
    assert len({(r["faulty_agent"], r["replaced_steps"][0]) for r in records}) > 1


def test_overcooked_require_effect_keeps_only_faults_that_cost_the_team(overcooked_clean, tmp_path):
    out = tmp_path / "oc.jsonl"
    s = run_fault_benchmark(OVERCOOKED, RandomCritic(0), cases=3, env_kwargs=OC_KW, require_effect=True, out=out)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(records) == s.cases >= 1 and s.settings["require_effect"] is True
    assert all(r["team_return"] < r["clean_team_return"] for r in records)


def gold_blamer(gold: str):
    """A scripted critic that knows the gold answer: blames the role whose reply is not the
    oracle's (solver: the gold after '####'; verifier: 'Correct.'), citing its step."""
    expected = {"solver": f"The answer is {gold}. #### {gold}", "verifier": "Correct."}

    def reply(req: GenerationRequest) -> str:
        acts = acting(prompt_of(req))
        bad = [(t, a) for a, s in acts.items() for t, x in s.items() if x != expected[a]]
        t, agent = min(bad)
        return credit_reply({a: (-1.0 if a == agent else 0.5) for a in acts}, {agent: [t]})

    return reply


def test_math_oracle_team_scores_full_reward_unfaulted():
    import lang_pz
    from lang_pz.policies import MathOracle
    from lang_pz.rollout import rollout

    for env_id in (GSM8K, "tasks/math500-v0"):
        env = lang_pz.make(env_id, source="demo")
        team = {r: MathOracle(env, r) for r in env.possible_agents}
        for seed in range(4):
            traj = rollout(env, team, seed=seed)
            assert env.score["correct"] and not env.score["changed_by_verifier"]
            assert traj.returns == {"solver": 1.0, "verifier": 1.0}
            assert all(s.parse_error is None for s in traj.steps)
    with pytest.raises(LangPZError, match="math task environment"):
        MathOracle(lang_pz.make(PISTONBALL, n_pistons=5), "piston_0")
    with pytest.raises(LangPZError, match="role must be one of"):
        MathOracle(lang_pz.make(GSM8K, source="demo"), "finder")


@pytest.mark.parametrize("fault", ["idle", "harmful"])
def test_math_task_faults_lower_the_reward_and_an_oracle_critic_scores_one(fault, tmp_path):
    from lang_pz.tasks import demo_items

    gold = demo_items("gsm8k")[0].answer
    critic = CentralCritic(ScriptedBackend(gold_blamer(gold)))
    out = tmp_path / "t.jsonl"
    kw = {"source": "demo", "index": 0}
    s = run_fault_benchmark(GSM8K, critic, cases=6, fault=fault, env_kwargs=kw, out=out)
    assert (s.cases, s.agent_acc, s.step_acc, s.critic_failures, s.skipped) == (6, 1.0, 1.0, 0, 0)
    assert s.chance_agent_acc == pytest.approx(0.5) and s.chance_step_acc == pytest.approx(0.5)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["faulty_agent"] for r in records} == {"solver", "verifier"}
    for r in records:
        assert r["base"] == "oracle" and r["clean_team_return"] == 2.0  # 1.0 to each role
        role_step = {"solver": 0, "verifier": 1}[r["faulty_agent"]]
        assert r["faulty_steps"] == r["replaced_steps"] == [role_step]
        assert r["base_actions"] == [f"The answer is {gold}.\n#### {gold}" if role_step == 0 else "Correct."]
        assert r["faulty_actions"] == ["" if fault == "idle" else "The answer is 0.\n#### 0"]
        # harmful: a wrong answer from either role costs the team; idle: only the solver's silence
        lowered = fault == "harmful" or r["faulty_agent"] == "solver"
        assert (r["team_return"] < r["clean_team_return"]) is lowered


def test_free_text_and_family_mismatches_are_refused():
    with pytest.raises(InvalidKwargError, match="free-text"):
        run_fault_benchmark(GSM8K, RandomCritic(), fault="random", env_kwargs={"source": "demo"})
    with pytest.raises(InvalidKwargError, match="free-text"):
        run_fault_benchmark(GSM8K, RandomCritic(), base="random", env_kwargs={"source": "demo"})
    with pytest.raises(InvalidKwargError, match="overcooked/<layout>-v0.*--base heuristic"):
        run_fault_benchmark(PISTONBALL, RandomCritic(), base="greedy")
    with pytest.raises(InvalidKwargError, match="tasks/gsm8k-v0"):
        run_fault_benchmark(OVERCOOKED, RandomCritic(), base="oracle")
    with pytest.raises(InvalidKwargError, match="choose one of heuristic, greedy, random, oracle"):
        run_fault_benchmark(PISTONBALL, RandomCritic(), base="smart")


def test_cli_eval_critic_on_overcooked_and_gsm8k(tmp_path, monkeypatch):
    pytest.importorskip("overcooked_ai_py")
    import lang_pz.backends
    from lang_pz.tasks import demo_items

    gold = demo_items("gsm8k")[0].answer
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec: ScriptedBackend(gold_blamer(gold)))
    res = runner.invoke(app, ["eval-critic", "--env", GSM8K, "--kw", "source=demo", "--kw", "index=0",
                              "--fault", "harmful", "--cases", "2", "--out", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())["summaries"][0]
    assert summary["agent_acc"] == 1.0 and summary["settings"]["base"] == "oracle"
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec: ScriptedBackend(flat))
    res = runner.invoke(app, ["eval-critic", "--env", OVERCOOKED, "--kw", "actions=skills", "--kw", "horizon=38",
                              "--base", "greedy", "--cases", "1", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["summaries"][0]
    assert summary["cases"] == 1 and summary["ties"] == 1 and summary["settings"]["base"] == "greedy"
    res = runner.invoke(app, ["eval-critic", "--env", OVERCOOKED, "--base", "gredy", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "did you mean 'greedy'" in res.output
    res = runner.invoke(app, ["eval-critic", "--env", GSM8K, "--kw", "source=demo", "--fault", "random",
                              "--out", str(tmp_path / "n2")])
    assert res.exit_code == 2 and "free-text" in res.output
    help_text = " ".join(runner.invoke(app, ["eval-critic", "--help"]).output.split())
    assert "--base" in help_text and "Overcooked greedy" in help_text
