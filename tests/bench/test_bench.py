"""lang_pz.bench: team specs, seeds, bootstrap intervals, resumable runs, LLM accounting, outputs,
and ``lang-pz bench``. LLM seats use ScriptedBackend (unit-level logic only)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from lang_pz.bench import EnvCase, load_config, parse_team, read_episodes, run_bench, summaries, write_results
from lang_pz.bench.config import parse_seeds
from lang_pz.bench.stats import bootstrap_interval
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.runs import write_policies
from lang_pz.test import ScriptedBackend

PB = {"n_pistons": 5, "hold": 5, "max_cycles": 50}


def pistonball_case(teams, seeds=(0, 1, 2)) -> EnvCase:
    return EnvCase(
        "butterfly/pistonball-v0", teams=[parse_team(s, n) for n, s in teams.items()], seeds=list(seeds), kwargs=PB
    )


# -- specs ------------------------------------------------------------------------------------
def test_parse_team_single_mixed_and_errors():
    t = parse_team("random")
    assert t.seat("piston_3") == "random" and t.spec == "random" and not t.uses_llm()
    m = parse_team("piston_0=llm:Always go down.;*=heuristic", name="mixed")
    assert m.seat("piston_0") == "llm:Always go down." and m.seat("piston_4") == "heuristic" and m.uses_llm()
    assert parse_team(m.spec).seats == m.seats
    with pytest.raises(InvalidKwargError, match="seat kinds"):
        parse_team("greedyy")
    with pytest.raises(InvalidKwargError, match="two seats"):
        parse_team("piston_0=random;piston_0=heuristic")
    with pytest.raises(InvalidKwargError, match="no seat for 'player_1'"):
        parse_team("player_0=greedy").seat("player_1")


def test_parse_seeds():
    assert parse_seeds("3-6") == [3, 4, 5, 6]
    assert parse_seeds("1,4") == [1, 4] and parse_seeds([7, 2]) == [7, 2] and parse_seeds(5) == [5]
    for bad in ("6-3", "a-b", [], True, [1.5]):
        with pytest.raises(InvalidKwargError):
            parse_seeds(bad)


def test_bootstrap_interval():
    from scipy.stats import bootstrap

    x = [1.0, 2.0, 4.0, 8.0, 3.0, 5.0, 0.0, 9.0]
    low, high = bootstrap_interval(x)
    assert low < np.mean(x) < high
    ref = bootstrap((np.array(x),), np.mean, n_resamples=9999, method="BCa", rng=np.random.default_rng(0))
    assert (low, high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert bootstrap_interval([3.0, 3.0, 3.0]) == (3.0, 3.0)
    assert all(math.isnan(v) for v in bootstrap_interval([1.0]))
    a, b = bootstrap_interval([0.0, 1.0])
    assert math.isfinite(a) and math.isfinite(b)


# -- running ----------------------------------------------------------------------------------
def test_bench_is_resumable_and_deterministic(tmp_path):
    case = pistonball_case({"random": "random", "heuristic": "heuristic"}, seeds=[0, 1])
    first = run_bench([case], tmp_path)
    assert len(first) == 4
    again = run_bench([pistonball_case({"random": "random", "heuristic": "heuristic"}, seeds=[0, 1, 2])], tmp_path)
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 6 and len(again) == 6  # only seed 2 was played, for both teams
    # same seed, same episode: a fresh folder replays the random team exactly
    fresh = run_bench([pistonball_case({"random": "random"}, seeds=[0, 1])], tmp_path / "fresh")
    assert [r["value"] for r in fresh] == [r["value"] for r in first if r["team"] == "random"]


def test_a_folder_reused_for_another_bench_says_so(tmp_path):
    run_bench([pistonball_case({"h": "heuristic"}, seeds=[0])], tmp_path)
    other = EnvCase("butterfly/pistonball-v0", teams=[parse_team("random")], seeds=[0], kwargs={**PB, "max_cycles": 30})
    with pytest.warns(UserWarning, match=r"also holds episodes of \['butterfly/pistonball-v0\(.*which this bench"):
        records = run_bench([other], tmp_path)
    assert [r["env"] for r in records] == [other.name]


def test_bench_redoes_a_torn_last_line_and_refuses_a_changed_team(tmp_path):
    case = pistonball_case({"h": "heuristic"}, seeds=[0, 1])
    run_bench([case], tmp_path)
    path = tmp_path / "episodes.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:20])  # killed while writing seed 1
    assert len(read_episodes(tmp_path)) == 1
    records = run_bench([case], tmp_path)
    assert sorted(r["seed"] for r in records) == [0, 1]
    with pytest.raises(InvalidKwargError, match="was run as 'heuristic'"):
        run_bench([pistonball_case({"h": "random"}, seeds=[0, 1])], tmp_path)


def test_llm_seats_are_metered_per_episode(tmp_path):
    llm = ScriptedBackend(lambda req: "down")
    case = pistonball_case({"llm + heuristic": "piston_0=llm:Always go down.;*=heuristic"}, seeds=[0, 1])
    records = run_bench([case], tmp_path, backend=llm, price_per_mtok=(1e6, 0.0))
    for r in records:
        assert r["llm_calls"] == r["steps"] > 0  # one call per piston_0 decision, no others
        assert r["prompt_tokens"] > 0 and r["cost_usd"] == pytest.approx(r["prompt_tokens"])
    assert sum(r["llm_calls"] for r in records) == len(llm.requests)
    assert all("Always go down." in (req.prompt or "") for req in llm.requests)
    row = summaries([case], records)[0]
    assert row.llm_calls == len(llm.requests) and row.episodes == 2


def test_run_policies_as_a_team(tmp_path):
    run = tmp_path / "run"
    write_policies(run / "final" / "policies", {f"piston_{i}": f"Policy of piston {i}: stay." for i in range(5)})
    llm = ScriptedBackend(lambda req: "stay")
    run_bench([pistonball_case({"trained": f"run:{run}"}, seeds=[0])], tmp_path / "out", backend=llm)
    prompts = [req.prompt for req in llm.requests]
    assert any("Policy of piston 3: stay." in p for p in prompts) and any("Policy of piston 0: stay." in p for p in prompts)
    nope = tmp_path / "nope"
    with pytest.raises(LangPZError, match=f"names {nope}, which is not a folder; .*must contain final/policies/AGENT.txt"):
        run_bench([pistonball_case({"t": f"run:{nope}"}, seeds=[0])], tmp_path / "out2", backend=llm)
    (tmp_path / "unfinished").mkdir()
    with pytest.raises(LangPZError, match=r"no policy for piston_0 \(.*unfinished has no final/policies/\)"):
        run_bench([pistonball_case({"t": f"run:{tmp_path / 'unfinished'}"}, seeds=[0])], tmp_path / "out3", backend=llm)
    with pytest.raises(LangPZError, match="names no folder; write run:RUN_DIR"):
        run_bench([pistonball_case({"t": "run:"}, seeds=[0])], tmp_path / "out4", backend=llm)


def test_objective_per_env_zero_sum_refused_and_win_rate(tmp_path):
    teams = [parse_team("player_0=constant:rock;player_1=constant:scissors", "rock vs scissors")]
    with pytest.raises(InvalidKwargError, match="zero-sum"):
        run_bench([EnvCase("classic/rps-v0", teams=teams, seeds=[0], kwargs={"max_cycles": 3})], tmp_path / "a")
    records = run_bench(
        [EnvCase("classic/rps-v0", teams=teams, seeds=[0, 1], kwargs={"max_cycles": 3}, objective="win:player_0")],
        tmp_path / "b",
    )
    assert [r["value"] for r in records] == [1.0, 1.0]


def test_seat_that_does_not_fit_the_env(tmp_path):
    with pytest.raises(InvalidKwargError, match="not Overcooked"):
        run_bench([pistonball_case({"g": "greedy"}, seeds=[0])], tmp_path)


def test_write_results(tmp_path):
    case = pistonball_case({"random": "random", "heuristic": "heuristic"}, seeds=[0, 1, 2])
    rows = summaries([case], run_bench([case], tmp_path))
    paths = write_results(rows, tmp_path)
    table = paths["md"].read_text()
    assert "| heuristic | team_return |" in table and "95 % CI" in table
    with paths["csv"].open() as f:
        got = list(csv.DictReader(f))
    assert [r["team"] for r in got] == ["random", "heuristic"] and got[1]["episodes"] == "3"
    assert json.loads(paths["json"].read_text())[1]["mean"] == pytest.approx(rows[1].mean)
    assert paths["png"].read_bytes()[:4] == b"\x89PNG"


def test_load_config(tmp_path):
    cfg = tmp_path / "bench.yaml"
    cfg.write_text(
        "backend: embedded\nenvs:\n  - id: tasks/gsm8k-v0\n    seeds: 0-1\n"
        "    teams: {oracle: oracle, zero: 'constant:#### 0'}\n"
    )
    cases, settings = load_config(cfg, data_dir="/data")
    assert settings == {"backend": "embedded"}
    assert cases[0].kwargs == {"data_dir": "/data"} and cases[0].seeds == [0, 1]
    assert cases[0].name == "tasks/gsm8k-v0"  # data_dir is not part of the label
    cfg.write_text("envs:\n  - id: tasks/gsm8k-v0\n    seeds: 0\n    teams: {a: random}\n    sedes: 1\n")
    with pytest.raises(InvalidKwargError, match="sedes"):
        load_config(cfg)


# -- CLI --------------------------------------------------------------------------------------
def test_cli_bench(tmp_path):
    from lang_pz.cli import app

    runner = CliRunner()
    args = [
        "bench",
        "--out",
        str(tmp_path),
        "--env",
        "butterfly/pistonball-v0",
        "--kw",
        "n_pistons=5",
        "--kw",
        "max_cycles=50",
        "--team",
        "random",
        "--team",
        "mix=:piston_0=constant:up;*=heuristic",
        "--seeds",
        "0-1",
    ]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "| mix | team_return |" in res.output and (tmp_path / "summary.csv").exists()
    res = runner.invoke(app, ["bench", "--out", str(tmp_path), "--env", "butterfly/pistonball-v0"])
    assert res.exit_code == 2 and "at least one --team" in res.output
    res = runner.invoke(app, ["bench", "--out", str(tmp_path), "--env", "x", "--config", "y.yaml", "--team", "random"])
    assert res.exit_code == 2 and "either --config" in res.output


def test_cli_bench_out_that_is_a_file_is_named(tmp_path):
    from lang_pz.cli import app

    f = tmp_path / "F"
    f.write_text("x")
    res = CliRunner().invoke(app, ["bench", "--out", str(f), "--env", "classic/rps-v0", "--team", "random"])
    assert res.exit_code == 2 and "Errno" not in res.output and "Traceback" not in res.output
    assert f"error: --out {f} is a file; bench writes a results folder" in res.output


@pytest.mark.parametrize(
    "env_args, word, legal",
    [
        (["--env", "butterfly/pistonball-v0", "--kw", "n_pistons=5"], "sideways", "down, stay, up"),
        (["--env", "classic/tictactoe-v0", "--objective", "win:player_1"], "sideways", "1, 2, 3"),
    ],
)
def test_cli_bench_refuses_a_constant_word_the_env_does_not_read(tmp_path, env_args, word, legal):
    from lang_pz.cli import app

    res = CliRunner().invoke(
        app,
        ["bench", "--out", str(tmp_path / "b"), *env_args, "--team", "random", "--team", f"constant:{word}", "--seeds", "0"],
    )
    assert res.exit_code == 2, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("error: "))
    assert f"'constant:{word}'" in line and f"{word!r} is not an action word" in line and legal in line
    assert not (tmp_path / "b" / "episodes.jsonl").exists()


def test_cli_bench_takes_action_words_in_any_case_and_other_forms(tmp_path):
    from lang_pz.cli import app

    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "bench",
            "--out",
            str(tmp_path / "a"),
            "--env",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=5",
            "--kw",
            "max_cycles=10",
            "--team",
            "piston_0=constant:UP;*=random",
            "--seeds",
            "0",
            "--no-plot",
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app,
        [
            "bench",
            "--out",
            str(tmp_path / "b"),
            "--env",
            "classic/tictactoe-v0",
            "--objective",
            "win:player_1",
            "--team",
            "constant:top-left",
            "--seeds",
            "0",
            "--no-plot",
        ],
    )
    assert res.exit_code == 0, res.output  # not a legal word, but the env reads it as square 1


def test_the_python_api_refuses_a_constant_word_the_env_cannot_read(tmp_path):
    teams = [parse_team("player_0=constant:rokc;player_1=constant:scissors", "typo")]
    with pytest.raises(InvalidKwargError, match=r"'rokc' is not an action word of classic/rps-v0 \(legal: "):
        run_bench(
            [EnvCase("classic/rps-v0", teams=teams, seeds=[0], kwargs={"max_cycles": 3}, objective="win:player_0")],
            tmp_path / "out",
        )
    assert not (tmp_path / "out").exists()  # refused before anything was played or written


@pytest.mark.parametrize(
    "bad, message",
    [
        ("", "name no seed"),
        (",", "name no seed"),
        ([], "name no seed"),
        ("-1", r"\[-1\] are negative"),
        ([3, -2], r"\[-2\] are negative"),
    ],
)
def test_seeds_that_name_nothing_or_are_negative_are_refused(bad, message):
    with pytest.raises(InvalidKwargError, match=message):
        parse_seeds(bad)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"teams": [parse_team("random", name="x"), parse_team("heuristic", name="x")]}, r"\['x'\] used twice"),
        ({"seeds": [1, 1, 2]}, r"repeat \[1\]"),
        ({"seeds": [1.7]}, "non-empty list of ints"),
        ({"seeds": []}, "non-empty list of ints"),
        ({"seeds": [-1]}, r"\[-1\] are negative"),
        ({"teams": ["random"]}, "must be BenchTeam objects"),
    ],
)
def test_a_case_that_would_pool_or_miscount_episodes_is_refused(kw, message):
    with pytest.raises(InvalidKwargError, match=message):
        EnvCase("butterfly/pistonball-v0", **{"teams": [parse_team("random")], "seeds": [0], "kwargs": PB, **kw})


@pytest.mark.parametrize(
    "spec, message",
    [("piston_O=constant:up;*=heuristic", r"names \['piston_O'\], not agents"), ("constant:", "names no word")],
)
def test_a_team_with_a_typo_agent_or_an_empty_constant_is_refused(tmp_path, spec, message):
    with pytest.raises(InvalidKwargError, match=message):
        run_bench([pistonball_case({"t": spec}, seeds=[0])], tmp_path / "out")


def test_a_typo_agent_in_a_later_team_is_refused_before_anything_is_played(tmp_path):
    """A misspelt agent beside ``*`` in the second case: nothing of the first case is played
    (the check used to come only when its team's turn came, after the earlier episodes)."""
    first = pistonball_case({"random": "random"}, seeds=[0])
    tictactoe = EnvCase(
        "classic/tictactoe-v0", teams=[parse_team("random"), parse_team("player_0=random;*=random", "typo")], seeds=[0]
    )
    with pytest.raises(
        InvalidKwargError,
        match=r"team 'typo' names \['player_0'\], not agents of classic/tictactoe-v0 \(agents: player_1, player_2\); "
        "nothing was played",
    ):
        run_bench([first, tictactoe], tmp_path / "out")
    assert read_episodes(tmp_path / "out") == []
