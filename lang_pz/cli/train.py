"""``lang-pz train`` and ``lang-pz report``: run, resume and summarise training runs."""

from __future__ import annotations

import difflib
import time
import warnings
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
    parse_kwargs,
    yaml_value,
)
from lang_pz.cli.settings import flat_notes, merge_set, set_fields
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
            f"Only with --method {method}: the {method}: section of a file, --set {method}.KEY=VALUE:",
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
            help="any setting KEY=VALUE, a method's as METHOD.KEY (repeatable; values are YAML), listed below",
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
    from lang_pz.training.config import ROLES, setting_names
    from lang_pz.training.layout import import_modules
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
    try:
        for pair in set_ or []:  # --set imports=[...] may register the method or critic mode other keys name
            if pair.partition("=")[0].strip() == "imports":
                import_modules(yaml_value(pair.partition("=")[2], "--set imports"))
    except (ValueError, typer.BadParameter) as exc:
        fail(exc)
    names, run_method = setting_names(), method or fields.get("method") or "langmarl"
    for key, value in overrides.items():
        if value is None:
            continue
        # an option of a method's setting goes into that method's section (the run's method's, if
        # it has the setting), replacing a flat value of the file; one of another method stays flat,
        # for TrainConfig to refuse unless the file has that method's section
        model = sections().get(run_method)
        home = (run_method if model is not None and key in model.model_fields else names[key]) if names[key] else ""
        section = fields.get(home) if home else None
        if home and (isinstance(section, dict) or (section is None and home == run_method)):
            fields.pop(key, None)
            fields[home] = {**(section or {}), key: value}
        else:
            fields[key] = value
    if kw:
        fields["env_kwargs"] = {**fields.get("env_kwargs", {}), **parse_kwargs(kw)}
    try:
        settings = set_fields(set_ or [])
        flagged = {k for k, v in overrides.items() if v is not None}
        for key, value in settings.items():
            twice = sorted(flagged & set(value)) if isinstance(value, dict) and key in sections() else []
            twice += [key] if key in flagged else []
            if twice:
                where_set = f"{key}.{twice[0]}" if twice[0] != key else key
                raise ValueError(
                    f"{twice[0]} is given twice on the command line, by its option and by --set {where_set}=...; "
                    "give it once"
                )
        for note in merge_set(fields, settings, config):
            say(note)
    except (ValueError, typer.BadParameter) as exc:
        fail(exc)
    for note in flat_notes(from_file, fields.get("method", "langmarl"), config) + flat_notes(
        settings, fields.get("method", "langmarl"), flag=True
    ):
        say(f"warning: {note}")
    fields.setdefault("run_dir", time.strftime("runs/%Y%m%d-%H%M%S"))
    target = Path(str(fields["run_dir"])).expanduser()
    if target.exists() and not target.is_dir():
        fail(NotADirectoryError(f"--run-dir {target} is a file; give a new (or empty) folder for the run"))
    try:
        with warnings.catch_warnings():  # the flat keys' DeprecationWarning: said above, once each
            warnings.filterwarnings("ignore", r".* given flat", DeprecationWarning)
            cfg = TrainConfig(**fields)
        if backend_opt:  # each option to every backend of the run that takes it, over the file's
            shared: dict[str, Any] = dict(fields.get("backend_options") or {})
            for spec, share in backend_options(backend_opt, [cfg.backend_spec(r) for r in ROLES]).items():
                shared[spec] = {**shared.get(spec, {}), **share}
            fields["backend_options"] = shared
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", r".* given flat", DeprecationWarning)
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
