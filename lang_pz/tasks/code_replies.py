"""The coder's and tester's replies in :class:`~lang_pz.tasks.code_env.CodeTaskEnv`: what a
reply delivers (:func:`extract_code`, :func:`extract_tests`) and what a reply that parses looks
like (:func:`code_reply_format`, a grammar and a regex for constrained decoding).

Parsing untrusted text runs under :data:`~lang_pz.tasks.sandbox.verdict.PARSE_LOCK`; nothing
here executes it.
"""

from __future__ import annotations

import ast
import re

from lang_pz.tasks.sandbox.verdict import PARSE_LOCK
from lang_pz.text import replies
from lang_pz.text.replies import ReplyFormat

__all__ = ["code_reply_format", "extract_code", "extract_tests"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.DOTALL)
#: Characters that never stand in a one-line reply of the code formats (control characters:
#: Python refuses a NUL in source) nor in a single-quoted string literal (quote, backslash).
_CONTROL = "".join(map(chr, range(0x20))) + "\x7f"
_CODE_START = re.compile(r"^[ \t]*(def |async def |class |import |from \S+ import |@)", re.MULTILINE)


#: What parsing untrusted text can raise besides ``SyntaxError``: ``ValueError`` (null bytes,
#: lone surrogates), ``RecursionError`` (deep nesting or a long chain such as
#: ``1 + 1 + ...``: about 3,000 unary minus signs) and ``MemoryError`` (the parser's own stack:
#: about 100,000). All of them mean "not valid Python" here.
_UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


def _parses(source: str) -> ast.Module | None:
    """``ast.parse(source)`` under :data:`PARSE_LOCK`, or ``None`` if it is not valid Python."""
    with PARSE_LOCK:
        try:
            return ast.parse(source)
        except _UNPARSABLE:
            return None


def _compiles(source: str) -> bool:
    """Whether ``source`` compiles (under :data:`PARSE_LOCK`)."""
    with PARSE_LOCK:
        try:
            compile(source, "<test>", "exec")
        except _UNPARSABLE:
            return False
        return True


def extract_code(text: str) -> str | None:
    """The code in ``text``: the last fenced block that defines a function; else the whole
    text if it is valid Python; else everything from the first line starting a definition or an
    import (up to a closing fence). ``None`` if that has no ``def``."""
    blocks = [body for _, body in _FENCE.findall(text) if "def " in body]
    if blocks:
        return blocks[-1].strip("\n") + "\n"
    if "def " in text and _parses(text) is not None:
        return text.strip("\n") + "\n"
    m = _CODE_START.search(text)
    if m is None:
        return None
    code = text[m.start() :]
    code = code.split("```", 1)[0]
    return code.rstrip() + "\n" if "def " in code else None


def extract_tests(text: str, max_tests: int = 10) -> tuple[str, tuple[str, ...]]:
    """``(setup, asserts)`` from a tester's text: top-level ``import`` lines as set-up and up
    to ``max_tests`` ``assert`` statements (from fenced blocks if any, else the whole text).

    The source is parsed with :mod:`ast` when it is valid Python, else line by line (each line
    that starts with ``assert`` and compiles on its own is a test).
    """
    blocks = [body for _, body in _FENCE.findall(text)]
    source = "\n".join(blocks) if blocks else text
    setup: list[str] = []
    tests: list[str] = []
    tree = _parses(source)
    if tree is not None:
        for node in tree.body:
            seg = ast.get_source_segment(source, node)
            if seg is None:
                continue
            if isinstance(node, ast.Assert):
                tests.append(seg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                setup.append(seg)
    else:
        for line in source.splitlines():
            line = line.strip()
            if line.startswith(("assert ", "assert(")) and _compiles(line):
                tests.append(line)
            elif line.startswith(("import ", "from ")) and _compiles(line):
                setup.append(line)
    return "\n".join(setup), tuple(tests[:max_tests])


def code_reply_format(role: str, name: str | None) -> ReplyFormat:
    """What a reply of ``role`` (``"coder"``, else the tester) that parses looks like, for the
    function ``name`` (``None``: unknown): see :meth:`~lang_pz.tasks.code_env.CodeTaskEnv.reply_format`."""
    if role == "coder":
        head = replies.literal(f"def {name}(") if name else replies.literal("def ")
        body = replies.chars('"' + _CONTROL, 1, 150)
        return ReplyFormat.of(replies.sequence(head, body), f"def {name or 'f'}(x): return x")
    # no leading zero: "01" is a syntax error in Python 3 (a measured tester reply)
    natural = replies.either(replies.literal("0"), replies.sequence(replies.one_of(list("123456789")), replies.digits(0, 5)))
    num = replies.sequence(replies.repeat(replies.literal("-"), 0, 1), natural)
    text = replies.sequence(replies.literal("'"), replies.chars("'\\\"" + _CONTROL, 0, 12), replies.literal("'"))
    nums = replies.sequence(num, replies.repeat(replies.sequence(replies.literal(", "), num), 0, 2))
    listed = replies.sequence(replies.literal("["), replies.repeat(nums, 0, 1), replies.literal("]"))
    value = replies.either(num, text, listed, replies.one_of(["True", "False", "None"]))
    args = replies.repeat(
        replies.sequence(value, replies.repeat(replies.sequence(replies.literal(", "), value), 0, 2)), 0, 1
    )
    test = replies.sequence(replies.literal(f"assert {name or 'f'}("), args, replies.literal(") == "), value)
    return ReplyFormat.of(test, f"assert {name or 'f'}(1) == 1")
