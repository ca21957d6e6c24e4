"""What every ``lang-pz`` command shares: the Typer app, ``--kw`` parsing, error exit."""

from __future__ import annotations

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


def parse_kwargs(pairs: list[str] | None, option: str = "--kw") -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a dict, each value parsed as YAML (so ``5`` is an int)."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE (e.g. n_pistons=5)", param_hint=option)
        out[key.strip()] = yaml_value(value, f"{option} {key.strip()}")
    return out


def yaml_value(value: str, where: str) -> Any:
    """``value`` parsed as YAML (so ``5`` is an int and ``[a, b]`` a list), or a clear error."""
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise typer.BadParameter(f"{where}: {value!r} is not a valid YAML value ({problem}); "
                                 "quote text values, e.g. --set 'initial_policy=\"Stay: wait\"'") from None


def fail(exc: Exception) -> None:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)

