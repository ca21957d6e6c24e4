"""``lang-pz skills check DIR`` and ``lang-pz skills diff A B``: skill libraries on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from lang_pz.cli.common import app, fail

skills_app = typer.Typer(help="Skill libraries (Agent Skills folders): validate and compare.",
                         no_args_is_help=True)
app.add_typer(skills_app, name="skills")


@skills_app.command("check")
def check(
    folder: Annotated[Path, typer.Argument(help="a library folder (skill folders, or scope folders of them)")],
    max_skills: Annotated[Optional[int], typer.Option(min=1, help="also check: most skills in the library")] = None,
    max_skills_per_scope: Annotated[Optional[int], typer.Option(min=1, help="also check: most skills in a scope")] = None,
    max_description_chars: Annotated[Optional[int], typer.Option(
        min=1, max=1024, help="also check: longest description")] = None,
    max_body_chars: Annotated[Optional[int], typer.Option(min=1, help="also check: longest body")] = None,
) -> None:
    """Validate a (hand-written) skill library; list its skills, or every problem (exit code 2)."""
    from lang_pz.skills.files import check_library
    from lang_pz.skills.library import SkillLimits

    given = {k: v for k, v in (("max_skills", max_skills), ("max_skills_per_scope", max_skills_per_scope),
                               ("max_description_chars", max_description_chars),
                               ("max_body_chars", max_body_chars)) if v is not None}
    library, problems = check_library(folder, SkillLimits(**given) if given else None)
    if problems:
        for p in problems:
            typer.secho(f"error: {p}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=2)
    assert library is not None
    typer.echo(f"{folder}: {len(library)} skill(s) in {len(library.scopes)} scope(s), library version {library.version}")
    for scope, s in library:
        typer.echo(f"  {scope}/{s.name} v{s.version}: {s.description} ({len(s.body)} body characters"
                   + (f", {len(s.resources)} resource file(s)" if s.resources else "") + ")")


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
