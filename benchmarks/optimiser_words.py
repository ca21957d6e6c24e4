"""Does the optimiser's update follow a supported direction? The same first iterations, two optimisers.

Reads the first iteration of every run folder that two roots of ``credit_learning.py`` runs
share (same mode and seed: the same episodes, re-runs and credits, served from the same response
cache) and compares their update stages on the gradients whose change the re-runs support
("play W at ..."): did the new policy text name W, and did the actor then play W in the
candidate's validation episodes? Then, for every candidate text validated under the second root,
what the actor played with it (the text a policy says is not always what its actor does). The first root is the reference (e.g. runs made before the
update stage had to name the word), the second the one under test.

    python benchmarks/optimiser_words.py OLD_ROOT NEW_ROOT [--out benchmarks/results/optimiser_words.md]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from credit_learning import word_of  # the same folder: how that experiment reads a policy text

from lang_pz.optimisers.gradient import Gradient, direction_word, names_word


def supported_updates(run: Path) -> dict[str, tuple[str, str, str]]:
    """agent -> (old text, new text, supported word) of the first iteration's supported gradients."""
    out = {}
    path = run / "iter_000" / "gradients.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        r = json.loads(line)
        word = direction_word(Gradient.model_validate(r["gradient"]))
        if word is not None:
            out[r["agent"]] = (r["old"], r["new"], word)
    return out


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


def actor_readings(root: Path) -> dict[str, Counter[str]]:
    """Policy text -> the actions the actor played with it, over every candidate validated in the
    runs under ``root`` (``iter_*/candidates/AGENT.txt`` and that candidate's validation episodes)."""
    out: dict[str, Counter[str]] = {}
    for it in sorted(root.glob("*/iter_*")):
        if not (it / "validation.jsonl").exists():
            continue
        labels = {r["episode"]: r["policies"] for r in map(json.loads, (it / "validation.jsonl").read_text().splitlines())}
        for cand in sorted((it / "candidates").glob("*.txt")) if (it / "candidates").is_dir() else []:
            agent, text = cand.stem, " ".join(cand.read_text().split())
            mine = {e for e, label in labels.items() if label == f"candidate {agent}"}
            counts = out.setdefault(text, Counter())
            for line in (it / "validation_trajectories.jsonl").read_text().splitlines():
                r = json.loads(line)
                if r.get("type") == "agent_step" and r["agent"] == agent and r["episode"] in mine:
                    counts[r["raw_output"]] += 1
    return {t: c for t, c in out.items() if c}


def final_teams(root: Path, readings: dict[str, Counter[str]]) -> list[str]:
    """One table row per finished run: its final team as the texts say it and as the actor plays it
    (a text's most played action in :func:`actor_readings`, else what it says), the constant team's
    held-out return for the played team (``constant_teams.json``) and the run's final test return."""
    teams = (
        json.loads((root / "constant_teams.json").read_text())["teams"] if (root / "constant_teams.json").exists() else []
    )
    value = {tuple(t): v for t, v in teams}
    best = tuple(teams[0][0]) if teams else ()
    rows = []
    for run in sorted(d for d in root.iterdir() if (d / "final" / "test.jsonl").exists()):
        texts = [" ".join((run / "final" / "policies" / f"piston_{i}.txt").read_text().split()) for i in range(5)]
        says = tuple(word_of(t) for t in texts)
        plays = tuple(readings[t].most_common(1)[0][0] if t in readings else word_of(t) for t in texts)
        tests = [json.loads(x)["objective"] for x in (run / "final" / "test.jsonl").read_text().splitlines() if x.strip()]
        rows.append(
            f"| {run.name} | {' '.join(says)} | {' '.join(plays)} | {sum(a == b for a, b in zip(says, best))} -> "
            f"{sum(a == b for a, b in zip(plays, best))} | {value.get(plays, float('nan')):.1f} | "
            f"{sum(tests) / len(tests):.1f} |"
        )
    return rows


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
            changed_word = not names_word(old, word)
            tally["supported"] += 1
            tally["to a new word"] += changed_word
            tally["before names it"] += changed_word and names_word(b, word)
            tally["after names it"] += changed_word and names_word(a, word)
            for tag, run_ in (("before", ref), ("after", run)):
                c = played(run_, agent)
                tally[f"{tag} played it"] += changed_word and sum(c.values()) > 0 and c[word] * 2 > sum(c.values())
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
            f"{tally['before names it']}, after {tally['after names it']}; the actor then played it in most of "
            f"the candidate's validation decisions: before {tally['before played it']}, after {tally['after played it']}.",
            "",
            "In brackets: the share of the candidate's validation decisions that played the word "
            "(each candidate is validated on the same 8 seeds; an unchanged text is not validated).",
            "",
            "| run | agent | current policy | supported word | new text (reference) | new text (under test) |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            "What the actor played with each candidate text validated under test (every iteration, "
            "every run; the decisions of the candidate's agent in its validation episodes):",
            "",
            "| policy text | actions played |",
            "|---|---|",
            *(
                f"| {t} | {', '.join(f'{a} {n}' for a, n in c.most_common())} |"
                for t, c in sorted(actor_readings(args.new).items(), key=lambda kv: -sum(kv[1].values()))
            ),
            "",
        ]
    )
    readings = actor_readings(args.new)
    text += "\n" + "\n".join(
        [
            "The final teams, as the texts say and as the actor plays them (pistons 0-4; a text's most played "
            "action in the candidates' validation episodes above), the number of pistons on the best "
            "constant team's word by text and by play, the played team's constant-team return on the "
            "held-out test seeds, and the run's final held-out test return:",
            "",
            "| run | team the texts say | team the actor plays | on the best team's word (text -> play) | "
            "played team's constant return | final test return |",
            "|---|---|---|---|---|---|",
            *final_teams(args.new, readings),
            "",
        ]
    )
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
