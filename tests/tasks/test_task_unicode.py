"""The task envs show and accept Unicode: an agent can read and write a gold answer's exact
characters. Before, observations were folded to ASCII ('Niño' was shown as 'Nino', 'Jānis
Strazdiņš' as 'Janis Strazdins'), so 20 of the 600 HotpotQA answers could not be copied from
what the agent saw."""

from __future__ import annotations

import copy
import pickle

import pytest
from support import DATA

import lang_pz
from lang_pz.spaces import TEXT_CHARSET, UnicodeText, text_space, to_unicode_charset, unicode_text_space
from lang_pz.tasks.qa_env import make_hotpotqa

needs_data = pytest.mark.skipif(not (DATA / "hotpotqa").is_dir(), reason="benchmark data folder not available")


@needs_data
@pytest.mark.parametrize("split", ["dev", "train"])
def test_every_hotpotqa_gold_answer_is_shown_verbatim_and_scores_em_1_written_back(split):
    env = make_hotpotqa(data_dir=str(DATA), split=split, turns=("answerer",))
    non_ascii = 0
    for i, item in enumerate(env.items):
        env.reset(options={"index": i})
        obs = env.observe("answerer")["text"]
        assert env.observation_space("answerer").contains({"text": obs})
        assert item.answer in obs, (item.id, item.answer)
        assert env.action_space("answerer").contains(f"Answer: {item.answer}")
        env.step(f"Answer: {item.answer}")
        assert env.score["em"] == 1.0, (item.id, item.answer)
        non_ascii += not item.answer.isascii()
    assert non_ascii >= 8  # e.g. 'Renáta Tomanová', 'Xawery Żuławski', 'U2 360° Tour'


def test_unicode_spaces_and_the_ascii_default():
    space = unicode_text_space(64)
    assert isinstance(space, UnicodeText) and space.min_length == 0
    for text in ("Jānis Strazdiņš", "Niño", "26–30 August 1914", "575 acres (2.08 km²)", "\t\n", ""):
        assert space.contains(text), text
    assert not space.contains("a\x00b") and not space.contains("\ud800") and not space.contains("x" * 65)
    assert to_unicode_charset("Niño\x00\U0001f600") == "Niño??"
    space.seed(3)
    a = space.sample()
    assert space.contains(a)
    clone = pickle.loads(pickle.dumps(space))
    assert clone == space and clone.sample() == copy.deepcopy(space).sample()
    assert "BMP" in repr(space) and len(repr(space)) < 100
    # the game wrappers' observations are Unicode too; their declared actions stay printable ASCII
    assert text_space(10).character_set == frozenset(TEXT_CHARSET)
    rps = lang_pz.make("classic/rps-v0")
    assert isinstance(rps.observation_space("player_0")["text"], UnicodeText)
    assert rps.action_space("player_0").character_set == frozenset(TEXT_CHARSET)


def test_task_transcripts_keep_the_characters_written():
    env = lang_pz.make("tasks/hotpotqa-v0", source="demo")
    env.reset(seed=0)
    env.step("Evidence: 1.1 – je pense, Señor")
    assert "[finder] Evidence: 1.1 – je pense, Señor" in env.observe("answerer")["text"]
