"""The lang-pz command on bad and good input (no LLM needed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lang_pz.cli import app

runner = CliRunner()


def test_envs_lists_every_registered_id():
    import lang_pz

    out = runner.invoke(app, ["envs"]).output
    for env_id in lang_pz.registry:
        assert env_id in out


def test_play_heuristic_prints_returns(tmp_path):
    out_file = tmp_path / "t.jsonl"
    res = runner.invoke(
        app,
        [
            "play",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=5",
            "--kw",
            "hold=5",
            "--policy",
            "heuristic",
            "--episodes",
            "2",
            "--out",
            str(out_file),
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.output.count("team return") == 2
    assert out_file.read_text().count('"episode_end"') == 2


def test_unknown_env_suggests_the_close_id():
    res = runner.invoke(app, ["play", "butterfly/pistonbal-v0", "--policy", "random"])
    assert res.exit_code == 2
    assert "butterfly/pistonball-v0" in res.output


def test_bad_kwarg_and_kw_syntax():
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", "--kw", "n_piston=5", "--policy", "random"])
    assert res.exit_code == 2 and "n_pistons" in res.output
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", "--kw", "n_pistons", "--policy", "random"])
    assert res.exit_code != 0 and "KEY=VALUE" in res.output


def test_unknown_policy_is_named():
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", "--policy", "heuristc"])
    assert res.exit_code == 2 and "heuristic" in res.output


def test_train_rejects_bad_config(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("iterations: 0\nnot_a_field: 1\n")
    res = runner.invoke(app, ["train", "--config", str(cfg)])
    assert res.exit_code == 2 and "'not_a_field' is not a TrainConfig field" in res.output
    cfg.write_text("iterations: 0\n")
    res = runner.invoke(app, ["train", "--config", str(cfg)])
    assert res.exit_code == 2 and "iterations" in res.output and "greater than or equal to 1" in res.output
    res = runner.invoke(app, ["train", "--config", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_train_refuses_a_used_run_dir(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    res = runner.invoke(app, ["train", "--run-dir", str(tmp_path), "--backend", "openai:x"])
    assert res.exit_code == 2 and "already holds a run" in res.output


def test_train_on_a_single_agent_env_is_a_clear_error(tmp_path):
    res = runner.invoke(app, ["train", "--env", "classic_control/cartpole-v0", "--run-dir", str(tmp_path / "r")])
    assert res.exit_code == 2 and "single-agent" in res.output


def test_bad_backend_spec_is_a_clear_error(tmp_path):
    res = runner.invoke(app, ["play", "classic/rps-v0", "--backend", "nonsense"])
    assert res.exit_code == 2 and "openai:<model>" in res.output and "Traceback" not in res.output


def test_play_refuses_to_append_to_an_existing_file(tmp_path):
    out = tmp_path / "t.jsonl"
    out.write_text("")
    res = runner.invoke(app, ["play", "classic/rps-v0", "--policy", "random", "--out", str(out)])
    assert res.exit_code == 2 and "already exists" in res.output


def test_heuristic_refuses_text_it_cannot_read():
    import pytest

    from lang_pz.error import LangPZError
    from lang_pz.policies import PistonballHeuristic

    with pytest.raises(LangPZError, match="Pistonball"):
        PistonballHeuristic()({"text": "garbage"})


def test_a_value_that_is_not_yaml_is_a_clear_error(tmp_path):
    for args in (
        ["play", "classic/rps-v0", "--kw", "max_cycles=[1"],
        ["train", "--kw", "n_pistons=[1", "--run-dir", str(tmp_path / "a")],
        ["train", "--set", "tolerance=[1", "--run-dir", str(tmp_path / "b")],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "not a valid YAML value" in res.output, args
        assert res.exception is None or isinstance(res.exception, SystemExit)


def test_a_run_that_fails_to_start_writes_nothing(tmp_path):
    run = tmp_path / "run"
    res = runner.invoke(app, ["train", "--kw", "n_pistons=1", "--run-dir", str(run)])
    assert res.exit_code == 2 and "n_pistons" in res.output
    assert not run.exists()  # so the corrected command can use the same --run-dir


def test_resume_refuses_every_other_option_even_zero_and_backends(tmp_path):
    for extra in (["--seed", "0"], ["--critic-backend", "openai:x"], ["--optimiser-backend", "openai:y"]):
        res = runner.invoke(app, ["train", "--resume", str(tmp_path), *extra])
        assert res.exit_code == 2 and f"drop {extra[0]}" in res.output, extra


def test_resume_of_a_file_says_it_is_a_file(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text("a: 1\n")
    res = runner.invoke(app, ["train", "--resume", str(f)])
    assert res.exit_code == 2 and "is a file, not a run folder" in res.output


def _out(res) -> str:
    return " ".join((res.output + (getattr(res, "stderr", "") or "")).split())


def test_a_typo_in_a_config_file_suggests_the_field(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("iterations: 1\ntolerence: 2\n")
    res = runner.invoke(app, ["train", "--config", str(cfg), "--run-dir", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert "'tolerence' is not a TrainConfig field; did you mean 'tolerance'" in _out(res)
    assert not (tmp_path / "r").exists()


def test_out_in_a_missing_folder_is_refused(tmp_path):
    res = runner.invoke(
        app, ["play", "butterfly/pistonball-v0", "--policy", "random", "--out", str(tmp_path / "no" / "such" / "t.jsonl")]
    )
    assert res.exit_code == 2 and "does not exist; create it first" in _out(res)
    assert not (tmp_path / "no").exists()


def test_random_policy_on_a_free_text_env_points_to_llm():
    res = runner.invoke(app, ["play", "tasks/gsm8k-v0", "--kw", "source=demo", "--policy", "random"])
    assert res.exit_code == 2 and "--policy llm" in _out(res)


def test_play_policies_must_name_agents_of_the_env(tmp_path):
    (tmp_path / "pols").mkdir()
    (tmp_path / "pols" / "piston_9.txt").write_text("Always push up.\n")
    res = runner.invoke(
        app, ["play", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--policies", str(tmp_path / "pols")]
    )
    assert res.exit_code == 2 and "['piston_9'], which are not agents" in _out(res)
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", "--policy", "random", "--policies", str(tmp_path / "pols")])
    assert res.exit_code == 2 and "need --policy llm" in _out(res)


@pytest.mark.integration
def test_play_a_runs_final_per_agent_policies(tmp_path):
    from lang_pz.runs import write_policies

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    write_policies(
        run / "final" / "policies",
        {
            "piston_0": "Always push down.",
            "piston_1": "Always stay.",
            "piston_2": "Always push up.",
            "piston_3": "Always push up.",
        },
    )
    res = runner.invoke(
        app,
        [
            "play",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=4",
            "--kw",
            "hold=25",
            "--policies",
            str(run),
            "--policy-text",
            "Always push up.",
            "--show",
            "0",
        ],
    )
    assert res.exit_code == 0, _out(res)
    assert "team return" in res.output


def test_a_failed_episode_is_recorded_the_run_goes_on_and_exits_1(tmp_path, monkeypatch):
    """A decision that fails for good (an endpoint that gave up, a prompt that cannot fit) ends its episode only."""
    import json

    import lang_pz.backends
    from lang_pz.error import BackendError
    from lang_pz.test import ScriptedBackend

    calls = []

    def reply(req):
        calls.append(1)
        if len(calls) == 1:
            raise BackendError("scripted: the endpoint gave up after every attempt")
        return req.choices[0]

    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(reply))
    out = tmp_path / "t.jsonl"
    res = runner.invoke(
        app,
        [
            "play",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=4",
            "--kw",
            "hold=25",
            "--episodes",
            "2",
            "--out",
            str(out),
            "--show",
            "0",
        ],
    )
    assert res.exit_code == 1, _out(res)  # episodes failed: not a clean run
    assert "episode 0 (seed 0): failed, not scored" in _out(res) and "episode 1 (seed 1): team return" in res.output
    assert res.output.splitlines()[-1].startswith("error: 1 of 2 episode(s) (50 %) failed and were not scored")
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["episode"] for r in records if r["type"] == "episode_error"] == [0]
    assert [r["episode"] for r in records if r["type"] == "episode_end"] == [1]


def _one_error(res) -> str:
    """The single ``error: ...`` line of a refused command (exit code 2, no traceback)."""
    assert res.exit_code == 2, _out(res)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    text = res.output  # click's CliRunner puts stderr in the output too
    assert "Traceback" not in text and "Errno" not in text and "errors.pydantic.dev" not in text, text
    lines = [x for x in text.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1, text
    return lines[0]


def test_train_run_dir_that_is_a_file_names_it(tmp_path):
    f = tmp_path / "F"
    f.write_text("x")
    line = _one_error(runner.invoke(app, ["train", "--run-dir", str(f), "--backend", "openai:x"]))
    assert f"--run-dir {f} is a file" in line and "folder" in line


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--iterations", "0"], "error: iterations: Input should be greater than or equal to 1 (got 0)"),
        (["--executor", "foo"], "error: executor: Input should be 'local' or 'ray' (got 'foo')"),
        (["--set", "momentum=2"], "error: momentum: Input should be less than 1 (got 2)"),
    ],
)
def test_config_value_errors_are_one_line_per_field(tmp_path, args, expected):
    line = _one_error(runner.invoke(app, ["train", *args, "--run-dir", str(tmp_path / "r")]))
    assert line == expected
    assert not (tmp_path / "r").exists()


def test_two_bad_config_values_give_two_lines(tmp_path):
    res = runner.invoke(app, ["train", "--iterations", "0", "--executor", "foo", "--run-dir", str(tmp_path / "r")])
    assert res.exit_code == 2 and "errors.pydantic.dev" not in _out(res)
    lines = [x for x in res.output.splitlines() if x.startswith("error: ")]
    assert [x.split(":")[1].strip() for x in lines] == ["iterations", "executor"]


def test_set_without_equals_says_key_value():
    line = _one_error(runner.invoke(app, ["train", "--set", "iterations"]))
    assert "--set needs KEY=VALUE, got 'iterations'" in line and "did you mean" not in line


def test_train_help_lists_every_critic_mode_and_method():
    from lang_pz.critics import critic_modes
    from lang_pz.training.registry import registered

    res = runner.invoke(app, ["train", "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0
    line = next(x for x in res.output.splitlines() if "--critic-mode" in x)
    for mode in critic_modes():
        assert mode in line, (mode, line)
    line = next(x for x in res.output.splitlines() if "--method" in x and "registered method" in x)
    assert all(m in line for m in registered()), line


def _trained_run(tmp_path, n_pistons: int = 5):
    import json

    from lang_pz.runs import write_policies

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps({"env_id": "butterfly/pistonball-v0", "env_kwargs": {"n_pistons": n_pistons, "hold": 25}})
    )
    write_policies(run / "final" / "policies", {f"piston_{i}": f"Policy {i}: always push up." for i in range(n_pistons)})
    return run


def test_play_refuses_a_run_whose_policies_do_not_cover_the_env(tmp_path):
    run = _trained_run(tmp_path)
    line = _one_error(runner.invoke(app, ["play", "butterfly/pistonball-v0", "--kw", "n_pistons=8", "--policies", str(run)]))
    assert "no policy for ['piston_5', 'piston_6', 'piston_7']" in line
    assert "trained on butterfly/pistonball-v0 with --kw n_pistons=5 --kw hold=25" in line
    line = _one_error(runner.invoke(app, ["play", "butterfly/pistonball-v0", "--kw", "n_pistons=4", "--policies", str(run)]))
    assert "['piston_4'], which are not agents" in line and "--kw n_pistons=5" in line


def test_play_a_run_without_kw_uses_the_runs_env_kwargs(tmp_path, monkeypatch):
    import lang_pz.backends
    from lang_pz.test import ScriptedBackend

    seen = []

    def reply(req):
        seen.append(req)
        return req.choices[0]

    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(reply))
    run = _trained_run(tmp_path)
    res = runner.invoke(app, ["play", "butterfly/pistonball-v0", "--policies", str(run), "--show", "0"])
    assert res.exit_code == 0, _out(res)
    assert "using the env kwargs the run" in _out(res) and "--kw n_pistons=5 --kw hold=25" in _out(res)
    assert "piston_4=" in res.output and "piston_5=" not in res.output  # 5 pistons, as trained
    prompts = " ".join(str(r) for r in seen)
    assert all(f"Policy {i}: always push up." in prompts for i in range(5))


def test_set_takes_text_as_written_and_null_unsets_an_optional_text_field():
    from lang_pz.cli.settings import set_fields

    assert set_fields(["initial_policy=No", "objective=null", "critic_backend=~", "run_dir=", "iterations=3"]) == {
        "initial_policy": "No",
        "objective": None,
        "critic_backend": None,
        "run_dir": None,
        "iterations": 3,
    }
    assert set_fields(["initial_policy=null"]) == {"initial_policy": "null"}  # a required text: the words as written
    with pytest.raises(ValueError, match="did you mean 'iterations'"):
        set_fields(["iteration=2"])
    # a method's setting, flat or in its section (a text field of a section also stays text)
    assert set_fields(["maskills.skill_reruns=2", "maskills.skills=No", "skill_credit=episode"]) == {
        "maskills": {"skill_reruns": 2, "skills": "No"},
        "skill_credit": "episode",
    }


def test_play_says_how_many_actions_the_env_could_not_read():
    res = runner.invoke(
        app,
        [
            "play",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=5",
            "--kw",
            "max_cycles=10",
            "--kw",
            "continuous=true",
            "--policy",
            "heuristic",
            "--show",
            "0",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "of 50 actions unparsed, the env's fallback played" in res.output  # "down" is not a number
    res = runner.invoke(
        app,
        [
            "play",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=5",
            "--kw",
            "max_cycles=10",
            "--policy",
            "heuristic",
            "--show",
            "0",
        ],
    )
    assert res.exit_code == 0 and "unparsed" not in res.output


def test_an_empty_policy_file_is_named(tmp_path):
    (tmp_path / "pols").mkdir()
    (tmp_path / "pols" / "piston_0.txt").write_text("\n")
    line = _one_error(
        runner.invoke(app, ["play", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--policies", str(tmp_path / "pols")])
    )
    assert f"{tmp_path / 'pols' / 'piston_0.txt'} is empty" in line


def test_a_policy_file_that_is_not_utf8_is_named(tmp_path):
    (tmp_path / "pols").mkdir()
    (tmp_path / "pols" / "piston_0.txt").write_bytes(b"Always push \xff down.")
    line = _one_error(
        runner.invoke(app, ["play", "butterfly/pistonball-v0", "--kw", "n_pistons=5", "--policies", str(tmp_path / "pols")])
    )
    assert f"{tmp_path / 'pols' / 'piston_0.txt'} is not UTF-8 text (byte 12" in line and "save it as UTF-8" in line


@pytest.mark.parametrize(
    "file_text, setting, note",
    [
        (
            "critic_mode: counterfactual\ncounterfactual: [alternatives]\n",
            "langmarl.critic_mode=independent",
            "--set langmarl.critic_mode='independent' replaces critic_mode: 'counterfactual'",
        ),
        (
            "method: maskills\nskill_credit: invocation\n",
            "maskills.skill_credit=episode",
            "--set maskills.skill_credit='episode' replaces skill_credit: 'invocation'",
        ),
    ],
)
def test_set_of_a_section_key_overrides_the_flat_key_of_the_config_file(tmp_path, file_text, setting, note):
    """A file (of before sections) gives ``critic_mode`` flat; ``--set langmarl.critic_mode=...`` wins,
    said once (the run then stops at ``--iterations 0``, before anything is trained)."""
    config = tmp_path / "c.yaml"
    config.write_text(file_text)
    res = runner.invoke(
        app, ["train", "--config", str(config), "--set", setting, "--iterations", "0", "--run-dir", str(tmp_path / "r")]
    )
    assert " ".join(res.output.split()).count(f"{note} of {config}") == 1, res.output  # output holds stderr
    assert _one_error(res) == "error: iterations: Input should be greater than or equal to 1 (got 0)"


def test_a_config_file_giving_a_key_flat_and_in_its_section_names_both(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("critic_mode: independent\nlangmarl:\n  critic_mode: counterfactual\n")
    res = runner.invoke(app, ["train", "--config", str(config), "--run-dir", str(tmp_path / "r")])
    assert "'critic_mode' and 'langmarl.critic_mode' are both given" in _out(res)
