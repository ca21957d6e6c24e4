"""``train()``: the one outer loop every method runs in.

It owns what no method changes: where the run starts (a new folder or ``--resume``), the LLM-call
budget, each iteration's log (``run.begin``, kept episodes of an interrupted attempt), the
progress line (with whom the critic blamed and where, :mod:`lang_pz.blame`), the final files, the
held-out test of the final parameter, and closing the parts whatever happens. The method (:class:`lang_pz.methods.Method`, picked by ``config.method``)
owns one iteration; SB3's ``learn`` / ``train`` split.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lang_pz.backends import LLMBackend
from lang_pz.blame import blame_text
from lang_pz.error import InvalidKwargError
from lang_pz.runs import RunFolder, append_jsonl, atomic_write, read_jsonl
from lang_pz.training.config import TrainConfig
from lang_pz.training.parts import Parts
from lang_pz.training.players import Team
from lang_pz.training.registry import method_class
from lang_pz.training.state import Callback, IterationMetrics, TrainResult, open_run
from lang_pz.training.steps import evaluate

if TYPE_CHECKING:
    from lang_pz.methods.base import Method


def final_test(config: TrainConfig, parts: Parts, run: RunFolder, team: Team) -> float | None:
    """The held-out test of the final team (``env -> team``), written to ``final/test.jsonl``
    (rewritten on resume); its mean objective (``None`` without test seeds)."""
    values = evaluate(parts.envs["test"], team, config.test_seeds, objective=parts.objective, executor=parts.executor)
    atomic_write(run.final_test, "")
    for i, (s, v) in enumerate(zip(config.test_seeds, values)):
        append_jsonl(run.final_test, {"episode": i, "policies": "final", "seed": s, "objective": round(v, 3)})
    return sum(values) / len(values) if values else None


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _failures(m: IterationMetrics) -> str:
    """What failed and was gone on without (``on_stage_failure: continue``), for the progress line."""
    parts = [
        f"{n} {what} failed"
        for n, what in ((m.critic_failures, "critic report(s)"), (m.optimiser_failures, "optimiser step(s)"))
        if n
    ]
    return f"; {' and '.join(parts)}, see critic_errors.jsonl / optimiser_errors.jsonl" if parts else ""


def train(
    config: TrainConfig | None = None,
    *,
    resume: str | Path | None = None,
    method: type[Method[Any, Any]] | None = None,
    backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
    callbacks: Sequence[Callback] = (),
    progress: Callable[[str], None] | None = None,
    **objects: Any,
) -> TrainResult:
    """Run (or continue) a training run of ``config.method``: the method's iteration per iteration.

    Args:
        config: the run configuration (not with ``resume``).
        resume: a run folder to continue: its ``config.json`` is used, completed iterations are
            kept, the interrupted one is redone (keeping its finished training episodes).
        method: a :class:`~lang_pz.methods.Method` subclass to run instead of the one registered
            as ``config.method`` (e.g. a variant with one stage changed); pass it again to resume.
        backends: objects instead of the config's backend specs (one for every role, or role ->
            backend); ``config.json`` still records the specs, so pass the same objects to resume.
        callbacks: :class:`~lang_pz.training.state.Callback` hooks (per episode, per iteration).
        progress: called with a short status line per iteration (default: silent); rollouts,
            critic and optimiser calls also show tqdm bars on stderr.
        **objects: parts of the method given as objects (LangMARL: ``critic``, ``optimiser``;
            MASkills: ``critic``, ``writer``; :attr:`Method.objects`).

    Returns:
        The method's :class:`TrainResult` (also on disk in ``result.run_dir``).

    Raises:
        lang_pz.error.UnknownEnvironmentError / InvalidKwargError: bad env id, kwargs, agents,
            objective, policies or ``objects`` for the method (checked before anything is written).
        lang_pz.error.BackendError: a backend cannot be built or reached.
        lang_pz.error.RunDirError: a new run's folder is not empty, or ``resume`` is not a run.
        ValueError: both or neither of ``config`` and ``resume``.
    """
    say = progress or (lambda _msg: None)
    run, config, done = open_run(config, resume)
    cls = method or method_class(config.method)
    unknown = sorted(set(objects) - set(cls.objects))
    if unknown:
        raise InvalidKwargError(
            f"train() got {unknown}, which method {cls.name!r} does not take; it takes "
            f"{list(cls.objects) or 'no objects'} (besides backends=)"
        )
    algo = cls.build(config, backends=backends, run=run if resume is not None else None, **objects)
    try:
        if resume is None:
            run.create(config.model_dump_json(indent=2), algo.parts.items)
        start = algo.start()
        state = algo.restore(run, done) if done else start
        result = algo.result(run.root, start, [IterationMetrics(**d["metrics"]) for d in done])
        if done:
            say(f"resuming {run.root} after {len(done)} completed iteration(s)")
        run.rewrite_metrics([d["metrics"] for d in done])
        for it in range(len(done), config.iterations):
            if config.max_llm_calls is not None and state.uncached_calls >= config.max_llm_calls:
                result.stopped = f"LLM-call budget reached ({state.uncached_calls} uncached calls >= {config.max_llm_calls})"
                say(f"stopping before iteration {it}: {result.stopped}")
                break
            log = run.begin(it)
            if log.kept:
                say(f"iteration {it}: kept {len(log.kept)} finished episode(s) of the interrupted attempt")
            m, state = algo.iteration(state, log, callbacks)
            result.metrics.append(m)
            blame = blame_text(read_jsonl(run.iteration(it).log("credits")))
            say(
                f"iteration {it}: train return {m.train_return:.2f}, {f'{blame}, ' if blame else ''}"
                f"validation {_num(m.val_return)} -> {_num(m.candidate_val_return)} ({algo.summary(m, state)})"
                f"{_failures(m)}"
            )
        algo.finish(run, state, result)
        if config.test_seeds:
            result.final_test_return = final_test(config, algo.parts, run, algo.team(state))
    finally:
        algo.close()
    return result
