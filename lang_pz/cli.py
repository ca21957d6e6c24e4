"""The ``lang-pz`` command: list environments, play episodes, train policies."""

from __future__ import annotations

import difflib
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import yaml

app = typer.Typer(
    help="lang_pz: language multi-agent RL on PettingZoo environments.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

KwOption = Annotated[
    Optional[list[str]],
    typer.Option("--kw", help="environment keyword argument KEY=VALUE (repeatable), e.g. --kw n_pistons=5"),
]


def _parse_kwargs(pairs: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE (e.g. n_pistons=5)", param_hint="--kw")
        out[key.strip()] = _yaml_value(value, f"--kw {key.strip()}")
    return out


def _yaml_value(value: str, where: str) -> Any:
    """``value`` parsed as YAML (so ``5`` is an int and ``[a, b]`` a list), or a clear error."""
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise typer.BadParameter(f"{where}: {value!r} is not a valid YAML value ({problem}); "
                                 "quote text values, e.g. --set 'initial_policy=\"Stay: wait\"'") from None


def _fail(exc: Exception) -> None:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


@app.command()
def envs(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show keyword arguments")] = False) -> None:
    """List the registered environment ids with a one-line description."""
    import lang_pz
    from lang_pz.registration import kwargs_of

    for env_id, s in sorted(lang_pz.registry.items()):
        typer.echo(f"{env_id:34s} [{'/'.join(s.apis)}] {s.description}")
        if verbose:
            try:
                kws = kwargs_of(env_id)
            except ImportError as exc:
                typer.echo(f"{'':34s} (unavailable: {exc})")
                continue
            typer.echo(f"{'':34s} kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kws.items()))


POLICIES = ("llm", "random", "heuristic", "greedy")


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help="registered id, see `lang-pz envs`")],
    kw: KwOption = None,
    policy: Annotated[str, typer.Option(help="llm, random, heuristic (Pistonball only) or greedy (Overcooked only)")] = "llm",
    policy_text: Annotated[str, typer.Option(help="the text policy every LLM agent gets")] = "Always push up.",
    backend: Annotated[str, typer.Option(help="'embedded' or 'openai:<model>'")] = "embedded",
    episodes: Annotated[int, typer.Option(min=1)] = 1,
    seed: Annotated[int, typer.Option(min=0, help="seed of the first episode")] = 0,
    api: Annotated[Optional[str], typer.Option(help="parallel or aec (default: the env's)")] = None,
    out: Annotated[Optional[Path], typer.Option(help="write trajectories to this JSONL file")] = None,
    show: Annotated[int, typer.Option(min=0, help="print the first N agent steps")] = 3,
) -> None:
    """Play episodes with one policy per agent and print the returns."""
    import lang_pz
    from lang_pz.error import LangPZError
    from lang_pz.policies.base import Policy
    from lang_pz.rollout import rollout
    from lang_pz.trajectory import TrajectoryWriter

    if policy not in POLICIES:
        close = difflib.get_close_matches(policy, POLICIES, n=1)
        _fail(ValueError(f"unknown --policy {policy!r}{f'; did you mean {close[0]!r}' if close else ''}; "
                         f"choose one of {', '.join(POLICIES)}"))
    if out is not None and out.exists():
        _fail(FileExistsError(f"--out {out} already exists; choose another file or delete it"))
    try:
        env = lang_pz.make(env_id, api=api, **_parse_kwargs(kw))  # type: ignore[arg-type]
        if not hasattr(env, "possible_agents"):
            _fail(ValueError(f"{env_id} is a single-agent Gymnasium env; `play` runs PettingZoo envs"))
        policies: dict[str, Policy]
        if policy == "llm":
            from lang_pz.backends import make_backend
            from lang_pz.policies.llm import LLMPolicy

            llm = make_backend(backend)
            policies = {a: LLMPolicy(policy_text, llm) for a in env.possible_agents}
        elif policy == "random":
            from lang_pz.policies.random import RandomPolicy

            policies = {a: RandomPolicy(seed=seed + i) for i, a in enumerate(env.possible_agents)}
        elif policy == "greedy":
            from lang_pz.policies.overcooked import OvercookedGreedyPolicy

            if not env_id.startswith("overcooked/"):
                _fail(ValueError("the greedy policy is for overcooked/<layout>-v0 only"))
            policies = {a: OvercookedGreedyPolicy(env, a, seed=seed + i) for i, a in enumerate(env.possible_agents)}
        else:
            from lang_pz.policies.scripted import PistonballHeuristic

            if not env_id.startswith("butterfly/pistonball"):
                _fail(ValueError("the heuristic policy is for butterfly/pistonball-v0 only"))
            policies = {a: PistonballHeuristic() for a in env.possible_agents}
        writer = TrajectoryWriter(out) if out else None
        for k in range(episodes):
            traj = rollout(env, policies, seed=seed + k, episode=k, writer=writer)
            if k == 0:
                for s in traj.steps[:show]:
                    typer.echo(f"--- step {s.step} {s.agent}\n{s.observation}\n> {s.raw_output!r} -> {s.action!r}"
                               + (f"  (parse error: {s.parse_error})" if s.parse_error else ""))
            rets = ", ".join(f"{a}={r:.1f}" for a, r in traj.returns.items())
            typer.echo(f"episode {k} (seed {seed + k}): team return {traj.team_return:.1f} [{rets}]")
        if writer:
            writer.close()
            typer.echo(f"trajectories: {out}")
    except (LangPZError, ValueError, OSError) as exc:
        _fail(exc)


@app.command()
def adherence(
    backend: Annotated[str, typer.Option(help="'embedded' or 'openai:<model>'")] = "embedded",
    prompt_format: Annotated[Optional[str], typer.Option(help="chat or completion \\[default: the backend's]")] = None,
    observations: Annotated[int, typer.Option(min=1, help="real Pistonball observations per policy")] = 8,
    seed: Annotated[int, typer.Option(min=0, help="seed of the episodes the observations come from")] = 0,
) -> None:
    """Measure policy adherence: how often the model's action is the one a text policy names.

    Runs the fixed grid of 15 unconditional Pistonball policies in free phrasing (5 per action)
    x real observations, and prints the rate per policy and overall.
    """
    from lang_pz.backends import make_backend
    from lang_pz.error import LangPZError
    from lang_pz.policies.adherence import PISTON_ACTIONS, PISTON_POLICIES, adherence_table, pistonball_observations

    if prompt_format not in (None, "chat", "completion"):
        _fail(ValueError(f"--prompt-format must be chat or completion, got {prompt_format!r}"))
    try:
        llm = make_backend(backend)
        obs = pistonball_observations(observations, seed=seed)
        table = adherence_table(llm, PISTON_POLICIES, obs, PISTON_ACTIONS, prompt_format=prompt_format)  # type: ignore[arg-type]
    except (LangPZError, ValueError, OSError) as exc:
        _fail(exc)
        return
    fmt = prompt_format or llm.prompt_format
    typer.echo(f"backend {backend}, prompt format {fmt}, {len(obs)} observations per policy")
    for text, rate in table.per_policy.items():
        typer.echo(f"  {rate:6.0%}  {text!r} -> {PISTON_POLICIES[text]}   chose: {', '.join(table.actions[text])}")
    hits = round(table.rate * len(PISTON_POLICIES) * len(obs))
    typer.echo(f"adherence: {table.rate:.1%} ({hits}/{len(PISTON_POLICIES) * len(obs)})")


def _config_help() -> str:
    from lang_pz.training import TrainConfig

    lines = ["Every TrainConfig field, settable in --config or with --set KEY=VALUE:", ""]
    for name, f in TrainConfig.model_fields.items():
        default = f.default_factory() if f.default_factory is not None else f.default  # type: ignore[call-arg]
        lines.append(f"{name} [default: {default!r}]: {f.description}")
    from rich.markup import escape  # typer renders help text as rich markup

    return escape("\n\n".join(lines))


@app.command(epilog=_config_help())
def train(
    config: Annotated[Optional[Path], typer.Option(help="YAML or JSON file of TrainConfig fields")] = None,
    resume: Annotated[Optional[Path], typer.Option(help="continue this run folder (its config.json is used)")] = None,
    env_id: Annotated[Optional[str], typer.Option("--env", help="environment id \\[default: butterfly/pistonball-v0]")] = None,
    kw: KwOption = None,
    iterations: Annotated[Optional[int], typer.Option(help="training iterations \\[default: 2]")] = None,
    episodes: Annotated[Optional[int], typer.Option(help="episodes per iteration \\[default: 1]")] = None,
    seed: Annotated[Optional[int], typer.Option(min=0, help="first episode seed \\[default: 0]")] = None,
    critic_mode: Annotated[Optional[str], typer.Option(
        help="central_credit, central_global or independent \\[default: central_credit]")] = None,
    backend: Annotated[Optional[str], typer.Option(help="actor backend \\[default: embedded]")] = None,
    critic_backend: Annotated[Optional[str], typer.Option(help="critic backend \\[default: actor's]")] = None,
    optimiser_backend: Annotated[Optional[str], typer.Option(help="optimiser backend \\[default: actor's]")] = None,
    run_dir: Annotated[Optional[Path], typer.Option(help="run folder \\[default: runs/<time>]")] = None,
    set_: Annotated[Optional[list[str]], typer.Option(
        "--set", help="any TrainConfig field KEY=VALUE (repeatable; values are YAML), listed below")] = None,
) -> None:
    """Train text policies: rollout -> critic -> per-agent gradient -> validated update."""
    from pydantic import ValidationError

    from lang_pz.error import LangPZError
    from lang_pz.training import TrainConfig
    from lang_pz.training import train as run_training

    say = lambda msg: typer.echo(msg, err=True)  # noqa: E731
    if resume is not None:
        given = [n for n, v in (("--config", config), ("--env", env_id), ("--kw", kw), ("--iterations", iterations),
                                ("--episodes", episodes), ("--seed", seed), ("--critic-mode", critic_mode),
                                ("--backend", backend), ("--critic-backend", critic_backend),
                                ("--optimiser-backend", optimiser_backend), ("--run-dir", run_dir),
                                ("--set", set_)) if v is not None]
        if given:
            _fail(ValueError(f"--resume continues a run with its own config.json; drop {', '.join(given)}"))
        try:
            result = run_training(resume=resume, progress=say)
        except (LangPZError, ValueError, OSError) as exc:
            _fail(exc)
            return
        except KeyboardInterrupt:
            _interrupted(resume)
        _finish(result)
        return
    fields: dict[str, Any] = {}
    if config is not None:
        if not config.exists():
            _fail(FileNotFoundError(f"--config {config} does not exist"))
        try:
            fields = yaml.safe_load(config.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            _fail(ValueError(f"--config {config} could not be read as YAML/JSON: {exc}"))
        if not isinstance(fields, dict):
            _fail(ValueError(f"--config {config} must hold a mapping of TrainConfig fields"))
    overrides = {
        "env_id": env_id, "iterations": iterations, "episodes_per_iteration": episodes, "seed": seed,
        "critic_mode": critic_mode, "actor_backend": backend, "critic_backend": critic_backend,
        "optimiser_backend": optimiser_backend, "run_dir": str(run_dir) if run_dir else None,
    }
    fields.update({k: v for k, v in overrides.items() if v is not None})
    if kw:
        fields["env_kwargs"] = {**fields.get("env_kwargs", {}), **_parse_kwargs(kw)}
    for pair in set_ or []:
        key, sep, value = pair.partition("=")
        if not sep or key not in TrainConfig.model_fields:
            close = difflib.get_close_matches(key, list(TrainConfig.model_fields), n=1)
            _fail(ValueError(f"--set {pair!r}: not KEY=VALUE with a TrainConfig field"
                             f"{f'; did you mean {close[0]!r}' if close else ''} (see --help)"))
        annotation = str(TrainConfig.model_fields[key].annotation)
        # text fields take the value as written ("No", "Stay: wait" stay text)
        fields[key] = value if annotation in ("<class 'str'>", "str | None") else _yaml_value(value, f"--set {key}")
    fields.setdefault("run_dir", time.strftime("runs/%Y%m%d-%H%M%S"))
    try:
        cfg = TrainConfig(**fields)
        result = run_training(cfg, progress=say)
    except (ValidationError, LangPZError, ValueError, OSError) as exc:
        _fail(exc)
        return
    except KeyboardInterrupt:
        _interrupted(Path(fields["run_dir"]))
    _finish(result)


def _interrupted(run_dir: Path) -> None:
    hint = f"; continue it with `lang-pz train --resume {run_dir}`" if (run_dir / "config.json").exists() else ""
    typer.secho(f"\ninterrupted: {run_dir} keeps everything finished so far{hint}", fg=typer.colors.YELLOW, err=True)
    raise typer.Exit(code=130)


def _finish(result: Any) -> None:
    from lang_pz.report import load_run, plot_learning_curve, summary_text

    run = load_run(result.run_dir)
    png = plot_learning_curve(run, Path(result.run_dir) / "learning_curve.png")
    typer.echo(summary_text(run))
    if result.stopped:
        typer.echo(f"stopped early: {result.stopped}")
    typer.echo(f"\nrun folder: {result.run_dir}\nlearning curve: {png}")


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="a run folder written by `lang-pz train`")],
    out: Annotated[Optional[Path], typer.Option(help="PNG to write \\[default: RUN_DIR/learning_curve.png]")] = None,
) -> None:
    """Summarise a training run and plot its learning curve (works on unfinished runs too)."""
    from lang_pz.error import LangPZError
    from lang_pz.report import load_run, plot_learning_curve, summary_text

    try:
        run = load_run(run_dir)
        png = plot_learning_curve(run, out or run_dir / "learning_curve.png")
    except (LangPZError, OSError) as exc:
        _fail(exc)
        return
    typer.echo(summary_text(run))
    typer.echo(f"\nlearning curve: {png}")


FAULT_CHOICES = ("idle", "harmful", "random")
TIE_CHOICES = ("miss", "first", "random")
BASE_CHOICES = ("heuristic", "greedy", "random", "oracle")


@app.command("eval-critic")
def eval_critic(
    env_ids: Annotated[Optional[list[str]], typer.Option(
        "--env", help="fault-injection benchmark on this environment id (repeatable), e.g. butterfly/pistonball-v0",
        show_default="none")] = None,
    kw: KwOption = None,
    cases: Annotated[int, typer.Option(min=1, help="fault-injection cases per --env")] = 20,
    seed: Annotated[int, typer.Option(min=0, help="master seed (case i resets the env with seed + i)")] = 0,
    base: Annotated[Optional[str], typer.Option(
        help="the good team: heuristic (Pistonball), greedy (Overcooked, both cooks), oracle (tasks/gsm8k-v0, "
             "tasks/math500-v0: the solver writes the gold answer, the verifier confirms) or random",
        show_default="per env: Pistonball heuristic, Overcooked greedy, GSM8K/MATH oracle, else random")] = None,
    fault: Annotated[str, typer.Option(help="idle, harmful or random (random needs a finite action set)")] = "idle",
    fault_action: Annotated[Optional[str], typer.Option(
        help="the faulty action word or text",
        show_default="idle: the env's no-op (free text: empty); harmful: per env (Pistonball: the opposite move; "
                     "Overcooked skills: 'place on counter', primitive: the opposite move; GSM8K/MATH: "
                     "the wrong answer 0)")] = None,
    window: Annotated[int, typer.Option(min=1, help="consecutive decisions made faulty per case")] = 2,
    tolerance: Annotated[int, typer.Option(min=0, help="steps of slack around the faulty window for a step hit")] = 0,
    tie: Annotated[str, typer.Option(help="a tie for the lowest credit: miss, first or random")] = "miss",
    require_effect: Annotated[bool, typer.Option(
        help="keep only fault draws that lower the team return (redrawn, else skipped)")] = False,
    whowhen: Annotated[Optional[Path], typer.Option(help="also score a Who&When folder of JSON cases",
                                                     show_default="none")] = None,
    backend: Annotated[str, typer.Option(help="critic backend: 'embedded' or 'openai:<model>'")] = "embedded",
    out: Annotated[Optional[Path], typer.Option(
        help="results folder, must be new or empty", show_default="runs/eval-critic-<time>")] = None,
) -> None:
    """Measure the critic's credit assignment against known faults (who and when), against chance."""
    import json
    import time

    from lang_pz.error import LangPZError
    from lang_pz.registration import spec

    if not env_ids and whowhen is None:
        _fail(ValueError("nothing to evaluate: give --env ID (repeatable) and/or --whowhen DIR"))
    for name, value, choices in (("--fault", fault, FAULT_CHOICES), ("--tie", tie, TIE_CHOICES),
                                 ("--base", base, BASE_CHOICES)):
        if value is not None and value not in choices:
            close = difflib.get_close_matches(value, choices, n=1)
            _fail(ValueError(f"unknown {name} {value!r}{f'; did you mean {close[0]!r}' if close else ''}; "
                             f"choose one of {', '.join(choices)}"))
    if whowhen is not None and not whowhen.is_dir():
        _fail(FileNotFoundError(f"--whowhen {whowhen} is not a folder of Who&When JSON files"))
    out = out or Path("runs") / time.strftime("eval-critic-%Y%m%d-%H%M%S")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        _fail(FileExistsError(f"--out {out} already exists and is not an empty folder; choose another or delete it"))
    env_kwargs = _parse_kwargs(kw)
    try:
        for env_id in env_ids or []:
            spec(env_id)
        from lang_pz.backends import make_backend
        from lang_pz.critics import CentralCritic
        from lang_pz.critics.benchmark import run_fault_benchmark, summary_dict
        from lang_pz.critics.whowhen import run_whowhen_benchmark

        critic = CentralCritic(make_backend(backend))
        out.mkdir(parents=True, exist_ok=True)
        log = lambda msg: typer.echo(msg, err=True)  # noqa: E731
        summaries = []
        for i, env_id in enumerate(env_ids or []):
            slug = env_id.replace("/", "_")
            summaries.append(run_fault_benchmark(
                env_id, critic, cases=cases, seed=seed, fault=fault, env_kwargs=env_kwargs,  # type: ignore[arg-type]
                base=base, fault_action=fault_action, window=window, tolerance=tolerance,
                tie=tie, require_effect=require_effect,  # type: ignore[arg-type]
                out=out / f"{i}-{slug}.jsonl", progress=log))
        if whowhen is not None:
            summary, _ = run_whowhen_benchmark(whowhen, critic, seed=seed, tolerance=tolerance, tie=tie,  # type: ignore[arg-type]
                                               out=out / "whowhen.jsonl", progress=log)
            summaries.append(summary)
    except (LangPZError, ValueError, OSError) as exc:
        _fail(exc)
        return
    (out / "summary.json").write_text(json.dumps(
        {"backend": backend, "summaries": [summary_dict(s) for s in summaries]}, indent=2))
    typer.echo(f"{'source':34s} {'cases':>5s} {'agent acc':>9s} {'step acc':>8s} {'random agent acc':>16s} "
               f"{'random step acc':>15s} {'random critic':>13s} {'ties':>4s} {'failed':>6s} {'skipped':>7s}")
    for s in summaries:
        typer.echo(f"{s.source[-34:]:34s} {s.cases:5d} {s.agent_acc:9.2f} {s.step_acc:8.2f} "
                   f"{s.chance_agent_acc:16.2f} {s.chance_step_acc:15.2f} "
                   f"{s.random_agent_acc:6.2f}/{s.random_step_acc:.2f} {s.ties:4d} {s.critic_failures:6d} {s.skipped:7d}")
    typer.echo("random agent/step acc: analytic chance; random critic: a seeded random critic, agent/step")
    typer.echo(f"results: {out}")


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
