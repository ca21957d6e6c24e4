"""``lang-pz train`` and ``lang-pz report``: run, resume and summarise training runs."""

from __future__ import annotations

import difflib
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from lang_pz.cli.common import (
    BackendOptionOption,
    KwOption,
    app,
    backend_options,
    check_backend_specs,
    error_lines,
    fail,
    given_twice,
    parse_kwargs,
    yaml_value,
)
from lang_pz.configfile import ConfigFileError, load_yaml, where


def _config_help() -> str:
    from lang_pz.training.config import TrainConfig
    from lang_pz.training.registry import sections

    def rows(model: Any, prefix: str = "") -> list[str]:
        out = []
        for name, f in model.model_fields.items():
            default = f.default_factory() if f.default_factory is not None else f.default
            out.append(f"{prefix}{name} [default: {default!r}]: {f.description}")
        return out

    lines = ["Every setting, settable in --config or with --set KEY=VALUE. Common to every method:", "", *rows(TrainConfig)]
    for method, model in sections().items():
        lines += [
            "",
            f"Only with --method {method} (the {method}: section; flat keys are moved there):",
            "",
            *rows(model, f"{method}."),
        ]
    from rich.markup import escape  # typer renders help text as rich markup

    return escape("\n\n".join(lines))


def _listed(names: list[str]) -> str:
    """``a, b or c``."""
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def _critic_modes() -> str:
    from lang_pz.critics.modes import critic_modes

    return _listed(critic_modes())


def _methods() -> str:
    from lang_pz.training.registry import described

    return described()


def _field(key: str) -> Any:
    """The pydantic field of a setting name (flat or ``method.name``), or ``None``."""
    from lang_pz.training.config import TrainConfig, setting_names
    from lang_pz.training.registry import sections

    where = setting_names().get(key)
    if where is None:
        return None
    return (sections()[where] if where else TrainConfig).model_fields[key.rpartition(".")[2]]


def set_fields(pairs: list[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs as config settings (``KEY`` common, or a method's: flat or
    ``maskills.KEY``): values are YAML, except that a text field takes the value as written (``No``,
    ``Stay: wait`` stay text) and YAML's null (``null``, ``~``, empty) unsets an optional text field.

    Raises:
        ValueError: a pair without ``=``, an unknown field (with a did-you-mean), a value that is
            not valid YAML, or a key given twice (``--set k=a --set k=b``, as ``--kw`` refuses it:
            :func:`lang_pz.cli.common.given_twice`).
    """
    from lang_pz.training.config import setting_names

    out: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set needs KEY=VALUE, got {pair!r} (e.g. --set {pair}=VALUE)")
        if key.strip() in seen:
            raise ValueError(f"--set {given_twice(key.strip(), seen[key.strip()], pair)}")
        seen[key.strip()] = value
        field = _field(key)
        if field is None:
            close = difflib.get_close_matches(key, list(setting_names()), n=1)
            raise ValueError(
                f"--set {pair!r}: {key!r} is not a TrainConfig field"
                f"{f'; did you mean {close[0]!r}' if close else ''} (see --help)"
            )
        annotation = str(field.annotation)
        if annotation == "str | None" and value.strip() in ("", "~", "null", "Null", "NULL"):
            parsed = None
        elif annotation in ("<class 'str'>", "str | None"):
            parsed = value
        else:
            try:
                parsed = yaml_value(value, f"--set {key}")
            except typer.BadParameter as exc:
                raise ValueError(exc.message) from None
        method, dot, name = key.rpartition(".")
        if dot:
            out.setdefault(method, {})[name] = parsed
        else:
            out[key] = parsed
    return out


def merge_set(fields: dict[str, Any], settings: dict[str, Any], config: Path | None = None) -> list[str]:
    """Lay ``--set`` settings (from :func:`set_fields`) over ``fields`` (a config file's), in place.

    A method's setting joins that method's section when the file has one. ``--set METHOD.KEY``
    where the file gives ``KEY`` flat (``examples/demo.yaml``'s ``critic_mode:``) replaces the
    flat value: the command line wins, and one note per such key says so.

    Returns:
        The notes (to print once each).
    """
    from lang_pz.training.config import setting_names
    from lang_pz.training.registry import sections

    names, methods = setting_names(), sections()
    notes = []
    where = f" of {config}" if config is not None else ""
    for key, value in settings.items():
        section = fields.get(key if key in methods else names[key])
        if key in methods:
            for name in value:
                if name in fields:  # given flat in the file, now in the section: the command line wins
                    old = fields.pop(name)
                    notes.append(f"--set {key}.{name}={value[name]!r} replaces {name}: {old!r}{where}")
            fields[key] = {**section, **value} if isinstance(section, dict) else value
        elif names[key] and isinstance(section, dict):
            section[key] = value
        else:
            fields[key] = value
    return notes


def _presets() -> str:
    from lang_pz.presets import preset_names

    return ", ".join(preset_names())


@app.command(epilog=_config_help())
def train(
    config: Annotated[Path | None, typer.Option(help="YAML or JSON file of TrainConfig fields")] = None,
    preset: Annotated[
        str | None, typer.Option(help=f"a paper's setup (lang_pz.presets), instead of --config: {_presets()}")
    ] = None,
    resume: Annotated[Path | None, typer.Option(help="continue this run folder (its config.json is used)")] = None,
    env_id: Annotated[str | None, typer.Option("--env", help="environment id \\[default: butterfly/pistonball-v0]")] = None,
    kw: KwOption = None,
    iterations: Annotated[int | None, typer.Option(help="training iterations \\[default: 2]")] = None,
    episodes: Annotated[int | None, typer.Option(help="episodes per iteration \\[default: 1]")] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="first episode seed \\[default: 0]")] = None,
    critic_mode: Annotated[
        str | None, typer.Option(help=f"langmarl: a registered critic mode, {_critic_modes()} \\[default: central_credit]")
    ] = None,
    backend: Annotated[str | None, typer.Option(help="actor backend \\[default: embedded]")] = None,
    critic_backend: Annotated[str | None, typer.Option(help="critic backend \\[default: actor's]")] = None,
    optimiser_backend: Annotated[str | None, typer.Option(help="optimiser backend \\[default: actor's]")] = None,
    backend_opt: BackendOptionOption = None,
    run_dir: Annotated[Path | None, typer.Option(help="run folder \\[default: runs/<time>]")] = None,
    executor: Annotated[
        str | None,
        typer.Option(help="where episodes run: local or ray ($RAY_ADDRESS's cluster, else a local one) \\[default: local]"),
    ] = None,
    method: Annotated[str | None, typer.Option(help=f"a registered method: {_methods()} \\[default: langmarl]")] = None,
    skills: Annotated[
        Path | None,
        typer.Option(help="maskills: the starting skill library folder (hand-written Agent Skills; default: none)"),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="any setting KEY=VALUE, a method's as METHOD.KEY or flat (repeatable; values are YAML), listed below",
        ),
    ] = None,
    log: Annotated[
        list[str] | None,
        typer.Option(help="also log to a tracker (repeatable): tensorboard:DIR, wandb:offline[:DIR] or wandb:online"),
    ] = None,
) -> None:
    """Train text policies (rollout -> critic -> per-agent gradient -> validated update), or with
    --method maskills a skill library (rollout -> withheld-skill re-runs -> skill critic -> library
    edits -> validated, rolled back on a regression)."""
    from pydantic import ValidationError

    from lang_pz.error import LangPZError
    from lang_pz.runs import RunFolder
    from lang_pz.trackers import open_trackers
    from lang_pz.training import TrainConfig
    from lang_pz.training import train as run_training
    from lang_pz.training.config import ROLES, import_modules, setting_names
    from lang_pz.training.registry import sections

    say = lambda msg: typer.echo(msg, err=True)  # noqa: E731
    if resume is not None:
        given = [
            n
            for n, v in (
                ("--config", config),
                ("--preset", preset),
                ("--env", env_id),
                ("--kw", kw),
                ("--iterations", iterations),
                ("--episodes", episodes),
                ("--seed", seed),
                ("--critic-mode", critic_mode),
                ("--backend", backend),
                ("--critic-backend", critic_backend),
                ("--optimiser-backend", optimiser_backend),
                ("--backend-option", backend_opt),
                ("--run-dir", run_dir),
                ("--executor", executor),
                ("--method", method),
                ("--skills", skills),
                ("--set", set_),
            )
            if v is not None
        ]
        if given:
            fail(ValueError(f"--resume continues a run with its own config.json; drop {', '.join(given)}"))
        try:
            _check_endpoints(resume=resume)
            with open_trackers(log or [], RunFolder(resume).load_config()) as trackers:
                result = run_training(resume=resume, progress=say, callbacks=trackers.trackers)
                trackers.finish(result)
        except (LangPZError, ValueError, OSError) as exc:
            fail(exc)
            return
        except KeyboardInterrupt:
            _interrupted(resume)
        _finish(result)
        return
    fields: dict[str, Any] = {}
    from_file: dict[str, Any] = {}  # the file's settings as written (values the command line may replace)
    if preset is not None:
        from lang_pz.presets import preset_path

        if config is not None:
            fail(ValueError("give --preset or --config, not both (copy the preset's file to change it: --config)"))
        try:
            config = preset_path(preset)
        except LangPZError as exc:
            fail(exc)
    if config is not None:
        if not config.exists():
            fail(FileNotFoundError(f"--config {config} does not exist"))
        try:
            loaded = load_yaml(config)
        except ConfigFileError as exc:
            fail(ValueError(f"--config {exc}"))
        if loaded is None:  # an empty file, or only comments: a config that was not saved, or the wrong file
            fail(
                ValueError(
                    f"--config {config} holds no settings (the file is empty or only comments); write TrainConfig "
                    "fields in it (see `lang-pz train --help`), or drop --config to train on the defaults"
                )
            )
        fields = loaded
        if not isinstance(fields, dict):
            fail(ValueError(f"--config {config} must hold a mapping of TrainConfig fields"))
        try:
            import_modules(fields.get("imports"))  # they may register the file's method or critic mode
        except ValueError as exc:
            fail(ValueError(f"--config {where(config, 'imports')}: {exc}"))
        known = [*(k for k in setting_names() if "." not in k), *sections()]
        for key in fields:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                fail(
                    ValueError(
                        f"--config {where(config, key)}: {key!r} is not a TrainConfig field"
                        f"{f'; did you mean {close[0]!r}' if close else ''} (see `lang-pz train --help`)"
                    )
                )
        from_file = {k: dict(v) if isinstance(v, dict) else v for k, v in fields.items()}
    overrides = {
        "env_id": env_id,
        "iterations": iterations,
        "episodes_per_iteration": episodes,
        "seed": seed,
        "critic_mode": critic_mode,
        "actor_backend": backend,
        "critic_backend": critic_backend,
        "optimiser_backend": optimiser_backend,
        "run_dir": str(run_dir) if run_dir else None,
        "executor": executor,
        "method": method,
        "skills": str(skills) if skills is not None else None,
    }
    names = setting_names()
    for key, value in overrides.items():
        if value is not None:  # an option of a method's setting goes into that method's section, if the file has one
            section = fields.get(names[key]) if names[key] else None
            (section if isinstance(section, dict) else fields)[key] = value
    if kw:
        fields["env_kwargs"] = {**fields.get("env_kwargs", {}), **parse_kwargs(kw)}
    try:
        for pair in set_ or []:  # --set imports=[...] may register the method or critic mode other keys name
            if pair.partition("=")[0].strip() == "imports":
                import_modules(yaml_value(pair.partition("=")[2], "--set imports"))
        for note in merge_set(fields, set_fields(set_ or []), config):
            say(note)
    except (ValueError, typer.BadParameter) as exc:
        fail(exc)
    fields.setdefault("run_dir", time.strftime("runs/%Y%m%d-%H%M%S"))
    target = Path(str(fields["run_dir"])).expanduser()
    if target.exists() and not target.is_dir():
        fail(NotADirectoryError(f"--run-dir {target} is a file; give a new (or empty) folder for the run"))
    try:
        cfg = TrainConfig(**fields)
        if backend_opt:  # each option to every backend of the run that takes it, over the file's
            shared: dict[str, Any] = dict(fields.get("backend_options") or {})
            for spec, share in backend_options(backend_opt, [cfg.backend_spec(r) for r in ROLES]).items():
                shared[spec] = {**shared.get(spec, {}), **share}
            fields["backend_options"] = shared
            cfg = TrainConfig(**fields)
    except ValidationError as exc:
        if config is not None:
            _fail_in_file(exc, config, from_file, fields)
        fail(exc)
        return
    try:
        _check_endpoints(cfg)
        with open_trackers(log or [], cfg.model_dump(mode="json")) as trackers:
            result = run_training(cfg, progress=say, callbacks=trackers.trackers)
            trackers.finish(result)
    except (ValidationError, LangPZError, ValueError, OSError) as exc:
        fail(exc)
        return
    except KeyboardInterrupt:
        _interrupted(Path(fields["run_dir"]))
    _finish(result)


def _check_endpoints(cfg: Any = None, resume: Path | None = None) -> None:
    """Check the run's remote endpoints before its first episode (:func:`check_backend_specs`),
    after its run folder (a used folder is refused first, as training would: nothing is written).

    Raises:
        RunDirError: the run folder is not new, or ``resume`` is not a run.
        BackendError: an endpoint cannot serve the run.
    """
    from lang_pz.training.config import ROLES
    from lang_pz.training.state import open_run

    _, cfg, _ = open_run(cfg, resume)
    check_backend_specs(cfg.backend_options, [cfg.backend_spec(r) for r in ROLES])


def _fail_in_file(exc: Any, config: Path, from_file: dict[str, Any], fields: dict[str, Any]) -> None:
    """Report a ``ValidationError`` one line per problem (:func:`error_lines`), each value that
    came from the config file (not replaced on the command line) prefixed with ``FILE:LINE``."""
    from lang_pz.training.registry import sections

    methods = sections()
    lines = error_lines(exc)
    out = []
    for e, line in zip(exc.errors(include_url=False), lines, strict=False):
        loc = [str(part) for part in e["loc"]]
        node_file, node_now = from_file, fields
        for part in loc:
            node_file = node_file.get(part, _MISSING) if isinstance(node_file, dict) else _MISSING
            node_now = node_now.get(part, _MISSING) if isinstance(node_now, dict) else _MISSING
        if loc and node_file is not _MISSING and node_file == node_now:
            line = f"{where(config, *loc)}: {line}"
        elif (
            len(loc) > 1 and loc[0] in methods and loc[1] in from_file and from_file[loc[1]] == fields.get(loc[1], _MISSING)
        ):
            line = f"{where(config, loc[1])}: {line}"  # given flat in the file, moved to its section
        out.append(line)
    for line in out + lines[len(out) :]:
        typer.secho(f"error: {line}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


_MISSING = object()


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
    out: Annotated[Path | None, typer.Option(help="PNG to write \\[default: RUN_DIR/learning_curve.png]")] = None,
) -> None:
    """Summarise a training run and plot its learning curve (works on unfinished runs too)."""
    from lang_pz.error import LangPZError
    from lang_pz.report import load_run, plot_learning_curve, summary_text

    if out is not None:
        if out.is_dir():
            fail(
                IsADirectoryError(
                    f"--out {out} is a folder; give the PNG file to write, e.g. --out {out / 'learning_curve.png'}"
                )
            )
        if out.suffix.lower() != ".png":
            fail(
                ValueError(
                    f"--out {out}: the learning curve is a PNG; give a path ending in .png, e.g. "
                    f"--out {out.with_suffix('.png')}"
                )
            )
    try:
        run = load_run(run_dir)
        png = plot_learning_curve(run, out or run_dir / "learning_curve.png")
    except (LangPZError, OSError) as exc:
        fail(exc)
        return
    typer.echo(summary_text(run))
    typer.echo(f"\nlearning curve: {png}")
