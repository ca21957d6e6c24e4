"""Held-out phases of the task envs: split='train' / 'validation' / 'test' are disjoint item sets,
stable under file order, and consecutive seeds of a phase play distinct items."""

from __future__ import annotations

import json

import pytest
from support import DATA, any_sandbox

import lang_pz
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.tasks.datasets import load_items, split
from lang_pz.tasks.datasets.items import GSM8KItem
from lang_pz.tasks.datasets.partition import PHASES, item_key, seed_order
from lang_pz.tasks.math_env import MathTaskEnv

needs_data = pytest.mark.skipif(not (DATA / "math500").is_dir(), reason="benchmark data folder not available")

#: Items per phase (train, validation, test) on the shared data files, as the docs state them.
SIZES = {
    "hotpotqa": (300, 150, 150),
    "math500": (300, 100, 100),
    "gsm8k": (791, 264, 264),
    "humaneval": (98, 33, 33),
    "mbpp": (374, 90, 500),
}


def test_split_is_stable_under_input_order_and_keeps_equal_keys_together():
    items = [f"item-{i}" for i in range(103)] + ["item-7"]  # a duplicate key
    parts = split(items, seed=0)
    assert [len(set(p)) for p in parts] == [62, 21, 20]  # of the 103 distinct keys
    assert sum(p.count("item-7") for p in parts) == 2 and any(p.count("item-7") == 2 for p in parts)
    backwards = split(list(reversed(items)), seed=0)
    assert [sorted(p) for p in backwards] == [sorted(p) for p in parts]  # file order does not matter
    assert all(p == [x for x in items if x in set(p)] for p in parts)  # each part in input order
    assert split(items, seed=1) != parts
    with pytest.raises(LangPZError, match="no stable key for an item of type object"):
        split([object()])


def test_item_keys_are_the_benchmarks_ids():
    gsm = GSM8KItem(index=3, question="How many?", solution="#### 2", answer="2")
    assert item_key(gsm) == "How many?"  # GSM8K has no id: its row number would depend on the file
    assert [item_key(it) for it in load_items("mbpp", split="all", source="demo")] == ["MBPP/9001", "MBPP/9002"]
    assert [item_key(it) for it in load_items("hotpotqa", split="dev", source="demo")] == ["demo-1", "demo-2"]


def test_consecutive_seeds_play_distinct_items_whatever_the_file_order():
    keys = [f"k{i}" for i in range(7)]
    order = seed_order(keys)
    assert sorted(order) == list(range(7))
    back = seed_order(list(reversed(keys)))
    assert [keys[order[s % 7]] for s in range(20)] == [list(reversed(keys))[back[s % 7]] for s in range(20)]
    items = load_items("gsm8k", split="all", source="demo")
    a, b = MathTaskEnv(items), MathTaskEnv(list(reversed(items)))
    for seed in range(6):
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.item == b.item
    played = []
    for seed in range(4):
        a.reset(seed=seed)
        played.append(a.item_id)
    assert played[0] != played[1] and played[:2] == played[2:]  # both items, then the cycle again


def test_index_and_unseeded_resets():
    env = lang_pz.make("tasks/math500-v0", source="demo")
    env.reset(seed=0, options={"index": 1})
    assert env.item_index == 1
    env.reset(seed=5)
    first = env.item_id
    env.reset()  # no seed: the next position
    env.reset()
    assert env.item_id == first
    assert lang_pz.make("tasks/math500-v0", source="demo", index=0).items[0] == env.items[0]


def test_old_split_name_val_says_validation():
    with pytest.raises(InvalidKwargError, match=r"split must be one of .*'validation'.*got 'val' \('val' is now"):
        lang_pz.make("tasks/mbpp-v0", split="val", source="demo")
    with pytest.raises(InvalidKwargError, match="got 'dev'"):
        lang_pz.make("tasks/humaneval-v0", split="dev")


@needs_data
@pytest.mark.parametrize("benchmark", sorted(SIZES))
def test_phases_are_disjoint_item_sets_of_the_documented_sizes(benchmark):
    kw = {"data_dir": DATA} if benchmark != "humaneval" else {}
    parts = [load_items(benchmark, split=p, **kw) for p in PHASES]
    ids = [{item_key(it) for it in part} for part in parts]
    assert tuple(len(p) for p in parts) == SIZES[benchmark]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    if benchmark == "hotpotqa":
        dev = {it.id for it in load_items("hotpotqa", split="dev", data_dir=DATA)}
        assert ids[1] | ids[2] == dev  # the train file trains; the dev file is halved
    if benchmark == "mbpp":
        assert {it.task_id for it in parts[1]} == {f"MBPP/{n}" for n in range(511, 601)}


@needs_data
def test_a_phase_of_seeds_plays_each_item_once_before_any_twice():
    env = lang_pz.make("tasks/humaneval-v0", split="validation", **any_sandbox("tasks/humaneval-v0"))
    played = []
    for seed in range(1000, 1000 + 33 + 2):
        env.reset(seed=seed)
        played.append(env.item_id)
    assert len(set(played[:33])) == 33 and played[33:] == played[:2]
    assert {it.task_id for it in env.items} == set(played)


@needs_data
def test_hotpotqa_path_partitions_that_file(tmp_path):
    rows = (DATA / "hotpotqa" / "dev_300.jsonl").read_text(encoding="utf-8").splitlines()[:20]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    parts = [load_items("hotpotqa", split=p, path=path) for p in PHASES]
    assert [len(p) for p in parts] == [12, 4, 4]
    assert len(load_items("hotpotqa", split="dev", path=path)) == 20  # not a phase: the whole file
    assert {json.loads(r)["id"] for r in rows} == {it.id for p in parts for it in p}
