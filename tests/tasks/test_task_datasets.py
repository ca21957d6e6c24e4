"""Users can point the HotpotQA loader at their own file or split, and every other loader
keeps working through the split package (lang_pz.tasks.datasets)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import DATA

import lang_pz
from lang_pz.error import LangPZError
from lang_pz.tasks.datasets import demo_items, load_hotpotqa, load_items

needs_data = pytest.mark.skipif(not (DATA / "hotpotqa").is_dir(), reason="benchmark data folder not available")

ROW = {
    "id": "mine-1",
    "question": "Where is the Blue Lantern Museum?",
    "answer": "Ostmark",
    "type": "bridge",
    "level": "easy",
    "supporting_facts": {"title": ["Blue Lantern Museum"], "sent_id": [0]},
    "context": {"title": ["Blue Lantern Museum"], "sentences": [["The Blue Lantern Museum is in Ostmark."]]},
}


def _write(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_hotpotqa_from_any_split_name_in_the_data_dir(tmp_path):
    _write(tmp_path / "hotpotqa" / "mine.jsonl", [ROW])
    for split in ("mine", "mine.jsonl"):
        env = lang_pz.make("tasks/hotpotqa-v0", data_dir=str(tmp_path), split=split)
        env.reset(seed=0)
        assert env.item.id == "mine-1" and "Ostmark" in env.observe("finder")["text"]


def test_hotpotqa_from_a_path(tmp_path):
    file = _write(tmp_path / "elsewhere" / "qa.jsonl", [ROW, {**ROW, "id": "mine-2"}])
    env = lang_pz.make("tasks/hotpotqa-v0", path=str(file), turns=("answerer",))
    assert [it.id for it in env.items] == ["mine-1", "mine-2"]
    env.reset(seed=0)
    env.step("Answer: Ostmark")
    assert env.score["em"] == 1.0
    assert [it.id for it in load_hotpotqa(path=file)] == ["mine-1", "mine-2"]


def test_hotpotqa_errors_name_the_file_and_the_fix(tmp_path):
    _write(tmp_path / "hotpotqa" / "mine.jsonl", [ROW])
    with pytest.raises(LangPZError, match=r"no file .*hotpotqa/other\.jsonl\. Files there: \['mine\.jsonl'\]\. Pass split="):
        load_items("hotpotqa", split="other", data_dir=tmp_path)
    with pytest.raises(LangPZError, match="path .* is not a file"):
        load_hotpotqa(path=tmp_path / "missing.jsonl")
    bad = _write(tmp_path / "bad.jsonl", [{"question": "q", "answer": "a"}])
    with pytest.raises(LangPZError, match=r"bad\.jsonl: row 1 lacks \['supporting_facts', 'context'\]"):
        load_hotpotqa(path=bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(LangPZError, match=r"broken\.jsonl:1: not valid JSON"):
        load_hotpotqa(path=broken)
    with pytest.raises(LangPZError, match="path= is for HotpotQA"):
        load_items("gsm8k", split="all", path=bad)


@needs_data
def test_the_shipped_splits_still_load(tmp_path):
    assert len(load_hotpotqa(DATA, "dev")) == 300 and len(load_hotpotqa(DATA, "train")) == 300
    shutil.copy(DATA / "hotpotqa" / "dev_300.jsonl", tmp_path / "copy.jsonl")
    assert [it.id for it in load_hotpotqa(path=tmp_path / "copy.jsonl")] == [it.id for it in load_hotpotqa(DATA, "dev")]
    assert len(load_items("mbpp", split="all", data_dir=DATA)) == 974
    assert len(load_items("gsm8k", split="test", data_dir=DATA)) == 264
    assert [it.task_id for it in demo_items("mbpp")] == ["MBPP/9001", "MBPP/9002"]


@pytest.mark.skipif(not (DATA / "gsm8k").is_dir(), reason="GSM8K data not available")
def test_a_gsm8k_row_without_its_marker_names_the_file_and_the_line(tmp_path):
    real = (DATA / "gsm8k" / "test.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    broken = json.loads(real[2])
    broken["answer"] = broken["answer"].replace("####", "so")
    path = tmp_path / "gsm8k" / "test.jsonl"
    path.parent.mkdir()
    # a blank line (skipped) before the broken row: the line number is the file's, not the row's
    path.write_text("\n".join([real[0], real[1], "", json.dumps(broken)]) + "\n", encoding="utf-8")
    with pytest.raises(LangPZError, match=r"gsm8k/test\.jsonl:4: not an openai/gsm8k row \(ValueError: .*no '####'"):
        load_items("gsm8k", split="all", data_dir=tmp_path)
    path.write_text("\n".join([real[0], json.dumps({"question": "q"})]) + "\n", encoding="utf-8")
    with pytest.raises(LangPZError, match=r"test\.jsonl:2: .*KeyError: 'answer'.*#### <number>"):
        load_items("gsm8k", split="all", data_dir=tmp_path)
    path.write_text("\n".join(real) + "\n", encoding="utf-8")
    assert [it.answer for it in load_items("gsm8k", split="all", data_dir=tmp_path)] == [
        json.loads(r)["answer"].rsplit("####", 1)[1].strip().replace(",", "") for r in real
    ]
