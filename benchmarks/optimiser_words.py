"""Does the optimiser's update follow a supported direction? The same first iterations, two optimisers.

Reads the first iteration of every run folder that two roots of ``credit_learning.py`` runs
share (same mode and seed: the same episodes, re-runs and credits, served from the same response
cache) and compares their update stages on the gradients whose change the re-runs support
("play W at ..."): did the new policy text name W, and did the actor then play W in the
candidate's validation episodes? The first root is the reference (e.g. runs made before the
update stage had to name the word), the second the one under test.

    python benchmarks/optimiser_words.py OLD_ROOT NEW_ROOT [--out benchmarks/results/optimiser_words.md]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

WORD = re.compile(r"^play (?P<word>.+?) (?:at every step|at steps \[[0-9, ]*\])$")


def supported_updates(run: Path) -> dict[str, tuple[str, str, str]]:
    """agent -> (old text, new text, supported word) of the first iteration's supported gradients."""
    out = {}
    path = run / "iter_000" / "gradients.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        r = json.loads(line)
        m = WORD.match(r["gradient"]["change"]) if r["gradient"].get("supported") else None
        if m:
            out[r["agent"]] = (r["old"], r["new"], m.group("word"))
    return out


def names(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.IGNORECASE) is not None


def played(run: Path, agent: str) -> Counter[str]:
    """The actions ``agent`` played in the first iteration's validation episodes of its candidate."""
    it = run / "iter_000"
    if not (it / "validation.jsonl").exists():
        return Counter()
    mine = {
        r["episode"]
        for r in map(json.loads, (it / "validation.jsonl").read_text().splitlines())
        if r["policies"] == f"candidate {agent}"
    }
    counts: Counter[str] = Counter()
    for line in (it / "validation_trajectories.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("type") == "agent_step" and r["agent"] == agent and r["episode"] in mine:
            counts[r["raw_output"]] += 1
    return counts


def share(counts: Counter[str], word: str) -> str:
    total = sum(counts.values())
    return f"{counts[word] / total:.0%}" if total else "not validated"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    rows, tally = [], Counter()
    for run in sorted(d for d in args.new.iterdir() if (d / "iter_000" / "done.json").exists()):
        ref = args.old / run.name
        if not (ref / "iter_000" / "done.json").exists():
            continue
        before, after = supported_updates(ref), supported_updates(run)
        for agent in sorted(set(before) & set(after)):
            (old, b, word), (_, a, _) = before[agent], after[agent]
            changed_word = not names(old, word)
            tally["supported"] += 1
            tally["to a new word"] += changed_word
            tally["before names it"] += changed_word and names(b, word)
            tally["after names it"] += changed_word and names(a, word)
            rows.append(
                f"| {run.name} | {agent} | {old} | {word} | {b} ({share(played(ref, agent), word)}) | "
                f"{a} ({share(played(run, agent), word)}) |"
            )
    text = "\n".join(
        [
            "# The update stage on supported directions (`python benchmarks/optimiser_words.py`)",
            "",
            f"Reference: `{args.old}`; under test: `{args.new}`; first iterations of the runs both hold.",
            "",
            f"Supported gradients: {tally['supported']}; of those asking for a word the current policy does "
            f"not name: {tally['to a new word']}; the new text names the word: before "
            f"{tally['before names it']}, after {tally['after names it']}.",
            "",
            "In brackets: the share of the candidate's validation decisions that played the word "
            "(each candidate is validated on the same 8 seeds; an unchanged text is not validated).",
            "",
            "| run | agent | current policy | supported word | new text (reference) | new text (under test) |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
