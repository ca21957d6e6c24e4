"""``lang-pz adherence`` and ``lang-pz eval-critic``: measure models and critics."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Optional

import typer

from lang_pz.cli.common import KwOption, app, fail, parse_kwargs, yaml_value  # noqa: F401


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
    from lang_pz.evaluation.adherence import (
        PISTON_ACTIONS,
        PISTON_POLICIES,
        adherence_table,
        pistonball_observations,
    )

    if prompt_format not in (None, "chat", "completion"):
        fail(ValueError(f"--prompt-format must be chat or completion, got {prompt_format!r}"))
    try:
        llm = make_backend(backend)
        obs = pistonball_observations(observations, seed=seed)
        table = adherence_table(llm, PISTON_POLICIES, obs, PISTON_ACTIONS, prompt_format=prompt_format)  # type: ignore[arg-type]
    except (LangPZError, ValueError, OSError) as exc:
        fail(exc)
        return
    fmt = prompt_format or llm.prompt_format
    typer.echo(f"backend {backend}, prompt format {fmt}, {len(obs)} observations per policy")
    for text, rate in table.per_policy.items():
        typer.echo(f"  {rate:6.0%}  {text!r} -> {PISTON_POLICIES[text]}   chose: {', '.join(table.actions[text])}")
    hits = round(table.rate * len(PISTON_POLICIES) * len(obs))
    typer.echo(f"adherence: {table.rate:.1%} ({hits}/{len(PISTON_POLICIES) * len(obs)})")


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
        fail(ValueError("nothing to evaluate: give --env ID (repeatable) and/or --whowhen DIR"))
    for name, value, choices in (("--fault", fault, FAULT_CHOICES), ("--tie", tie, TIE_CHOICES),
                                 ("--base", base, BASE_CHOICES)):
        if value is not None and value not in choices:
            close = difflib.get_close_matches(value, choices, n=1)
            fail(ValueError(f"unknown {name} {value!r}{f'; did you mean {close[0]!r}' if close else ''}; "
                             f"choose one of {', '.join(choices)}"))
    if whowhen is not None and not whowhen.is_dir():
        fail(FileNotFoundError(f"--whowhen {whowhen} is not a folder of Who&When JSON files"))
    out = out or Path("runs") / time.strftime("eval-critic-%Y%m%d-%H%M%S")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        fail(FileExistsError(f"--out {out} already exists and is not an empty folder; choose another or delete it"))
    env_kwargs = parse_kwargs(kw)
    try:
        for env_id in env_ids or []:
            spec(env_id)
        from lang_pz.backends import make_backend
        from lang_pz.critics import CentralCritic
        from lang_pz.evaluation.faults import run_fault_benchmark, summary_dict
        from lang_pz.evaluation.whowhen import run_whowhen_benchmark

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
        fail(exc)
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


