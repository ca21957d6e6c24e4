"""``lang-pz envs`` and ``lang-pz play``: list environments, play episodes."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Annotated

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
from lang_pz.cli.failures import EPISODE_ERRORS, error_text, exit_failed, failed_line


@app.command()
def envs(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show keyword arguments")] = False) -> None:
    """List the registered environment ids with a one-line description."""
    import lang_pz
    from lang_pz.registration import kwargs_of

    for env_id, s in sorted(lang_pz.registry.items()):
        typer.echo(f"{env_id:34s} [{'/'.join(s.apis)}] {s.description}")
        if verbose:
            try:
                kws = kwargs_of(env_id)
            except ImportError as exc:
                typer.echo(f"{'':34s} (unavailable: {exc})")
                continue
            typer.echo(f"{'':34s} kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kws.items()))


POLICIES = ("llm", "random", "heuristic", "greedy")


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help="registered id, see `lang-pz envs`")],
    kw: KwOption = None,
    policy: Annotated[
        str, typer.Option(help="llm, random, heuristic (Pistonball only) or greedy (Overcooked only)")
    ] = "llm",
    policy_text: Annotated[str, typer.Option(help="the text policy every LLM agent gets")] = "Always push up.",
    backend: Annotated[str, typer.Option(help="'embedded' or 'openai:<model>'")] = "embedded",
    episodes: Annotated[int, typer.Option(min=1)] = 1,
    seed: Annotated[int, typer.Option(min=0, help="seed of the first episode")] = 0,
    api: Annotated[str | None, typer.Option(help="parallel or aec (default: the env's)")] = None,
    out: Annotated[Path | None, typer.Option(help="write trajectories to this JSONL file")] = None,
    show: Annotated[int, typer.Option(min=0, help="print the first N agent steps")] = 3,
    policies_from: Annotated[
        Path | None,
        typer.Option(
            "--policies",
            help="per-agent text policies: a training run folder (its final policies, which must "
            "cover every agent; without --kw the run's env kwargs are used) or a folder of AGENT.txt files (agents "
            "without one get --policy-text)",
            show_default="none",
        ),
    ] = None,
    backend_opt: BackendOptionOption = None,
) -> None:
    """Play episodes with one policy per agent and print the returns.

    Exit code 0 when every episode was played; 1 when episodes failed (the LLM failed them for
    good, e.g. its endpoint went down: the last line says how many and the first
    error); 2 when refused before playing; 130 when interrupted."""
    import lang_pz
    from lang_pz.error import LangPZError
    from lang_pz.policies.base import Policy
    from lang_pz.rollout import rollout
    from lang_pz.trajectory import TrajectoryWriter

    if policy not in POLICIES:
        close = difflib.get_close_matches(policy, POLICIES, n=1)
        fail(
            ValueError(
                f"unknown --policy {policy!r}{f'; did you mean {close[0]!r}' if close else ''}; "
                f"choose one of {', '.join(POLICIES)}"
            )
        )
    if out is not None and out.exists():
        fail(FileExistsError(f"--out {out} already exists; choose another file or delete it"))
    if out is not None and not out.parent.is_dir():
        fail(FileNotFoundError(f"--out {out}: the folder {out.parent} does not exist; create it first"))
    texts, trained = _policy_texts(policies_from) if policies_from is not None else ({}, None)
    if texts and policy != "llm":
        fail(ValueError(f"--policies gives text policies, which need --policy llm (got --policy {policy})"))
    env_kwargs = parse_kwargs(kw)
    if trained is not None and not kw and trained.get("env_id") == env_id and trained.get("env_kwargs"):
        env_kwargs = dict(trained["env_kwargs"])
        typer.echo(
            f"using the env kwargs the run {policies_from} was trained with: {_kw_args(env_kwargs)} (give --kw to override)",
            err=True,
        )
    try:
        env = lang_pz.make(env_id, api=api, **env_kwargs)  # type: ignore[arg-type]
        if not hasattr(env, "possible_agents"):
            fail(ValueError(f"{env_id} is a single-agent Gymnasium env; `play` runs PettingZoo envs"))
        policies: dict[str, Policy]
        if policy == "llm":
            from lang_pz.backends import make_backend
            from lang_pz.policies.llm import LLMPolicy

            unknown = sorted(set(texts) - set(env.possible_agents))
            if unknown:
                fail(
                    ValueError(
                        f"--policies {policies_from} has policies for {unknown}, which are not agents of "
                        f"{env_id} ({', '.join(env.possible_agents)}){_trained_on(trained)}"
                    )
                )
            missing = [a for a in env.possible_agents if a not in texts]
            if trained is not None and missing:
                fail(
                    ValueError(
                        f"--policies {policies_from}: the run has no policy for {missing} of {env_id} "
                        f"(it has {sorted(texts)}){_trained_on(trained)}"
                    )
                )
            llm = make_backend(backend, **backend_options(backend_opt, [backend]).get(backend, {}))
            check_backend(llm)
            policies = {a: LLMPolicy(texts.get(a, policy_text), llm) for a in env.possible_agents}
        elif policy == "random":
            from lang_pz.policies.random import RandomPolicy

            policies = {a: RandomPolicy(seed=seed + i) for i, a in enumerate(env.possible_agents)}
        elif policy == "greedy":
            from lang_pz.policies.overcooked import OvercookedGreedyPolicy

            if not env_id.startswith("overcooked/"):
                fail(ValueError("the greedy policy is for overcooked/<layout>-v0 only"))
            policies = {a: OvercookedGreedyPolicy(env, a, seed=seed + i) for i, a in enumerate(env.possible_agents)}
        else:
            from lang_pz.policies.scripted import PistonballHeuristic

            if not env_id.startswith("butterfly/pistonball"):
                fail(ValueError("the heuristic policy is for butterfly/pistonball-v0 only"))
            policies = {a: PistonballHeuristic() for a in env.possible_agents}
        writer = TrajectoryWriter(out) if out else None
        failures: list[tuple[int, str]] = []  # (episode, error) of each failed episode
        for k in range(episodes):
            try:
                traj = rollout(env, policies, seed=seed + k, episode=k, writer=writer)
            except EPISODE_ERRORS as exc:  # e.g. an endpoint that went down, a prompt that cannot fit
                failures.append((k, error_text(exc)))
                typer.secho(f"episode {k} (seed {seed + k}): failed, not scored: {exc}", fg=typer.colors.YELLOW, err=True)
                if writer:
                    writer.write_lines(
                        [json.dumps({"type": "episode_error", "episode": k, "seed": seed + k, "error": str(exc)}) + "\n"]
                    )
                continue
            if k == len(failures):  # the first episode played
                for s in traj.steps[:show]:
                    typer.echo(
                        f"--- step {s.step} {s.agent}\n{s.observation}\n> {s.raw_output!r} -> {s.action!r}"
                        + (f"  (parse error: {s.parse_error})" if s.parse_error else "")
                    )
            rets = ", ".join(f"{a}={r:.1f}" for a, r in traj.returns.items())
            unread = sum(s.parse_error is not None for s in traj.steps)
            note = f"; {unread} of {len(traj.steps)} actions unparsed, the env's fallback played" if unread else ""
            typer.echo(f"episode {k} (seed {seed + k}): team return {traj.team_return:.1f} [{rets}]{note}")
        if writer:
            writer.close()
            typer.echo(f"trajectories: {out}" + (" (failed episodes as episode_error records)" if failures else ""))
        if failures:
            k, first = failures[0]
            exit_failed(failed_line(len(failures), episodes, f"episode {k} (seed {seed + k})", first))
    except (LangPZError, ValueError, OSError) as exc:
        fail(exc)
    except KeyboardInterrupt:
        where = f"; the finished episodes and steps so far are in {out}" if out else ""
        typer.secho(f"\ninterrupted{where}", fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(code=130) from None


def _policy_texts(path: Path) -> tuple[dict[str, str], dict | None]:
    """Text policies from a run folder (its final policies, else its last iteration's) or a folder of
    AGENT.txt, and the run's config (``None`` for a folder of AGENT.txt)."""
    from lang_pz.error import RunDirError
    from lang_pz.runs import RunFolder, read_policies

    if not path.is_dir():
        fail(FileNotFoundError(f"--policies {path} is not a folder (give a run folder or a folder of AGENT.txt files)"))
    run = RunFolder(path)
    if run.config.exists():
        try:
            config = run.load_config()
        except RunDirError as exc:
            fail(ValueError(f"--policies {path}: {exc}"))
        if run.final_policies.is_dir():
            try:
                return read_policies(run.final_policies), config
            except RunDirError as exc:
                fail(ValueError(f"--policies {path}: {exc}"))
        done = run.completed_iterations()
        if not done:
            fail(ValueError(f"--policies {path}: the run has no completed iteration yet"))
        return dict(done[-1]["policies"]), config
    try:
        texts = read_policies(path)
    except RunDirError as exc:
        fail(ValueError(f"--policies {path}: {exc}"))
    if not texts:
        fail(ValueError(f"--policies {path} holds no AGENT.txt file"))
    return texts, None


def _kw_args(kwargs: dict) -> str:
    """``--kw K=V ...`` as a user would type it (values as JSON, which is YAML)."""
    import shlex

    return " ".join("--kw " + shlex.quote(f"{k}={v if isinstance(v, str) else json.dumps(v)}") for k, v in kwargs.items())


def _trained_on(config: dict | None) -> str:
    """A hint naming the env and kwargs the run was trained on ("" if its config does not say)."""
    if not config or not config.get("env_id"):
        return ""
    kws = _kw_args(dict(config.get("env_kwargs") or {}))
    if not kws:
        return f"; the run was trained on {config['env_id']} with its default kwargs: drop --kw"
    return f"; the run was trained on {config['env_id']} with {kws}: give those --kw, or no --kw to use the run's"
