"""What every ``lang-pz`` command shares: the Typer app, ``--kw`` and ``--backend-option`` parsing,
the backends' start-up check, error exit."""

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

BackendOptionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--backend-option",
        help="backend constructor option KEY=VALUE (repeatable; values are YAML), e.g. --backend-option timeout_s=20 "
        "--backend-option base_url=http://127.0.0.1:8000/v1 --backend-option context_window=2048",
        show_default="none",
    ),
]


def backend_options(pairs: list[str] | None, specs: list[str]) -> dict[str, dict[str, Any]]:
    """``--backend-option KEY=VALUE`` pairs shared out to the backend specs that take them.

    Each option goes to every spec in ``specs`` whose backend takes it (``timeout_s`` to each
    ``openai:...`` spec, ``n_threads`` to ``embedded``), so one ``--backend-option base_url=...``
    serves a run whose actor, critic and optimiser use the same endpoint.

    Returns:
        spec -> its options (specs that take none are left out).

    Raises:
        typer.BadParameter: a pair that is not ``KEY=VALUE``, a value that is not YAML, a key
            given twice, or a key no backend in ``specs`` takes (with a did-you-mean).
        ValueError: a malformed spec.
    """
    import difflib

    from lang_pz.backends import option_names

    options = parse_kwargs(pairs, "--backend-option")
    names = {spec: option_names(spec) for spec in dict.fromkeys(specs)}
    for key in options:
        if not any(key in valid for valid in names.values()):
            every = sorted({n for valid in names.values() for n in valid})
            close = difflib.get_close_matches(key, every, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise typer.BadParameter(
                f"no backend of {', '.join(names)} takes the option {key!r}{hint} (options: {', '.join(every)})",
                param_hint="--backend-option",
            )
    shares = {spec: {k: v for k, v in options.items() if k in valid} for spec, valid in names.items()}
    return {spec: share for spec, share in shares.items() if share}


def check_backend(llm: Any) -> None:
    """Run ``llm``'s start-up check (:meth:`lang_pz.backends.LLMBackend.check`) before the first
    episode, and print what it found to stderr (for a remote endpoint: server, model, context,
    structured-output form, and anything the user should know).

    Raises:
        BackendError: the backend cannot serve requests (e.g. nothing answers at the endpoint,
            or the server does not serve the model).
    """
    import logging

    class PrintedHere(logging.Filter):  # the notes are printed below, as warnings: not logged as well
        def filter(self, record: logging.LogRecord) -> bool:
            return record.levelno < logging.WARNING

    logger, printed = logging.getLogger("lang_pz.backends.openai"), PrintedHere()
    logger.addFilter(printed)
    try:
        info = llm.check()
    finally:
        logger.removeFilter(printed)
    if info is not None and hasattr(info, "summary"):
        typer.echo(f"backend {getattr(llm, 'model', '')!r} at {getattr(llm, 'base_url', '?')}: {info.summary()}", err=True)
        for note in getattr(info, "notes", ()):
            typer.secho(f"warning: {note}", fg=typer.colors.YELLOW, err=True)


def check_backend_specs(options: dict[str, dict[str, Any]], specs: list[str]) -> None:
    """Build each remote backend of ``specs`` (with its ``options``), run its start-up check
    (:func:`check_backend`) and close it: a run's endpoints are checked before its first episode
    (the embedded model is not loaded for this).

    Raises:
        BackendError: a backend cannot serve requests.
        ValueError: a malformed spec or a bad option.
    """
    from lang_pz.backends import make_backend

    for spec in dict.fromkeys(specs):
        if spec.strip() == "embedded":
            continue
        llm = make_backend(spec, **{"cache": False, **options.get(spec, {})})
        try:
            check_backend(llm)
        finally:
            llm.close()


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
