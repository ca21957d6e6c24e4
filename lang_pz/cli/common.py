"""What every ``lang-pz`` command shares: the Typer app, ``--kw`` parsing, error exit."""

from __future__ import annotations

from typing import Annotated, Any

import typer
import yaml

from lang_pz.configfile import safe_load

app = typer.Typer(
    help="lang_pz: language multi-agent RL on PettingZoo environments.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

KwOption = Annotated[
    list[str] | None,
    typer.Option("--kw", help="environment keyword argument KEY=VALUE (repeatable), e.g. --kw n_pistons=5"),
]


def parse_kwargs(pairs: list[str] | None, option: str = "--kw") -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a dict, each value parsed by :func:`yaml_value` (so ``5`` is an int).

    Raises:
        typer.BadParameter: a pair is not ``KEY=VALUE``, a value is not YAML, or a key is given
            twice (``--kw n=1 --kw n=2``: which one was meant is not guessed).
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE (e.g. n_pistons=5)", param_hint=option)
        if key in out:
            raise typer.BadParameter(given_twice(key, out[key], pair), param_hint=option)
        out[key] = yaml_value(value, f"{option} {key}")
    return out


def given_twice(key: str, first: Any, pair: str) -> str:
    """The refusal of a ``KEY=VALUE`` option whose key was given before with value ``first``
    (``--kw n=1 --kw n=2``, ``--set k=a --set k=b``): which one was meant is not guessed."""
    return f"{key} is given twice ({key}={first!r} and {pair!r}); give each key once"


def yaml_value(value: str, where: str) -> Any:
    """``value`` parsed as YAML (so ``5`` is an int, ``1e3`` a float and ``[a, b]`` a list; see
    :func:`lang_pz.configfile.safe_load`), or a ``typer.BadParameter`` naming it."""
    try:
        return safe_load(value)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise typer.BadParameter(
            f"{where}: {value!r} is not a valid YAML value ({problem}); "
            "quote text values, e.g. --set 'initial_policy=\"Stay: wait\"'"
        ) from None


def error_lines(exc: BaseException) -> list[str]:
    """What the user reads for ``exc``: one line per problem.

    A pydantic ``ValidationError`` gives ``field: message (got VALUE)`` per problem, without
    pydantic's documentation links; an ``OSError`` names its path before the system's reason;
    anything else is ``str(exc)``.
    """
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        lines = []
        for e in exc.errors(include_url=False):
            field = ".".join(str(part) for part in e["loc"])
            msg = str(e["msg"]).removeprefix("Value error, ")
            lines.append(f"{field}: {msg} (got {e['input']!r})" if field else msg)
        return lines or [str(exc)]
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        return [f"{exc.filename}: {exc.strerror}"]
    return [str(exc) or type(exc).__name__]


def fail(exc: BaseException) -> None:
    """Print ``error: ...`` (one line per problem, :func:`error_lines`) and exit with code 2."""
    for line in error_lines(exc):
        typer.secho(f"error: {line}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)
