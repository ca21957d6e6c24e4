"""The fault-injection benchmark: FaultyPolicy (idle, harmful, random, misplay), SplicedPolicy,
case drawing (only faults that hurt the team), the runner on Pistonball, Overcooked and GSM8K,
and the eval-critic CLI.

Unit tests use :class:`ScriptedBackend` (a scripted LLM stand-in) as the critic's model: a
script that reads the prompt's action lines and blames the agent that played ``stay`` (the
Pistonball heuristic never does, so only an *idle*-faulty agent does) must score 1.0 on the
idle fault; one that blames someone else must score 0. The default ``misplay`` fault must not
be given away that way. The ``integration`` test runs the real embedded model and checks only
the structure of the results (a 135M model's accuracy is noise).
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from lang_pz.backends.base import GenerationRequest
from lang_pz.cli import app
from lang_pz.critics import CentralCritic, Credit, CriticReport
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.evaluation.baselines import RandomCritic
from lang_pz.evaluation.bases import base_factory
from lang_pz.evaluation.cases import fault_truth
from lang_pz.evaluation.faults import CriticSpec, run_fault_benchmark
from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.faulty import FaultyPolicy, SplicedPolicy
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

PISTONBALL = "butterfly/pistonball-v0"
PB_KW = {"n_pistons": 5, "hold": 1, "max_cycles": 40}
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
            for part in line[len("  actions: ") :].split("; "):
                agent, _, act = part.partition(" ")
                out.setdefault(agent, {})[step] = act
    return out


def credit_reply(credits: dict[str, float], steps: dict[str, list[int]]) -> str:
    return json.dumps(
        {a: {"credit": c, "steps": steps.get(a, [])[:3], "explanation": "scripted"} for a, c in credits.items()}
    )


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
    return credit_reply(dict.fromkeys(acts, 0.0), {a: [min(s)] for a, s in acts.items()})


def report(credits: dict[str, float], steps: dict[str, list[int]] | None = None) -> CriticReport:
    steps = steps or {}
    return CriticReport(
        episode=0,
        team_return=0.0,
        credits={a: Credit(agent=a, credit=c, explanation="x", steps=steps.get(a, [])) for a, c in credits.items()},
    )


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
    with pytest.raises(LangPZError, match="choose one of lag, misplay, harmful, idle, random"):
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


def test_misplay_plays_only_the_repertoire_and_never_the_base_action():
    p = FaultyPolicy(Counting(["up", "down", "up"]), "misplay", [0, 1, 2], action=["down", "up"], seed=1)
    assert [p("o", LEGAL) for _ in range(3)] == ["down", "up", "down"]  # the only other word each time
    assert p.faulty_decisions == [0, 1, 2]
    # a repertoire word that is not legal now is never played; with no other word: the base action
    q = FaultyPolicy(Counting(["up"]), "misplay", [0], action=["up", "stay"], seed=0)
    assert q("o", {"legal_actions": ["down", "up"]}) == "up" and q.replaced_decisions == [0] and q.faulty_decisions == []
    r1 = FaultyPolicy(Counting(["a"]), "misplay", range(30), action=["a", "b", "c"], seed=4)
    r2 = FaultyPolicy(Counting(["a"]), "misplay", range(30), action=["a", "b", "c"], seed=4)
    seq = [r1("o") for _ in range(30)]
    assert seq == [r2("o") for _ in range(30)] and set(seq) == {"b", "c"}
    with pytest.raises(LangPZError, match="repertoire"):
        FaultyPolicy(Counting(), "misplay", [0])
    with pytest.raises(LangPZError, match="repertoire"):
        FaultyPolicy(Counting(), "misplay", [0], action="up")


def test_lag_plays_the_base_actions_late():
    p = FaultyPolicy(Counting(["d", "d", "u", "u", "u", "d"]), "lag", [2, 3], seed=0)
    assert [p("o") for _ in range(6)] == ["d", "d", "d", "u", "u", "d"]  # the switch to u comes one late
    assert p.faulty_decisions == [2]
    q = FaultyPolicy(Counting(["a", "b", "c", "d"]), "lag", [0, 3], action=2)
    assert [q("o") for _ in range(4)] == ["a", "b", "c", "b"]  # decision 0 has no earlier one: its own
    with pytest.raises(LangPZError, match="lag in decisions"):
        FaultyPolicy(Counting(), "lag", [0], action=0)


def test_spliced_policy_plays_the_other_at_chosen_decisions_and_keeps_both_in_step():
    own, other = Counting(["a"]), Counting(["x", "y"])
    p = SplicedPolicy(own, other, [1, 3])
    assert [p("o") for _ in range(4)] == ["a", "y", "a", "y"]
    assert own.calls == other.calls == 4  # both asked at every decision
    p.reset(0)
    assert p("o") == "a"
    with pytest.raises(LangPZError, match=">= 0"):
        SplicedPolicy(own, other, [-2])


# -- fault injection -----------------------------------------------------------------------


def test_critic_that_finds_the_idle_agent_scores_one(tmp_path):
    critic = CentralCritic(ScriptedBackend(stay_blamer))
    out = tmp_path / "cases.jsonl"
    lines: list[str] = []
    [s] = run_fault_benchmark(PISTONBALL, critic, cases=4, fault="idle", env_kwargs=PB_KW, out=out, progress=lines.append)
    assert s.critic_failures == 0 and len(lines) == s.drawn >= 4
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(records) == s.cases == 4
    # stratified draw: four different faulty pistons; a long episode (the ball stuck) may not
    # show the idle steps in the prompt's step budget, and then the critic cannot see the stay
    shown = [r for r in records if r["critics"]["central_credit"]["visible"]]
    assert len({r["truth_agent"] for r in records}) == 4 and len(shown) >= 3
    assert s.agent.value == s.joint.value == len(shown) / 4
    for r in shown:
        assert r["critics"]["central_credit"]["blamed"] == r["truth_agent"]
    for r in records:
        assert set(r["faulty_steps"]) <= set(r["replaced_steps"]) and r["faulty_actions"] == ["stay", "stay"]
        assert r["chance_agent"] == pytest.approx(0.2) and 0 < r["chance_step"] <= 1
    assert len({r["truth_agent"] for r in records} | {r["replaced_steps"][0] for r in records}) > 2


def test_idle_fault_is_given_away_by_action_counts_and_the_default_fault_is_not():
    """Regression: with the idle fault, "blame whoever played stay" (the unusual-actions rule)
    scored 20/20 with no credit assignment at all. The default fault (misplay) plays the team's
    own action words, so neither that rule nor the stay-blaming critic finds the faulty agent."""
    critic = CentralCritic(ScriptedBackend(stay_blamer))
    [idle] = run_fault_benchmark(PISTONBALL, critic, cases=8, fault="idle", env_kwargs=PB_KW, stratify=False)
    assert idle.baselines["unusual_actions"]["agent"].value == 1.0 and idle.agent.value == 1.0
    assert idle.leakage["worst_rule"] == "unusual_actions" and idle.leakage["p_value"] < 1e-3
    [mis] = run_fault_benchmark(PISTONBALL, critic, cases=8, env_kwargs=PB_KW)
    assert mis.settings["fault"] == "misplay"
    assert mis.agent.value == 0.0 and mis.ties == 8  # nobody plays stay: uniform credits, a tie
    # the action histograms do not single the faulty agent out (the misplay's two extra action
    # changes do: action_switches is reported, see lang_pz.evaluation.faults)
    assert mis.baselines["unusual_actions"]["agent"].value < 0.5
    assert mis.leakage["rules"]["histogram_outlier"]["p_value"] > 0.05


def test_only_faults_that_hurt_the_team_count_and_drops_are_reported(tmp_path):
    """Regression: by default a fault that left the team return unchanged (or raised it) was a
    case; now only faults lowering it by at least min_effect of the unfaulted return count."""
    out = tmp_path / "c.jsonl"
    [s] = run_fault_benchmark(PISTONBALL, RandomCritic(0), cases=6, fault="idle", env_kwargs=PB_KW, out=out)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert s.settings["min_effect"] == 0.02 and s.drawn == s.cases + s.dropped and s.cases == 6
    for r in records:
        assert r["effect"] == pytest.approx(r["clean_team_return"] - r["team_return"], abs=1e-3)
        assert r["effect"] > 0 and r["effect"] >= 0.02 * abs(r["clean_team_return"])
    # without the filter, idle faults that cost nothing are kept: the filter is what removes them
    out2 = tmp_path / "all.jsonl"
    run_fault_benchmark(PISTONBALL, RandomCritic(0), cases=6, fault="idle", env_kwargs=PB_KW, min_effect=None, out=out2)
    assert any(json.loads(x)["effect"] <= 0 for x in out2.read_text().splitlines())


def test_seeds_without_a_hurting_fault_are_dropped_and_counted():
    # an impossible threshold: no fault lowers the return by 200 % of it
    [s] = run_fault_benchmark(PISTONBALL, RandomCritic(0), cases=1, env_kwargs=PB_KW, min_effect=2.0, max_seeds=2)
    assert (s.cases, s.drawn, s.dropped) == (0, 2, 2)


def test_critic_that_blames_another_agent_scores_zero():
    [s] = run_fault_benchmark(
        PISTONBALL, CentralCritic(ScriptedBackend(other_blamer)), cases=3, fault="idle", env_kwargs=PB_KW
    )
    assert s.agent.value == 0.0 and s.joint.value == 0.0


def test_uniform_credits_are_strict_misses_and_one_in_n_at_random():
    [s] = run_fault_benchmark(PISTONBALL, CentralCritic(ScriptedBackend(flat)), cases=3, env_kwargs=PB_KW)
    assert s.ties == 3 and s.agent.value == 0.0 and s.step.value == 0.0
    assert s.agent_expected == pytest.approx(1 / 5)


def test_a_failing_critic_is_a_counted_miss():
    [s] = run_fault_benchmark(
        PISTONBALL, CentralCritic(ScriptedBackend(lambda r: "not json"), max_attempts=1), cases=2, env_kwargs=PB_KW
    )
    assert s.critic_failures == 2 and s.agent.value == 0.0 and s.cases == 2


def test_harmful_fault_plays_the_opposite_move(tmp_path):
    out = tmp_path / "h.jsonl"
    run_fault_benchmark(PISTONBALL, RandomCritic(0), cases=3, fault="harmful", env_kwargs=PB_KW, out=out)
    for r in map(json.loads, out.read_text().splitlines()):
        opposite = {"up": "down", "down": "up"}
        assert r["faulty_actions"] == [opposite[a] for a in r["base_actions"]]


def test_several_critics_read_the_same_cases(tmp_path):
    out = tmp_path / "two.jsonl"
    specs = [CriticSpec("stay", CentralCritic(ScriptedBackend(stay_blamer))), CriticSpec("random", RandomCritic(1))]
    a, b = run_fault_benchmark(PISTONBALL, specs, cases=3, fault="idle", env_kwargs=PB_KW, out=out, stratify=False)
    assert (a.critic, b.critic, a.cases, b.cases) == ("stay", "random", 3, 3) and a.agent.value == 1.0
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(records) == 3 and all(set(r["critics"]) == {"stay", "random"} for r in records)
    assert set(records[0]["baselines"]) == {
        "random",
        "unusual_actions",
        "histogram_outlier",
        "action_switches",
        "first_speaker",
        "last_speaker",
        "lowest_return",
    }
    with pytest.raises(InvalidKwargError, match="names must differ"):
        run_fault_benchmark(PISTONBALL, [specs[0], specs[0]], cases=1, env_kwargs=PB_KW)


def test_fault_benchmark_rejects_bad_arguments():
    with pytest.raises(InvalidKwargError, match="cases"):
        run_fault_benchmark(PISTONBALL, RandomCritic(), cases=0)
    with pytest.raises(InvalidKwargError, match="--fault-action"):
        run_fault_benchmark("classic/rps-v0", RandomCritic(), fault="harmful")
    with pytest.raises(InvalidKwargError, match="single-agent"):
        run_fault_benchmark("toy_text/frozen_lake-v0", RandomCritic())
    with pytest.raises(InvalidKwargError, match="unknown fault .lazy."):
        run_fault_benchmark(PISTONBALL, RandomCritic(), fault="lazy")


# -- CLI -----------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_runs_several_critic_modes_and_writes_results(tmp_path, monkeypatch):
    import lang_pz.backends

    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(stay_blamer))
    out = tmp_path / "res"
    res = runner.invoke(
        app,
        [
            "eval-critic",
            "--env",
            PISTONBALL,
            "--kw",
            "n_pistons=5",
            "--kw",
            "hold=1",
            "--kw",
            "max_cycles=40",
            "--fault",
            "idle",
            "--cases",
            "2",
            "--critic-mode",
            "central_credit",
            "--critic-mode",
            "counterfactual",
            "--evidence",
            "reference",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "agent acc" in res.output and PISTONBALL in res.output and "unusual_actions" in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert [(s["critic"], s["cases"]) for s in summary["summaries"]] == [("central_credit", 2), ("counterfactual", 2)]
    # the stay-blamer finds the idle piston whenever its idle steps are shown in the prompt
    assert summary["summaries"][0]["agent"]["value"] == summary["summaries"][0]["visible"] > 0
    assert summary["summaries"][1]["settings"]["critics"]["counterfactual"]["evidence"] == ["reference"]
    assert len(list(out.glob("*pistonball*.jsonl"))) == 1


def test_cli_refuses_used_out_and_bad_arguments(tmp_path):
    (tmp_path / "old.txt").write_text("x")
    res = runner.invoke(app, ["eval-critic", "--env", PISTONBALL, "--out", str(tmp_path)])
    assert res.exit_code == 2 and "already exists" in res.output
    res = runner.invoke(app, ["eval-critic", "--out", str(tmp_path / "new")])
    assert res.exit_code == 2 and "--env" in res.output and "--whowhen" in res.output
    res = runner.invoke(app, ["eval-critic", "--env", PISTONBALL, "--fault", "idel", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "'idle'" in res.output
    res = runner.invoke(
        app, ["eval-critic", "--env", PISTONBALL, "--critic-mode", "counterfactal", "--out", str(tmp_path / "n")]
    )
    assert res.exit_code == 2 and "'counterfactual'" in res.output
    res = runner.invoke(app, ["eval-critic", "--whowhen", str(tmp_path / "nope"), "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "not a folder" in res.output
    res = runner.invoke(
        app, ["eval-critic", "--env", "butterfly/pistonbal-v0", "--backend", "nope", "--out", str(tmp_path / "n")]
    )
    assert res.exit_code == 2 and "butterfly/pistonball-v0" in res.output
    # ties are never broken toward the first speaker: the option is gone
    res = runner.invoke(app, ["eval-critic", "--env", PISTONBALL, "--tie", "first", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "--tie" in res.output
    assert not (tmp_path / "n").exists()


# -- the real embedded model ---------------------------------------------------------------


@pytest.mark.integration
def test_embedded_critic_on_pistonball_faults(embedded, tmp_path):
    out = tmp_path / "cases.jsonl"
    # 12 cycles: the model reads a 60-step episode (the prompt, not the verdict, is what this checks)
    [s] = run_fault_benchmark(PISTONBALL, CentralCritic(embedded), cases=2, env_kwargs={**PB_KW, "max_cycles": 12}, out=out)
    assert s.cases == 2
    for value in (s.agent.value, s.step.value, s.baselines["random"]["agent"].value, s.chance_step):
        assert 0.0 <= value <= 1.0
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(records) == s.cases
    for r in records:
        c = r["critics"]["central_credit"]
        assert c["error"] is not None or set(c["credits"]) == {f"piston_{i}" for i in range(5)}
        assert c["blamed"] is None or c["blamed"] in c["credits"]


# -- Overcooked and the math task environments ------------------------------------------------

OVERCOOKED = "overcooked/cramped_room-v0"
OC_KW = {"actions": "macro", "horizon": 38}
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
    [s] = run_fault_benchmark(OVERCOOKED, critic, cases=4, fault=fault, env_kwargs=OC_KW, out=out)
    assert (s.cases, s.agent.value, s.step.value, s.critic_failures) == (4, 1.0, 1.0, 0)
    assert s.settings["base"] == "greedy" and s.chance_agent == pytest.approx(0.5)
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
        assert r["team_return"] < r["clean_team_return"]  # it cost the team (a soup)
    assert len({(r["truth_agent"], r["replaced_steps"][0]) for r in records}) > 1


def test_overcooked_misplay_plays_the_teams_own_skills(overcooked_clean, tmp_path):
    from lang_pz.critics.base import shown_action

    out = tmp_path / "oc.jsonl"
    [s] = run_fault_benchmark(OVERCOOKED, RandomCritic(0), cases=3, env_kwargs=OC_KW, out=out)
    assert s.settings["fault"] == "misplay" and s.cases == 3
    repertoire = {shown_action(x) for x in overcooked_clean.steps}
    for r in map(json.loads, out.read_text().splitlines()):
        assert set(r["faulty_actions"]) <= repertoire and r["effect"] > 0


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
    from lang_pz.policies.oracle import MathOracle
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
    from lang_pz.tasks.datasets import demo_items

    gold = demo_items("gsm8k")[0].answer
    critic = CentralCritic(ScriptedBackend(gold_blamer(gold)))
    out = tmp_path / "t.jsonl"
    kw = {"source": "demo", "index": 0}
    # not stratified: an idle (empty) verifier leaves the solver's right answer, so only the
    # solver's idle fault hurts, and a stratified draw would drop every verifier seed
    [s] = run_fault_benchmark(GSM8K, critic, cases=6, fault=fault, env_kwargs=kw, out=out, stratify=False)
    assert (s.cases, s.agent.value, s.step.value, s.critic_failures, s.dropped) == (6, 1.0, 1.0, 0, 0)
    assert s.chance_agent == pytest.approx(0.5) and s.chance_step == pytest.approx(0.5)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    # an idle verifier keeps the right answer (no effect): only the silent solver hurts the team
    assert {r["truth_agent"] for r in records} == ({"solver"} if fault == "idle" else {"solver", "verifier"})
    for r in records:
        assert r["base"] == "oracle" and r["clean_team_return"] == 2.0  # 1.0 to each role
        role_step = {"solver": 0, "verifier": 1}[r["truth_agent"]]
        assert r["faulty_steps"] == r["replaced_steps"] == [role_step]
        assert r["base_actions"] == [f"The answer is {gold}.\n#### {gold}" if role_step == 0 else "Correct."]
        assert r["faulty_actions"] == ["" if fault == "idle" else "The answer is 0.\n#### 0"]
        assert r["team_return"] == 0.0


def test_free_text_and_family_mismatches_are_refused():
    with pytest.raises(InvalidKwargError, match="free-text"):
        run_fault_benchmark(GSM8K, RandomCritic(), fault="random", env_kwargs={"source": "demo"})
    with pytest.raises(InvalidKwargError, match="free-text"):
        run_fault_benchmark(GSM8K, RandomCritic(), base="random", env_kwargs={"source": "demo"})
    with pytest.raises(InvalidKwargError, match="free-text"):
        run_fault_benchmark(GSM8K, RandomCritic(), fault="misplay", env_kwargs={"source": "demo"})
    with pytest.raises(InvalidKwargError, match="overcooked/<layout>-v0.*--base heuristic"):
        run_fault_benchmark(PISTONBALL, RandomCritic(), base="greedy")
    with pytest.raises(InvalidKwargError, match="tasks/gsm8k-v0"):
        run_fault_benchmark(OVERCOOKED, RandomCritic(), base="oracle")
    with pytest.raises(InvalidKwargError, match="choose one of heuristic, greedy, random, oracle"):
        run_fault_benchmark(PISTONBALL, RandomCritic(), base="smart")


def test_cli_eval_critic_on_overcooked_and_gsm8k(tmp_path, monkeypatch):
    pytest.importorskip("overcooked_ai_py")
    import lang_pz.backends
    from lang_pz.tasks.datasets import demo_items

    gold = demo_items("gsm8k")[0].answer
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(gold_blamer(gold)))
    res = runner.invoke(
        app,
        [
            "eval-critic",
            "--env",
            GSM8K,
            "--kw",
            "source=demo",
            "--kw",
            "index=0",
            "--fault",
            "harmful",
            "--cases",
            "2",
            "--out",
            str(tmp_path / "t"),
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())["summaries"][0]
    assert summary["agent"]["value"] == 1.0 and summary["settings"]["base"] == "oracle"
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(flat))
    res = runner.invoke(
        app,
        [
            "eval-critic",
            "--env",
            OVERCOOKED,
            "--kw",
            "actions=macro",
            "--kw",
            "horizon=38",
            "--base",
            "greedy",
            "--cases",
            "1",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["summaries"][0]
    assert summary["cases"] == 1 and summary["ties"] == 1 and summary["settings"]["base"] == "greedy"
    res = runner.invoke(app, ["eval-critic", "--env", OVERCOOKED, "--base", "gredy", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "did you mean 'greedy'" in res.output
    res = runner.invoke(
        app, ["eval-critic", "--env", GSM8K, "--kw", "source=demo", "--fault", "random", "--out", str(tmp_path / "n2")]
    )
    assert res.exit_code == 2 and "free-text" in res.output
    help_text = " ".join(runner.invoke(app, ["eval-critic", "--help"]).output.split())
    assert "--base" in help_text and "Overcooked greedy" in help_text
