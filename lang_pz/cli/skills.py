"""``lang-pz skills check DIR``, ``lang-pz skills diff A B`` and ``lang-pz skills eval DIR --env ID``:
skill libraries on disk, and a library evaluated unchanged on another env (transfer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from lang_pz.cli.common import BackendOptionOption, KwOption, app, backend_options, check_backend, fail, parse_kwargs

skills_app = typer.Typer(
    help="Skill libraries (Agent Skills folders): validate, compare, evaluate on an env.", no_args_is_help=True
)
app.add_typer(skills_app, name="skills")


@skills_app.command("check")
def check(
    folder: Annotated[Path, typer.Argument(help="a library folder (skill folders, or scope folders of them)")],
    max_skills: Annotated[int | None, typer.Option(min=1, help="also check: most skills in the library")] = None,
    max_skills_per_scope: Annotated[int | None, typer.Option(min=1, help="also check: most skills in a scope")] = None,
    max_description_chars: Annotated[
        int | None, typer.Option(min=1, max=1024, help="also check: longest description")
    ] = None,
    max_body_chars: Annotated[int | None, typer.Option(min=1, help="also check: longest body")] = None,
) -> None:
    """Validate a (hand-written) skill library; list its skills, or every problem (exit code 2)."""
    from lang_pz.skills.files import check_library
    from lang_pz.skills.library import SkillLimits

    given = {
        k: v
        for k, v in (
            ("max_skills", max_skills),
            ("max_skills_per_scope", max_skills_per_scope),
            ("max_description_chars", max_description_chars),
            ("max_body_chars", max_body_chars),
        )
        if v is not None
    }
    library, problems = check_library(folder, SkillLimits(**given) if given else None)
    if problems:
        for p in problems:
            typer.secho(f"error: {p}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=2)
    assert library is not None
    typer.echo(f"{folder}: {len(library)} skill(s) in {len(library.scopes)} scope(s), library version {library.version}")
    for scope, s in library:
        typer.echo(
            f"  {scope}/{s.name} v{s.version}: {s.description} ({len(s.body)} body characters"
            + (f", {len(s.resources)} resource file(s)" if s.resources else "")
            + ")"
        )


@skills_app.command("diff")
def diff(
    a: Annotated[Path, typer.Argument(help="the old library folder")],
    b: Annotated[Path, typer.Argument(help="the new library folder")],
) -> None:
    """Show what changed from library A to library B: added, removed and changed skills."""
    from lang_pz.error import LangPZError
    from lang_pz.skills.diff import diff_libraries
    from lang_pz.skills.files import read_library

    try:
        lib_a, lib_b = read_library(a), read_library(b)
    except (LangPZError, OSError) as exc:
        fail(exc)
        return
    typer.echo(diff_libraries(lib_a, lib_b).render(str(a), str(b)), nl=False)


@skills_app.command("eval")
def eval_library(
    folder: Annotated[Path, typer.Argument(help="the library folder (e.g. RUN_DIR/final/skills), used unchanged")],
    env_id: Annotated[str, typer.Option("--env", help="environment id to evaluate on (e.g. tasks/math500-v0)")],
    seeds: Annotated[str, typer.Option(help="episode seeds: 'A-B' (inclusive) or 'a,b,c'")] = "0-9",
    kw: KwOption = None,
    policy: Annotated[
        str | None,
        typer.Option(
            help="every LLM agent's base instruction (used when it invokes no skill) \\[default: lang-pz train's "
            "initial_policy default]"
        ),
    ] = None,
    backend: Annotated[str, typer.Option(help="the agents' LLM backend spec")] = "embedded",
    backend_opt: BackendOptionOption = None,
    objective: Annotated[str | None, typer.Option(help="what is compared \\[default: the env's]")] = None,
    partner: Annotated[
        list[str] | None, typer.Option(help="AGENT=KIND: a fixed classical partner (random, heuristic, greedy); repeatable")
    ] = None,
    scoping: Annotated[str, typer.Option(help="who sees which scope: team, role or agent")] = "team",
    role: Annotated[list[str] | None, typer.Option(help="AGENT=ROLE: the role scope an agent sees; repeatable")] = None,
    data_dir: Annotated[Path | None, typer.Option(help="benchmark data folder for task envs (adds data_dir=)")] = None,
) -> None:
    """Evaluate a library, unchanged, on an env (transfer): mean and 95 % bootstrap interval with
    the library and for the same team with no skills, on the same seeds, and their paired difference."""
    from lang_pz.backends import make_backend
    from lang_pz.bench.config import parse_seeds
    from lang_pz.error import LangPZError
    from lang_pz.registration import kwargs_of
    from lang_pz.skills.files import read_library
    from lang_pz.skills.library import ScopeMode, Scoping
    from lang_pz.skills.team import embedded_actor
    from lang_pz.skills.transfer import evaluate_library
    from lang_pz.training import TrainConfig

    try:
        library = read_library(folder)
        kwargs = parse_kwargs(kw)
        if data_dir is not None and "data_dir" not in kwargs and "data_dir" in kwargs_of(env_id):
            kwargs["data_dir"] = str(data_dir)
        pairs = {"--partner": parse_kwargs(partner, "--partner"), "--role": parse_kwargs(role, "--role")}
        # the embedded model gets two instances (skill choices, actions), each keeping its prompt prefix
        options = backend_options(backend_opt, [backend]).get(backend, {})
        llm = embedded_actor(backend, options) if backend == "embedded" else make_backend(backend, **options)
        base = policy or TrainConfig.model_fields["initial_policy"].default
        try:
            check_backend(llm)
            result = evaluate_library(
                library,
                env_id,
                parse_seeds(seeds),
                llm,
                env_kwargs=kwargs,
                policy=base,
                objective=objective,
                scoping=Scoping(
                    cast(ScopeMode, scoping),  # Scoping checks the mode
                    {a: str(r) for a, r in pairs["--role"].items()},
                ),
                partners={a: str(k) for a, k in pairs["--partner"].items()},
            )
        finally:
            llm.close()
    except (LangPZError, OSError, ValueError) as exc:
        fail(exc)
        return
    typer.echo(result.render())
