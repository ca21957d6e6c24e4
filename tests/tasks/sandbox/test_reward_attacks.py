"""Code that solves nothing scores nothing: every attack of benchmarks/reward_attacks.py, sent as the coder's code
through the env on real HumanEval and MBPP items (each way a verdict is computed: static asserts, recorded and
replayed tests, and static checks on inputs the code's own process builds), gets reward 0, and the team is never told that tests passed; the
reference still scores 1. The full table over every item and mode is benchmarks/results/reward_attacks.md."""

from __future__ import annotations

import importlib.util
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from support import DATA, requires_bwrap

from lang_pz.error import LangPZError
from lang_pz.tasks.code_env import CodeTaskEnv
from lang_pz.tasks.datasets import CodeItem, load_humaneval, load_mbpp
from lang_pz.tasks.sandbox import SandboxConfig, isolation, landlock
from lang_pz.tasks.sandbox.isolation import resolve
from lang_pz.tasks.sandbox.verdict import cast

_spec = importlib.util.spec_from_file_location(
    "reward_attacks", Path(__file__).resolve().parents[3] / "benchmarks" / "reward_attacks.py"
)
ra = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ra)  # type: ignore[union-attr]

#: Attacks on what a run costs: each ends at a limit whatever the item, so they are played on one item with
#: timeout_s=2 (the others with the benchmark's timeout_s=10).
COSTLY = ["sleep_at_import", "sleep_in_function", "fork_bomb", "memory_bomb", "disk_bomb"]
ATTACKS = [a for a in ra.ATTACKS if a not in ra.CONTROLS and a not in COSTLY]
#: HumanEval/0 (static asserts), /32 (a check that is not an equality: replayed), /53 (unseeded random inputs:
#: replayed); MBPP/11 (static) and /367 (inputs are the solution's own objects, built in the code's process).
IDS = ["HumanEval/0", "HumanEval/32", "HumanEval/53", "MBPP/11", "MBPP/367"]
#: The MBPP items whose inputs only the code's process can build (the solution's classes, type objects).
BUILT = ["MBPP/367", "MBPP/533", "MBPP/601", "MBPP/927"]


pytestmark = [requires_bwrap, pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")]


@pytest.fixture(autouse=True)
def _data_dir(monkeypatch):
    """The benchmark script finds the data as a user does, through $LANG_PZ_DATA_DIR."""
    monkeypatch.setenv("LANG_PZ_DATA_DIR", str(DATA))


@pytest.fixture(scope="module")
def items():
    every = {it.task_id: it for it in load_humaneval() + load_mbpp(DATA)}
    return [every[i] for i in IDS]


def _play(items, attack: str, sandbox: SandboxConfig, tester: bool = False) -> list[tuple[str, float, bool]]:
    """``(task id, reward, told all passed)`` per item (one env and thread per item; a carry attack with the
    solutions left where it looks, as an earlier episode could have left them)."""

    def one(it):
        env = CodeTaskEnv([it], turns=("coder", "tester") if tester else ("coder",), sandbox=sandbox)
        reward, told = ra.play(env, 0, ra.ATTACKS[attack](it, ra.target_name(it)), ra.tester_text(it) if tester else None)
        return it.task_id, reward, told

    with ra.planted(attack, ra.solutions(items, ra.target_name)), ThreadPoolExecutor(len(items)) as pool:
        return list(pool.map(one, items))


def test_the_items_cover_every_way_a_verdict_is_computed(items):
    casts = [cast(it, SandboxConfig()) for it in items]
    assert [c.way for c in casts] == ["static", "replay", "replay", "static", "static"]
    assert all("expr" in call for call in casts[4].calls)  # MBPP/367's tree is built where the code runs
    assert not any("expr" in call for c in casts[:4] for call in c.calls)


@pytest.fixture(scope="module")
def built_items():
    every = {it.task_id: it for it in load_mbpp(DATA)}
    return [every[i] for i in BUILT]


def test_no_mbpp_item_runs_its_checks_in_the_codes_process(built_items):
    """The expected values of the items whose inputs are the solution's own objects stay outside."""
    casts = [cast(it, SandboxConfig()) for it in built_items]
    assert [c.way for c in casts] == ["static"] * len(BUILT)
    for it, c in zip(built_items, casts):
        assert len(c.checks) == len(it.tests), it.task_id


def test_an_item_whose_checks_only_the_codes_process_could_run_is_refused():
    """An item of one's own whose input is the solution's own object and whose check reads an attribute
    of the result: replaying it is impossible and judging it beside the code would let the code pass it,
    so no verdict is given."""
    item = CodeItem(
        "Mine/1",
        "Write grow(box), doubling box.size.",
        "class Box:\n    def __init__(self, size):\n        self.size = size\n"
        "def grow(box):\n    return Box(2 * box.size)\n",
        ("assert grow(Box(2)).size == 4",),
    )
    with pytest.raises(LangPZError, match=r"Mine/1: its tests fit no verdict.*f\(\.\.\.\) == <literal>"):
        cast(item, SandboxConfig())


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_attack_scores_under_bubblewrap(items, attack):
    scored = [(t, r) for t, r, _ in _play(items, attack, SandboxConfig(timeout_s=10.0)) if r != 0.0]
    assert scored == []


@pytest.mark.parametrize("bubblewrap", [True, False], ids=["bubblewrap", "rlimits"])
@pytest.mark.parametrize("attack", COSTLY)
def test_attacks_on_the_cost_score_nothing_and_end_at_a_limit(items, attack, bubblewrap):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = CodeTaskEnv(items[:1], turns=("coder",), sandbox=SandboxConfig(timeout_s=2.0, bubblewrap=bubblewrap))
        reward, _ = ra.play(env, 0, ra.ATTACKS[attack](items[0], ra.target_name(items[0])), None)
    assert reward == 0.0 and env.score["status"] in ("timeout", "memory", "output_limit", "error"), env.score


@pytest.mark.parametrize("attack", ["read_program", "frame_peek", "forge_report", "excepthook_exit"])
def test_items_with_inputs_built_by_the_code_cannot_be_forged(built_items, attack):
    scored = [(t, r) for t, r, _ in _play(built_items, attack, SandboxConfig(timeout_s=10.0)) if r != 0.0]
    assert scored == []
    assert [r for _, r, _ in _play(built_items, "reference", SandboxConfig(timeout_s=10.0))] == [1.0] * len(BUILT)


@pytest.mark.parametrize("attack", ["os_exit_at_top", "always_equal", "excepthook_exit", "forge_report", "frame_peek"])
def test_the_team_is_never_told_tests_passed_for_attack_code(items, attack):
    with_asserts = [items[0], items[3]]  # the others' checks have no top-level assert to hand to the tester
    told = [(t, told) for t, _, told in _play(with_asserts, attack, SandboxConfig(timeout_s=10.0), tester=True) if told]
    assert told == []


def test_the_reference_still_scores_and_is_told_its_tests_passed(items):
    got = _play(items, "reference", SandboxConfig(timeout_s=10.0), tester=True)
    assert [r for _, r, _ in got] == [1.0] * len(items)
    assert [told for t, _, told in got if t in ("HumanEval/0", "MBPP/11")] == [True, True]


@pytest.mark.parametrize(
    "attack",
    [
        "os_exit_at_top",
        "systemexit_in_function",
        "always_equal",
        "atexit_exit",
        "thread_exit",
        "read_program",
        "frame_peek",
        "forge_report",
        "int_subclass",
        "nan_result",
        "forged_answer_line",
        # closed in the rlimits mode by Landlock (files) and, as root, an IPC namespace (SysV)
        "answer_key",
        "fs_walk_answer_key",
        "carry_tmp",
        "carry_run_lock",
        "carry_dev_shm",
        "carry_sysv_shm",
    ],
)
def test_no_attack_scores_under_rlimits_with_landlock_either(items, attack):
    if landlock.abi() == 0:
        pytest.skip("this kernel has no Landlock: the rlimits mode reads every file (documented)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scored = [
            (t, r) for t, r, _ in _play(items[:4], attack, SandboxConfig(timeout_s=10.0, bubblewrap=False)) if r != 0.0
        ]
    assert scored == []


def test_rlimits_is_an_opt_in_warned_about_once():
    # a configuration no other test resolves (resolve() probes and warns once per configuration)
    cfg = replace(SandboxConfig(), bubblewrap=False, isolate_network=False, uid_base=1_700_000_000)
    with pytest.warns(UserWarning, match="answer key"):
        resolve(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve(cfg)


@pytest.mark.parametrize("attack", ["answer_key", "carry_tmp", "carry_run_lock", "carry_dev_shm"])
def test_without_landlock_the_rlimits_mode_leaks_the_answer_key(items, attack, monkeypatch):
    """Documents the rlimits mode on a kernel without Landlock: the answer key and what an earlier episode
    left in a shared folder are read (as root, a pool uid's own leftovers are removed after its run, but
    files another user left, here the solutions, stay readable)."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    monkeypatch.setattr(isolation, "_probed", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _play(items[:1] + items[3:4], attack, SandboxConfig(timeout_s=10.0, bubblewrap=False))
    assert [r for _, r, _ in got] == [1.0, 1.0]
