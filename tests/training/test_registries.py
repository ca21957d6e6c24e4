"""The method and critic-mode registries: a method and a critic mode of the user's own are
selectable by name (a YAML config, the command line, ``train(config)``) after one register call,
each checked by its settings model; the built-in ones go through the same registries."""

from __future__ import annotations

import json
import textwrap
import uuid

import pytest
from pydantic import ValidationError
from standins import AGENTS, ENV, StandIn, jsonl
from typer.testing import CliRunner

import lang_pz.backends
import lang_pz.training.parts
from lang_pz.critics import modes
from lang_pz.error import InvalidKwargError
from lang_pz.training import TrainConfig, registry

#: A user's module: a critic mode with its own options and a LangMARL variant with its own
#: settings (LangMARL's, plus a margin), each registered by one call.
PLUGIN = textwrap.dedent(
    '''
    from pydantic import ConfigDict, BaseModel

    from lang_pz.critics import Credit, CriticMode, CriticReport, register_critic_mode
    from lang_pz.critics.counterfactual import best_gain
    from lang_pz.critics.modes import mode_options
    from lang_pz.methods import LangMARL, register_method
    from lang_pz.training.sections import LangMARLConfig


    class SignOptions(BaseModel):
        model_config = ConfigDict(extra="forbid")
        scale: float = 1.0


    class SignCritic:
        """Every agent gets the team return's sign, times scale."""

        mode = "sign"

        def __init__(self, scale):
            self.scale = scale

        def assess(self, trajectory, policies=None, counterfactuals=()):
            credit = self.scale if trajectory.team_return > 0 else -self.scale
            return CriticReport(
                episode=trajectory.episode,
                team_return=trajectory.team_return,
                mode=self.mode,
                credits={a: Credit(agent=a, credit=credit, explanation="the sign") for a in trajectory.agents},
            )


    register_critic_mode(
        CriticMode("sign", lambda backend, config: SignCritic(mode_options(config).scale), "the sign", settings=SignOptions)
    )


    class CautiousSettings(LangMARLConfig):
        margin: float = 1.0


    @register_method
    class Cautious(LangMARL):
        """LangMARL that leaves alone every agent no re-run beat by more than a margin."""

        name = "cautious"
        settings_model = CautiousSettings

        def gate(self, evidence, reports, ctx):
            gated = super().gate(evidence, reports, ctx)
            for agent in self.parts.trainable:
                gain = best_gain(agent, evidence)
                if agent not in gated and gain is not None and gain <= self.settings.margin:
                    gated[agent] = gain
            return gated
    '''
)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The user's module, importable under a fresh name; the registries restored afterwards."""
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))
    monkeypatch.setattr(modes, "_MODES", dict(modes._MODES))
    name = f"lpz_plugin_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def _stand_in(monkeypatch):
    stand_in = StandIn(flipping=AGENTS)
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: stand_in.backend)
    monkeypatch.setattr(lang_pz.training.parts, "make_backend", lambda spec, **kw: stand_in.backend)
    return stand_in


def _common_args(run):
    return ["--kw", "n_pistons=5", "--kw", "hold=5", "--kw", "max_cycles=50", "--iterations", "1", "--run-dir", str(run)]


def test_a_users_method_and_critic_mode_run_from_a_yaml_config_and_resume(tmp_path, monkeypatch, plugin):
    from lang_pz.cli import app

    _stand_in(monkeypatch)
    cfg = tmp_path / "x.yaml"
    cfg.write_text(
        textwrap.dedent(
            f"""
            imports: [{plugin}]
            method: cautious
            validation_seeds: [1001]
            initial_policy: Always push up.
            cautious:
              critic_mode: sign
              critic_options: {{scale: 0.5}}
              counterfactual: [alternatives]
              margin: 0
            """
        )
    )
    run = tmp_path / "run"
    res = CliRunner().invoke(app, ["train", "--config", str(cfg), *_common_args(run)])
    assert res.exit_code == 0, res.output
    saved = json.loads((run / "config.json").read_text())
    assert saved["method"] == "cautious" and saved["cautious"]["margin"] == 0 and saved["imports"] == [plugin]
    assert "langmarl" not in saved  # the run's section only
    (report,) = jsonl(run / "iter_000" / "credits.jsonl")
    assert report["mode"] == "sign" and {abs(c["credit"]) for c in report["credits"].values()} == {0.5}
    again = CliRunner().invoke(app, ["train", "--resume", str(run)])  # config.json's imports register them again
    assert again.exit_code == 0, again.output


def test_a_users_method_and_critic_mode_by_name_on_the_command_line(tmp_path, monkeypatch, plugin):
    from lang_pz.cli import app

    _stand_in(monkeypatch)
    run = tmp_path / "run"
    args = ["--set", f"imports=[{plugin}]", "--method", "cautious", "--critic-mode", "sign", "--set", "cautious.margin=1e9"]
    more = ["--set", "cautious.counterfactual=[alternatives]", "--set", "validation_seeds=[1001]"]
    res = CliRunner().invoke(app, ["train", *args, *more, *_common_args(run)])
    assert res.exit_code == 0, res.output
    saved = json.loads((run / "config.json").read_text())
    assert saved["cautious"]["critic_mode"] == "sign" and saved["cautious"]["margin"] == 1e9
    done = json.loads((run / "iter_000" / "done.json").read_text())
    assert sorted(done["metrics"]["gated_agents"]) == AGENTS  # no re-run gains 1e9: the variant's gate
    bad = CliRunner().invoke(app, ["train", "--method", "nope", *_common_args(tmp_path / "r2")])
    assert bad.exit_code == 2 and "method: Input should be 'langmarl', 'maskills'" in " ".join(bad.output.split())


def test_registered_in_python_then_named_by_train(tmp_path, monkeypatch, plugin):
    import importlib

    from lang_pz.training import train

    importlib.import_module(plugin)
    stand_in = StandIn(flipping=AGENTS)
    cfg = TrainConfig(
        env_kwargs=ENV,
        iterations=1,
        validation_seeds=[1001],
        initial_policy="Always push up.",
        run_dir=str(tmp_path / "run"),
        method="cautious",
        cautious={"critic_mode": "sign", "counterfactual": ["alternatives"], "margin": 1e9},
    )
    with pytest.warns(DeprecationWarning) as caught:  # a flat key still goes to the run's method's section
        assert TrainConfig(**{**cfg.model_dump(exclude={"cautious"}), **cfg.cautious.model_dump()}) == cfg
    assert any("(cautious.margin; " in str(w.message) for w in caught)
    assert cfg.cautious.critic_mode == "sign" and cfg.langmarl is None
    res = train(cfg, backends=stand_in.backend)
    assert res.metrics[0].changed_agents == [] and len(res.metrics[0].gated_agents) == len(AGENTS)
    # each section is checked by its own model
    with pytest.raises(
        ValidationError, match=r"critic_options of critic_mode 'sign': scale: Input should be a valid number"
    ):
        TrainConfig(langmarl={"critic_mode": "sign", "critic_options": {"scale": "big"}})
    with pytest.raises(ValidationError, match=r"critic_mode 'central_credit' takes no critic_options"):
        TrainConfig(langmarl={"critic_options": {"scale": 1}})
    with pytest.raises(ValidationError, match=r"cautious.margin\n  Input should be a valid number"):
        TrainConfig(method="cautious", cautious={"margin": "wide"})
    with pytest.raises(ValidationError, match=r"margin=5 is a setting of method 'cautious'"):
        TrainConfig(margin=5)


def test_registries_list_what_is_registered_and_refuse_a_second_class_under_a_name():
    from lang_pz.critics import critic_modes
    from lang_pz.methods import LangMARL, MASkills, register_method
    from lang_pz.training.registry import method_class, registered

    assert registered()[:2] == ["langmarl", "maskills"]
    assert method_class("langmarl") is LangMARL and method_class("maskills") is MASkills
    assert register_method(LangMARL) is LangMARL  # the same class again: nothing changes

    class Impostor(LangMARL):
        name = "langmarl"

    with pytest.raises(InvalidKwargError, match="'langmarl' is already registered"):
        register_method(Impostor)
    with pytest.raises(InvalidKwargError, match="unknown method 'nope'; registered: langmarl, maskills"):
        method_class("nope")
    assert critic_modes()[:6] == [
        "central_credit",
        "central_global",
        "independent",
        "counterfactual",
        "decisive",
        "coalition",
    ]
    assert critic_modes("search")[:2] == ["decisive", "coalition"]
    with pytest.raises(InvalidKwargError, match="unknown critic mode 'nope'"):
        modes.critic_mode("nope")
    with pytest.raises(ValidationError, match=r"imports: cannot import 'no_such_module_x'"):
        TrainConfig(imports=["no_such_module_x"])
