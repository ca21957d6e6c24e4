"""``lang-pz adherence`` and ``lang-pz eval-critic``: measure models and critics."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lang_pz.cli.common import (  # noqa: F401
    BackendOptionOption,
    KwOption,
    app,
    backend_options,
    check_backend,
    fail,
    parse_kwargs,
    yaml_value,
)
from lang_pz.cli.critic_options import check_env, check_evidence

if TYPE_CHECKING:
    from lang_pz.evaluation.labels import LabelledEpisode


@app.command()
def adherence(
    backend: Annotated[str, typer.Option(help="'embedded' or 'openai:<model>'")] = "embedded",
    prompt_format: Annotated[str | None, typer.Option(help="chat or completion \\[default: the backend's]")] = None,
    observations: Annotated[int, typer.Option(min=1, help="real Pistonball observations per policy")] = 8,
    seed: Annotated[int, typer.Option(min=0, help="seed of the episodes the observations come from")] = 0,
    backend_opt: BackendOptionOption = None,
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
        llm = make_backend(backend, **backend_options(backend_opt, [backend]).get(backend, {}))
        check_backend(llm)
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


FAULT_CHOICES = ("misplay", "harmful", "idle", "random")
BASE_CHOICES = ("heuristic", "greedy", "random", "oracle")


def _label_modes() -> tuple[str, ...]:
    """Modes --labels can ask afresh about a labelled episode: those that read the episode alone
    (the others need re-runs of an env)."""
    from lang_pz.critics.modes import critic_modes

    return tuple(critic_modes("none"))


def _choice(name: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        close = difflib.get_close_matches(value, choices, n=1)
        fail(
            ValueError(
                f"unknown {name} {value!r}{f'; did you mean {close[0]!r}' if close else ''}; "
                f"choose one of {', '.join(choices)}"
            )
        )


def _labelled(labels: Path | None, given: list[str], max_chars: int) -> tuple[list[LabelledEpisode], list[str]]:
    """The labelled episodes of ``--labels`` and the ``--critic-mode``s to ask about them (a note
    names each mode that cannot be asked; exits with code 2 on a bad labels file, or on
    Who&When-style labels without a mode to ask)."""
    from lang_pz.error import LangPZError
    from lang_pz.evaluation.labels import load_labelled

    if labels is None:
        return [], []
    try:
        labelled = load_labelled(labels, max_chars=max_chars)
    except LangPZError as exc:
        fail(ValueError(f"--labels: {exc}"))
    modes = [m for m in dict.fromkeys(given) if m in _label_modes()]
    for m in dict.fromkeys(given):
        if m not in _label_modes():
            typer.echo(
                f"note: --critic-mode {m} is not asked about the labelled episodes (it needs re-runs); a run trained "
                "with it is scored through its recorded verdicts ('recorded')",
                err=True,
            )
    if any(ep.label.whowhen is not None for ep in labelled) and not modes:
        fail(
            ValueError(
                f"--labels {labels} labels Who&When-style cases, which have no recorded verdict: add --critic-mode "
                f"{' or '.join(_label_modes())} to ask a critic about them"
            )
        )
    return labelled, modes


def _modes_help() -> str:
    from lang_pz.critics.modes import described

    return f"critic under test (repeatable), a registered critic mode: {described()}"


def _critic(mode: str, llm: Any, words: tuple[str, ...], window: int | None, prompt_chars: int) -> Any:
    """The critic of ``mode`` through the one factory (:func:`lang_pz.critics.make_critic`), with the
    training config's defaults: a re-running mode gets ``words``, a searching one ``window``."""
    from lang_pz.critics.modes import critic_mode, make_critic
    from lang_pz.training.config import TrainConfig

    evidence = critic_mode(mode).evidence
    section: dict[str, Any] = {"critic_mode": mode, "counterfactual": list(words) if evidence != "none" else []}
    if window is not None and evidence == "search":
        section["decisive_window"] = window
    return make_critic(TrainConfig.model_validate({"langmarl": section, "critic_max_prompt_chars": prompt_chars}), llm)


@app.command("eval-critic")
def eval_critic(
    env_ids: Annotated[
        list[str] | None,
        typer.Option(
            "--env",
            help="fault-injection benchmark on this environment id (repeatable), e.g. butterfly/pistonball-v0",
            show_default="none",
        ),
    ] = None,
    kw: KwOption = None,
    critic_modes: Annotated[
        list[str] | None,
        typer.Option("--critic-mode", help=_modes_help(), show_default="central_credit"),
    ] = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option(
            help="re-runs given to the counterfactual critic, per window of decisions of each agent (repeatable): "
            "reference (the window as the base team would have played it: identifies the faulty agent; a fault "
            "benchmark knows the base team), alternatives (every other action word: what training can compute), "
            "default, random, or an action word",
            show_default="alternatives; default for free-text envs",
        ),
    ] = None,
    evidence_window: Annotated[
        int | None, typer.Option(min=1, help="decisions per re-run window", show_default="--window")
    ] = None,
    cases: Annotated[int, typer.Option(min=1, help="kept fault-injection cases per --env")] = 20,
    seed: Annotated[int, typer.Option(min=0, help="master seed (the i-th seed tried is seed + i)")] = 0,
    base: Annotated[
        str | None,
        typer.Option(
            help="the good team: heuristic (Pistonball), greedy (Overcooked, both cooks), oracle (tasks/gsm8k-v0, "
            "tasks/math500-v0: the solver writes the gold answer, the verifier confirms) or random",
            show_default="per env: Pistonball heuristic, Overcooked greedy, GSM8K/MATH oracle, else random",
        ),
    ] = None,
    fault: Annotated[
        str | None,
        typer.Option(
            help="misplay (an action the base team also plays, in the wrong state), harmful, idle or random",
            show_default="misplay; harmful for GSM8K/MATH",
        ),
    ] = None,
    fault_action: Annotated[
        str | None,
        typer.Option(
            help="the faulty action word or text",
            show_default="misplay: the base team's own actions; harmful: per env (Pistonball: the opposite move; "
            "Overcooked skills: 'place on counter'; GSM8K/MATH: the wrong answer 0); idle: the no-op",
        ),
    ] = None,
    window: Annotated[int, typer.Option(min=1, help="consecutive decisions made faulty per case")] = 2,
    min_effect: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="keep a case only if the fault lowered the team return by at least this fraction of the "
            "unfaulted return (and by more than 0)",
        ),
    ] = 0.02,
    keep_inert: Annotated[
        bool, typer.Option(help="also keep faults that did not lower the team return (they test no credit assignment)")
    ] = False,
    tolerance: Annotated[int, typer.Option(min=0, help="steps of slack around the faulty window for a step hit")] = 0,
    whowhen: Annotated[
        Path | None, typer.Option(help="also score a Who&When folder of JSON cases", show_default="none")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Who&When: score only the first N cases", show_default="all")
    ] = None,
    max_chars: Annotated[int, typer.Option(min=40, help="Who&When: characters kept of each message")] = 200,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="human credit labels, JSONL (docs/credit.md): agreement of the runs' recorded critic verdicts with "
            "them, and of each --critic-mode given among central_credit, central_global, independent (asked afresh)",
            show_default="none",
        ),
    ] = None,
    one_call: Annotated[
        bool,
        typer.Option(help="Who&When: one critic call per case (steps subsampled) instead of every step in several calls"),
    ] = False,
    prompt_chars: Annotated[
        int, typer.Option(min=1000, help="the LLM critic's budget for the trajectory in its prompt (characters)")
    ] = 5000,
    threads: Annotated[
        int | None, typer.Option(min=1, help="CPU threads of the embedded model", show_default="llama.cpp's choice")
    ] = None,
    backend: Annotated[str, typer.Option(help="critic backend: 'embedded' or 'openai:<model>'")] = "embedded",
    backend_opt: BackendOptionOption = None,
    out: Annotated[
        Path | None, typer.Option(help="results folder, must be new or empty", show_default="runs/eval-critic-<time>")
    ] = None,
) -> None:
    """Measure critics' credit assignment against known faults (who and when), next to chance,
    a random critic and trivial rules; or against human labels (--labels)."""
    import json
    import time

    from lang_pz.error import LangPZError
    from lang_pz.registration import spec

    modes = list(dict.fromkeys(critic_modes or ["central_credit"]))
    for name, value, choices in (("--fault", fault, FAULT_CHOICES), ("--base", base, BASE_CHOICES)):
        _choice(name, value, choices)
    from lang_pz.critics.modes import critic_mode
    from lang_pz.critics.modes import critic_modes as registered_modes

    for m in modes:
        _choice("--critic-mode", m, tuple(registered_modes()))
    if not env_ids and whowhen is None and labels is None:
        fail(ValueError("nothing to evaluate: give --env ID (repeatable), --whowhen DIR and/or --labels FILE"))
    labelled, label_modes = _labelled(labels, critic_modes or [], max_chars)
    check_evidence(evidence, modes, evidence_window)
    if whowhen is not None and not whowhen.is_dir():
        fail(FileNotFoundError(f"--whowhen {whowhen} is not a folder of Who&When JSON files"))
    if whowhen is not None and set(modes) <= set(registered_modes("reruns", "search")):
        fail(
            ValueError(
                "--whowhen logs cannot be re-run: the counterfactual, decisive and coalition critics need an --env; add "
                "--critic-mode central_credit for Who&When"
            )
        )
    out = out or Path("runs") / time.strftime("eval-critic-%Y%m%d-%H%M%S")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        fail(FileExistsError(f"--out {out} already exists and is not an empty folder; choose another or delete it"))
    env_kwargs = parse_kwargs(kw)
    try:
        for env_id in env_ids or []:
            spec(env_id)
        actions = [
            check_env(env_id, env_kwargs, fault=fault, base=base, fault_action=fault_action, evidence=evidence, seed=seed)
            for env_id in env_ids or []
        ]
        from lang_pz.backends import make_backend
        from lang_pz.evaluation.bases import env_family
        from lang_pz.evaluation.faults import CriticSpec, run_fault_benchmark
        from lang_pz.evaluation.summary import rules_table, summary_dict, table
        from lang_pz.evaluation.whowhen import run_whowhen_benchmark

        options = backend_options(backend_opt, [backend]).get(backend, {})
        if threads and backend == "embedded":
            options.setdefault("n_threads", threads)
        needs_llm = bool(env_ids) or whowhen is not None or bool(label_modes)  # recorded verdicts need none
        llm = make_backend(backend, **options) if needs_llm else None
        if llm is not None:
            check_backend(llm)
        out.mkdir(parents=True, exist_ok=True)
        log = lambda msg: typer.echo(msg, err=True)  # noqa: E731
        summaries = []
        for i, env_id in enumerate(env_ids or []):
            words = tuple(evidence or (["default"] if env_family(env_id) == "math" else ["alternatives"]))
            specs = [
                CriticSpec(
                    m,
                    _critic(m, llm, words, evidence_window, prompt_chars),
                    *((words, evidence_window) if critic_mode(m).evidence == "reruns" else ()),
                )
                for m in modes
            ]
            summaries += run_fault_benchmark(
                env_id,
                specs,
                cases=cases,
                seed=seed,
                fault=fault,
                env_kwargs=env_kwargs,
                base=base,
                fault_action=actions[i],
                window=window,
                tolerance=tolerance,
                min_effect=None if keep_inert else min_effect,
                out=out / f"{i}-{env_id.replace('/', '_')}.jsonl",
                progress=log,
            )
        if whowhen is not None:
            for m in modes:
                if critic_mode(m).evidence != "none":
                    continue
                summary, _ = run_whowhen_benchmark(
                    whowhen,
                    _critic(m, llm, (), None, prompt_chars),
                    name=m,
                    seed=seed,
                    tolerance=tolerance,
                    max_chars=max_chars,
                    limit=limit,
                    chunked=not one_call,
                    out=out / f"whowhen-{m}.jsonl",
                    progress=log,
                )
                summaries.append(summary)
        agreements = []
        if labelled:
            from lang_pz.evaluation.agreement import score_labels

            agreements = score_labels(
                labelled,
                {m: _critic(m, llm, (), None, prompt_chars) for m in label_modes},
                tolerance=tolerance,
                out=out / "labels",
                progress=log,
            )
    except (LangPZError, ValueError, OSError) as exc:
        fail(exc)
        return
    (out / "summary.json").write_text(
        json.dumps(
            {
                "backend": backend,
                "summaries": [summary_dict(s) for s in summaries],
                **({"label_agreement": [a.as_dict() for a in agreements]} if agreements else {}),
            },
            indent=2,
        )
    )
    if summaries:
        typer.echo(table(summaries))
        typer.echo("\nTrivial rules and the random critic, agent / step accuracy (ties broken at random):")
        typer.echo(rules_table(summaries))
    if agreements:
        from lang_pz.evaluation.agreement import agreement_table

        typer.echo(f"Agreement with the human labels of {labels} ({len(labelled)} label(s); tolerance {tolerance} steps):")
        typer.echo(agreement_table(agreements))
    for s in summaries:
        if s.visible is not None:
            shown = round(s.visible * s.cases)
            typer.echo(
                f"{s.source} {s.critic}: the labelled step was shown to the critic in {shown} of {s.cases} "
                f"cases ({s.visible:.0%})"
            )
    typer.echo(f"results: {out}")
