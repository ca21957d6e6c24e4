"""Fuzz every registered environment with random actions: no input may crash an env.

For each id in ``lang_pz.registry`` (its default API, made with the spec's ``test_kwargs``) this
plays seeded episodes whose actions are drawn from a mix of

* non-``str`` values (``None``, numbers, ``nan``, bytes, lists, dicts, numpy scalars, objects),
* huge strings (10^4 to 10^6 characters),
* deep nesting (brackets, braces, unary minus chains, ``\\boxed{`` towers, nested asserts/defs),
* random Unicode (any plane, lone surrogates, combining marks, right-to-left text, emoji),
* control characters (NUL, escape sequences, form feeds ...),
* near-valid text: the env's legal action words, each role's reply formats (``Answer: ...``,
  ``Evidence: 1.1``, ``#### 26``, ``\\boxed{5}``, ``def f(x): ...``, ``assert ...``) and
  mutations of them (case, truncation, duplication, inserted junk),

and counts, per env: actions tried, steps (applied without a parse error), fallbacks (applied
with ``info["parse_error"]`` set), documented errors (``ActionParseError`` in strict mode) and
crashes (any other exception), printing the first crash's traceback. For parallel envs actions
are counted per agent and a strict ``ActionParseError`` once per refused joint step. A second, shorter run
does the same in strict mode where the env's constructor takes ``strict``.

Usage::

    python benchmarks/fuzz_actions.py                      # 10,000 actions per env
    python benchmarks/fuzz_actions.py --n 2000 --only tasks/
    python benchmarks/fuzz_actions.py --seed 1 --strict-n 500

Exit status 1 if any env crashed. Not a timed test: it takes minutes (the code tasks run
their sandbox for every tester turn and episode end).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lang_pz
from lang_pz.error import ActionParseError

#: Reply formats of the task roles and words of the games, the seeds of near-valid text.
TEMPLATES: tuple[str, ...] = (
    "Answer: Vell",
    "Answer: yes",
    "answer:no",
    "Answer:",
    "Evidence: 1.1, 2.2",
    "Evidence: 99.99",
    "2.1 and 1.1",
    "#### 26",
    "####",
    "#### 1,000,000.5",
    "The answer is 26.",
    "\\boxed{5}",
    "\\boxed{\\frac{5}{6}}",
    "$\\boxed{2^{2^{30}}}$",
    "\\boxed{",
    "Correct",
    "correct!",
    "No: \\boxed{1}",
    "def f(x):\n    return x",
    "def sum_squares(xs):\n    return sum(x * x for x in xs)",
    "```python\ndef is_palindrome(s):\n    return s == s[::-1]\n```",
    "def f(x) return",
    "assert sum_squares([1, 2]) == 5",
    "assert f(1) == 1\nassert f(2) == 2",
    "import os\nassert os",
    "assert (",
    "up",
    "down",
    "stay",
    "left",
    "right",
    "rock",
    "paper",
    "scissors",
    "1",
    "5",
    "7",
    "top-left",
    "center",
    "0.5",
    "-1",
    "1e308",
    "nan",
    "inf",
    '{"action": "up"}',
    "interact",
    "noop",
)

_NON_STR: tuple[Callable[[], Any], ...] = (
    lambda: None,
    lambda: 0,
    lambda: 3,
    lambda: -1,
    lambda: 1.5,
    lambda: math.nan,
    lambda: math.inf,
    lambda: True,
    lambda: b"up",
    lambda: ["up"],
    lambda: {"action": "up"},
    lambda: ("a",),
    lambda: np.int64(2),
    lambda: np.float32(0.5),
    lambda: np.array([1, 2]),
    lambda: object(),
    lambda: 10**400,
    lambda: bytearray(b"x"),
    lambda: {"text": "up"},
)


def _random_unicode(rng: np.random.Generator, n: int) -> str:
    planes = (
        (0x20, 0x7F),
        (0xA0, 0x2FF),
        (0x300, 0x36F),
        (0x590, 0x6FF),
        (0x4E00, 0x9FFF),
        (0xD800, 0xDFFF),
        (0xE000, 0xF8FF),
        (0x1F300, 0x1FAFF),
        (0x20000, 0x2A6DF),
        (0, 0x10FFFF),
    )
    out = []
    for _ in range(n):
        lo, hi = planes[int(rng.integers(len(planes)))]
        out.append(chr(int(rng.integers(lo, hi + 1))))
    return "".join(out)


def _control(rng: np.random.Generator, n: int) -> str:
    chars = [chr(i) for i in range(32)] + ["\x7f", "\x85", "\u2028", "\u2029", "\ufeff", "\x1b[2J", "\r\n"]
    return "".join(chars[int(rng.integers(len(chars)))] for _ in range(n))


def _nested(rng: np.random.Generator) -> str:
    n = int(rng.choice([50, 500, 3000, 20000, 100000]))
    kinds = (
        lambda: "(" * n + ")" * n,
        lambda: "[" * n,
        lambda: "{" * n + "}" * n,
        lambda: "-" * n + "1",
        lambda: "def f(x):\n    return " + "-" * n + "1",
        lambda: "assert " + "-" * n + "1 == 1",
        lambda: "\\boxed{" * n + "1" + "}" * n,
        lambda: "Answer: " + "(" * n,
        lambda: "x = 1" + " + 1" * n,
        lambda: "def f():\n" + "".join(" " * i + "if 1:\n" for i in range(1, min(n, 400))),
        lambda: '{"action": ' * n,
        lambda: "#### " + "9" * n,
        lambda: "Evidence: " + "1." * n,
    )
    return kinds[int(rng.integers(len(kinds)))]()


def _mutate(rng: np.random.Generator, text: str) -> str:
    op = int(rng.integers(7))
    if op == 0:
        return text.upper()
    if op == 1:
        return text[: int(rng.integers(len(text) + 1))]
    if op == 2:
        return text * int(rng.integers(2, 5))
    if op == 3:
        i = int(rng.integers(len(text) + 1))
        return text[:i] + _random_unicode(rng, int(rng.integers(1, 4))) + text[i:]
    if op == 4:
        return f"  {text}\n\n"
    if op == 5:
        return f"I think: {text}. Really."
    return text.replace(" ", "")


def draw_action(rng: np.random.Generator, legal: list[str]) -> tuple[str, Any]:
    """``(kind, action)``: one random action of one of the kinds in the module docstring."""
    words = list(legal) + list(TEMPLATES)
    kind = str(
        rng.choice(
            ["non_str", "huge", "nested", "unicode", "control", "valid", "near_valid"],
            p=[0.08, 0.02, 0.08, 0.14, 0.08, 0.3, 0.3],
        )
    )
    if kind == "non_str":
        return kind, _NON_STR[int(rng.integers(len(_NON_STR)))]()
    if kind == "huge":
        n = int(rng.choice([10_000, 100_000, 1_000_000]))
        return kind, (words[int(rng.integers(len(words)))] + " ") * (n // 8)
    if kind == "nested":
        return kind, _nested(rng)
    if kind == "unicode":
        return kind, _random_unicode(rng, int(rng.integers(0, 60)))
    if kind == "control":
        return kind, _control(rng, int(rng.integers(1, 40)))
    word = words[int(rng.integers(len(words)))]
    return kind, word if kind == "valid" else _mutate(rng, word)


@dataclass
class Tally:
    """What one fuzz run of one env saw."""

    env_id: str
    api: str
    strict: bool
    actions: int = 0
    steps: int = 0
    fallbacks: int = 0
    documented: int = 0
    crashes: int = 0
    first_crash: str = ""
    first_input: str = ""
    seconds: float = 0.0
    note: str = ""
    kinds: dict[str, int] = field(default_factory=dict)


def _legal(info: Any) -> list[str]:
    if isinstance(info, dict) and isinstance(info.get("legal_actions"), (list, tuple)):
        return [str(w) for w in info["legal_actions"]]
    return []


def _record(t: Tally, info: Any) -> None:
    if isinstance(info, dict) and info.get("parse_error"):
        t.fallbacks += 1
    else:
        t.steps += 1


def _crash(t: Tally, action: Any) -> None:
    t.crashes += 1
    if not t.first_crash:
        t.first_crash = traceback.format_exc()
        t.first_input = repr(action)[:300]


def fuzz_env(env_id: str, n: int, seed: int, strict: bool) -> Tally:
    """Play ``n`` random actions on ``env_id`` (its first API, spec ``test_kwargs``)."""
    spec = lang_pz.registry[env_id]
    api = spec.apis[0]
    kwargs = dict(spec.test_kwargs)
    if strict:
        kwargs["strict"] = True
    t = Tally(env_id, api, strict)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    env = lang_pz.make(env_id, api=api, **kwargs)
    episode = 0

    def one(action: Any, step: Callable[[], Any], info_of: Callable[[], Any]) -> bool:
        t.actions += 1
        try:
            step()
        except ActionParseError:
            if not strict:
                _crash(t, action)
                return False
            t.documented += 1
            return True
        except Exception:
            _crash(t, action)
            return False
        _record(t, info_of())
        return True

    while t.actions < n:
        if api == "aec":
            env.reset(seed=seed + episode)
            episode += 1
            for agent in env.agent_iter(10_000):
                if t.actions >= n:
                    break
                _, _, term, trunc, info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                kind, action = draw_action(rng, _legal(info))
                t.kinds[kind] = t.kinds.get(kind, 0) + 1
                before = t.documented
                ok = one(action, lambda a=action: env.step(a), lambda ag=agent: env.infos.get(ag, {}))
                if not ok:
                    break
                if strict and t.documented > before and rng.random() < 0.5:
                    legal = _legal(env.last()[4])  # refused: move on now and then with a legal word
                    if legal and not one(legal[0], lambda w=legal[0]: env.step(w), lambda ag=agent: env.infos.get(ag, {})):
                        break
        elif api == "parallel":
            _, infos = env.reset(seed=seed + episode)
            episode += 1
            while env.agents and t.actions < n:
                drawn = {a: draw_action(rng, _legal(infos.get(a, {}))) for a in env.agents}
                actions = {a: v[1] for a, v in drawn.items()}
                for kind, _ in drawn.values():
                    t.kinds[kind] = t.kinds.get(kind, 0) + 1
                t.actions += len(actions)
                try:
                    infos = env.step(actions)[4]
                except ActionParseError:
                    if not strict:
                        _crash(t, actions)
                        break
                    t.documented += 1
                    continue
                except Exception:
                    _crash(t, actions)
                    break
                for a in actions:
                    _record(t, infos.get(a, {}))
        else:
            _, info = env.reset(seed=seed + episode)
            episode += 1
            done = False
            while not done and t.actions < n:
                kind, action = draw_action(rng, _legal(info))
                t.kinds[kind] = t.kinds.get(kind, 0) + 1
                out = {}

                def step(a: Any = action, out: dict[str, Any] = out) -> None:
                    out["r"] = env.step(a)

                if not one(action, step, lambda out=out: out.get("r", (None,) * 5)[4]):
                    break
                if "r" in out:
                    _, _, term, trunc, info = out["r"]
                    done = term or trunc
    env.close()
    t.seconds = time.perf_counter() - t0
    return t


def _accepts_strict(env_id: str) -> bool:
    import inspect

    return "strict" in inspect.signature(lang_pz.registry[env_id].load()).parameters


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000, help="actions per env (default 10,000)")
    p.add_argument("--strict-n", type=int, default=1_000, help="actions per env in strict mode")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", default="", help="fuzz only ids starting with this prefix")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    tallies = []
    for env_id in sorted(lang_pz.registry):
        if not env_id.startswith(args.only):
            continue
        for strict, n in ((False, args.n), (True, args.strict_n)):
            if n <= 0 or (strict and not _accepts_strict(env_id)):
                continue
            try:
                t = fuzz_env(env_id, n, args.seed, strict)
            except Exception:  # the env could not even be made / reset
                t = Tally(env_id, "?", strict, crashes=1, first_crash=traceback.format_exc(), note="make/reset failed")
            tallies.append(t)
            print(
                f"{t.env_id:34} {'strict' if strict else 'fallback':8} {t.actions:6} actions "
                f"{t.steps:6} steps {t.fallbacks:6} fallbacks {t.documented:6} ActionParseError "
                f"{t.crashes:3} crashes  {t.seconds:6.1f} s",
                flush=True,
            )
    print("\n| env | api | mode | actions | steps | fallbacks | ActionParseError (strict) | crashes | s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for t in tallies:
        print(
            f"| {t.env_id} | {t.api} | {'strict' if t.strict else 'fallback'} | {t.actions} | {t.steps} | "
            f"{t.fallbacks} | {t.documented} | {t.crashes} | {t.seconds:.0f} |"
        )
    crashed = [t for t in tallies if t.crashes]
    for t in crashed:
        print(
            f"\n== first crash of {t.env_id} ({'strict' if t.strict else 'fallback'}) {t.note}\n"
            f"input: {t.first_input}\n{t.first_crash}"
        )
    print(f"\n{sum(t.crashes for t in tallies)} crashes in {len(crashed)} of {len(tallies)} runs (seed {args.seed}).")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
