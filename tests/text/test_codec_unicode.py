"""Action words are matched after Unicode NFKC normalisation (lang_pz.text.codec): fullwidth
``ｄｏｗｎ`` plays ``down`` in a real env, while a folded reply still names at most one word and
nothing it does not spell (a fraction ``½`` is no ``1``, a dotless ``ı`` is no ``i``)."""

from __future__ import annotations

import unicodedata

import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

import lang_pz
from lang_pz.error import ActionParseError
from lang_pz.text.codec import action_vocabulary, parse_action

WORDS = ["up", "down", "left", "right", "stay"]
SPACE = spaces.Discrete(len(WORDS))


def fullwidth(text: str) -> str:
    """ASCII letters and digits as their fullwidth forms (U+FF01..U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize("word", WORDS)
def test_fullwidth_and_compatibility_forms_name_the_word(word):
    i = WORDS.index(word)
    for text in (
        fullwidth(word),
        fullwidth(word.upper()) + "！",
        f"ａｃｔｉｏｎ：{fullwidth(word)}",
        f"I go {fullwidth(word)}.",
    ):
        assert parse_action(SPACE, text, names=WORDS) == i, text


def test_a_folded_reply_names_one_word_and_only_what_it_spells():
    with pytest.raises(ActionParseError, match="ambiguous") as exc:
        parse_action(SPACE, f"{fullwidth('down')} or up", names=WORDS)
    assert exc.value.text == f"{fullwidth('down')} or up"  # the raw reply is kept
    with pytest.raises(ActionParseError, match="negated"):
        parse_action(SPACE, f"not {fullwidth('down')}", names=WORDS)
    for text in ("rıght", "go rıght", "ｄｏｗｎｓ", "ｕｐ２"):  # dotless i; part of a longer word
        with pytest.raises(ActionParseError, match="no action word"):
            parse_action(SPACE, text, names=WORDS)
    digits = spaces.Discrete(7)
    for text in ("½", "¼", "column ½"):  # NFKC: 1⁄2 with the fraction slash, neither 1 nor 2
        with pytest.raises(ActionParseError, match="no action word"):
            parse_action(digits, text, names=[str(c) for c in range(1, 8)])
    assert parse_action(digits, "column ３", names=[str(c) for c in range(1, 8)]) == 2


def test_words_equal_after_normalisation_are_refused_as_a_vocabulary():
    with pytest.raises(ValueError, match="NFKC"):
        action_vocabulary(spaces.Discrete(2), ["down", "ｄｏｗｎ"])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30))
def test_any_reply_parses_to_a_word_its_folded_text_spells_or_fails(text):
    try:
        i = parse_action(SPACE, text, names=WORDS)
    except ActionParseError:
        return
    assert WORDS[i] in unicodedata.normalize("NFKC", text).lower()


def test_a_real_env_plays_fullwidth_down_as_down():
    played = {}
    for reply in ("down", fullwidth("down")):
        env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5)
        env.reset(seed=0)
        infos = env.step(dict.fromkeys(env.agents, reply))[4]
        played[reply] = {a: (i["action"], i["parse_error"], i["fallback"]) for a, i in infos.items()}
        env.close()
    assert played[fullwidth("down")] == played["down"]
    assert all(error is None and not fallback for _, error, fallback in played["down"].values())
