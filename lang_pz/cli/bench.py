"""``lang-pz bench``: teams x envs x seeds -> a results table with bootstrap intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from lang_pz.cli.common import BackendOptionOption, KwOption, app, backend_options, check_backend, fail, parse_kwargs
from lang_pz.cli.failures import exit_failed, failed_line


@app.command()
def bench(
    out: Annotated[
        Path,
        typer.Option(
            help="results folder (episodes.jsonl, summary.md/.csv/.json/.png); re-running with it skips finished episodes"
        ),
    ],
    config: Annotated[Path | None, typer.Option(help="YAML bench config (see lang_pz.bench.config)")] = None,
    env_id: Annotated[str | None, typer.Option("--env", help="one env id (instead of --config)")] = None,
    kw: KwOption = None,
    team: Annotated[
        list[str] | None,
        typer.Option(
            help="team spec, repeatable, optionally NAME=:SPEC, e.g. random, heuristic, "
            "'piston_0=llm;*=heuristic', run:RUN_DIR, learned:WEIGHTS.zip"
        ),
    ] = None,
    seeds: Annotated[str, typer.Option(help="episode seeds: A-B (inclusive) or a,b,c")] = "0-4",
    objective: Annotated[
        str | None, typer.Option(help="team_return, return:AGENT, win:AGENT or soups (default: the env's)")
    ] = None,
    backend: Annotated[
        str | None, typer.Option(help="LLM backend for llm/run seats: 'embedded' or 'openai:<model>'")
    ] = None,
    backend_opt: BackendOptionOption = None,
    price: Annotated[str, typer.Option(help="USD per million prompt,completion tokens (uncached calls)")] = "0,0",
    data_dir: Annotated[Path | None, typer.Option(help="benchmark data folder for task envs (adds data_dir=)")] = None,
    plot: Annotated[bool, typer.Option(help="write summary.png")] = True,
    log: Annotated[
        list[str] | None,
        typer.Option(help="also log to a tracker (repeatable): tensorboard:DIR, wandb:offline[:DIR] or wandb:online"),
    ] = None,
) -> None:
    """Benchmark teams (LLM, random, scripted, learned, mixed) on envs; prints the results table.

    Exit code 0 when every episode was played; 1 when episodes failed (the LLM failed them for
    good, e.g. its endpoint went down: they are not scored, the table's "failed"
    column gives their share, failures.jsonl their errors, and the last line how many and the
    first error; re-running the command plays only them again); 2 when refused."""
    from lang_pz.backends import check_backend_spec
    from lang_pz.bench import load_config, run_bench, summaries, write_results
    from lang_pz.bench.config import case_from_dict
    from lang_pz.bench.report import markdown_table
    from lang_pz.bench.runner import read_failures
    from lang_pz.error import LangPZError
    from lang_pz.trackers import open_trackers

    if out.exists() and not out.is_dir():
        fail(
            FileExistsError(
                f"--out {out} is a file; bench writes a results folder: give a new folder, or an "
                "earlier bench's folder to resume it"
            )
        )
    try:
        p_in, p_out = (float(x) for x in price.split(","))
    except ValueError:
        fail(ValueError(f"--price {price!r} must be two numbers IN,OUT (USD per million tokens), e.g. 0.15,0.6"))
    dd = str(data_dir) if data_dir is not None else None
    try:
        if (config is None) == (env_id is None):
            raise ValueError("give either --config FILE or --env ID with --team (not both, not neither)")
        if config is not None:
            if team or kw or objective:
                raise ValueError("--team, --kw and --objective belong in the config file when --config is given")
            cases, settings = load_config(config, dd)
        else:
            if not team:
                raise ValueError("--env needs at least one --team, e.g. --team random --team heuristic")
            teams: dict[str, str] = {}
            for t in team:
                name, sep, spec = t.partition("=:")
                name, spec = (name, spec) if sep else (t, t)
                if teams.get(name, spec) != spec:  # the second would replace the first, unseen
                    raise ValueError(
                        f"--team {t!r}: the name {name!r} is already the team {teams[name]!r}; give each team its "
                        "own name (NAME=:SPEC)"
                    )
                teams[name] = spec
            cases = [
                case_from_dict(
                    {"id": env_id, "kwargs": parse_kwargs(kw), "seeds": seeds, "teams": teams, "objective": objective}, dd
                )
            ]
            settings = {}
        chosen = backend or settings.get("backend", "embedded")
        check_backend_spec(str(chosen))  # a typo is refused even when no seat asks the LLM
        options = backend_options(backend_opt, [str(chosen)]).get(str(chosen), {})
        llm: Any = str(chosen)
        if options or str(chosen) != "embedded":  # a remote endpoint is checked before the first episode
            from lang_pz.backends import make_backend

            llm = make_backend(str(chosen), **options)
            if str(chosen) != "embedded":
                check_backend(llm)

        def progress(r: dict) -> None:
            usage = f", {r['llm_calls']} LLM calls" if r["llm_calls"] else ""
            typer.echo(
                f"{r['env']} | {r['team']} | seed {r['seed']}: {r['objective']} = {r['value']:.3f} "
                f"({r['seconds']:.1f} s{usage})",
                err=True,
            )

        with open_trackers(log or [], {"cases": [c.name for c in cases], "backend": str(chosen)}) as trackers:

            def on_episode(r: dict) -> None:
                progress(r)
                trackers.bench_episode(r)

            failures: list[dict] = []

            def on_failure(r: dict) -> None:
                failures.append(r)
                typer.secho(
                    f"{r['env']} | {r['team']} | seed {r['seed']}: failed, not scored: {r['error']}",
                    fg=typer.colors.YELLOW,
                    err=True,
                )

            try:
                records = run_bench(
                    cases, out, backend=llm, price_per_mtok=(p_in, p_out), on_episode=on_episode, on_failure=on_failure
                )
            finally:
                if not isinstance(llm, str):
                    llm.close()
            rows = summaries(cases, records, read_failures(out))
            paths = write_results(rows, out, plot=plot)
            trackers.bench_rows(rows, markdown_table(rows))
        typer.echo(markdown_table(rows))
        typer.echo("written: " + ", ".join(str(p) for p in paths.values()), err=True)
    except (LangPZError, ValueError, OSError) as exc:
        fail(exc)
    failed = sum(r.failed for r in rows)
    if failed:  # every failed seed was tried in this call (the others were played earlier)
        first = failures[0]
        exit_failed(
            failed_line(
                failed,
                sum(r.episodes + r.failed for r in rows),
                f"{first['env']} | {first['team']} | seed {first['seed']}",
                first["error"],
                f"their errors are in {out / 'failures.jsonl'}; once the cause is fixed, run the same command again: "
                "it plays only the failed episodes",
            )
        )
