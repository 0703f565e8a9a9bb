"""The server's reparse after an edit (torchdevlint.server.reparse): the tree it builds from
the last version's untouched statements and the edited span must be the tree a full parse of
the new text gives, node for node, whatever the edit."""
from __future__ import annotations

import ast
import random
from pathlib import Path

import libcst as cst
import pytest

from benchmarks.generate_large import generate
from torchdevlint.server.reparse import Reparser

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*.py"))

# What a user types: lines and characters added, removed, changed anywhere (first and last
# statements, the header's comments, between statements, inside blocks, comments indented
# as a block's or as the module's), and whole new statements.
SNIPPETS = ["x = 1\n", "    y = x + 1\n", "# a comment\n", "    # an indented comment\n", "\n",
            "def added(a):\n    return a\n", "import os\n", "if x:\n    pass\n", "z", "(",
            ")", "    ", "@decorator\n", "class C:\n    pass\n", "'''doc'''\n"]


def _edit(text: str, rng: random.Random) -> str:
    lines = text.splitlines(True)
    at = rng.randrange(len(lines) + 1)
    kind = rng.randrange(4)
    if kind == 0:  # insert a line
        return "".join(lines[:at] + [rng.choice(SNIPPETS)] + lines[at:])
    if kind == 1 and lines:  # delete a line
        at = min(at, len(lines) - 1)
        return "".join(lines[:at] + lines[at + 1:])
    offset = rng.randrange(len(text) + 1)
    if kind == 2:  # type some characters
        return text[:offset] + rng.choice(SNIPPETS) + text[offset:]
    return text[:offset] + text[offset + rng.randrange(1, 8):]  # delete some characters


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
        cst.parse_module(text)
    except (SyntaxError, cst.ParserSyntaxError, ValueError, RecursionError):
        return False
    return True


def _check(parser: Reparser, text: str) -> None:
    module = parser.parse(text)
    full = cst.parse_module(text)
    # the full parse's code, which is the text but where LibCST itself does not round-trip
    # (see test_a_text_libcst_does_not_round_trip_reparses_as_the_full_parse)
    assert module.code == full.code
    if module.default_indent == full.default_indent:  # (the same representation of blocks)
        assert module.deep_equals(full), text


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_edits_of_every_fixture_give_the_full_parse(path):
    text = path.read_text(encoding="utf-8")
    if not _parses(text):
        pytest.skip("not a parsable program")
    rng = random.Random(str(path.relative_to(ROOT)))
    parser = Reparser()
    parser.parse(text)
    checked = 0
    for _ in range(60):
        edited = _edit(text, rng)
        if not _parses(edited):
            continue  # (the server's syntax check reports these; nothing is parsed)
        _check(parser, edited)
        text = edited
        checked += 1
    assert checked >= 10


def test_a_keystroke_in_a_long_script_parses_only_its_statement():
    text = generate(500)
    parser = Reparser()
    parser.parse(text)
    statements = len(parser.parse(text).body)
    line = text.splitlines(True).index(next(l for l in text.splitlines(True)
                                            if l.strip().startswith("loss = ")))
    lines = text.splitlines(True)
    lines[line] = lines[line].replace("loss = ", "loss  = ")
    edited = "".join(lines)
    _check(parser, edited)
    assert parser.reused >= statements - 3  # the edited statement and its two neighbours
    # typing at the very end (a new statement) and at the very start (a comment)
    for typed in (lambda t: t + "print(loss)\n", lambda t: "# header\n" + t):
        edited = typed(edited)
        _check(parser, edited)
        assert parser.reused >= statements - 3


def test_the_same_text_again_reuses_everything_and_a_bad_span_falls_back():
    text = "import torch\n\n\ndef f():\n    return 1\n\n\nx = f()\ny = 2\n"
    parser = Reparser()
    parser.parse(text)
    assert parser.parse(text) is not None and parser.reused == 4
    # an edit that makes the span a block LibCST rejects on its own is parsed whole
    broken = text.replace("    return 1\n", "    return 1\n  z = 3\n")
    with pytest.raises(cst.ParserSyntaxError):
        parser.parse(broken)
    _check(parser, text)


def test_a_text_libcst_does_not_round_trip_reparses_as_the_full_parse():
    """LibCST 1.x drops the blank line before an indented comment in a module's footer
    (``x = 1\\n\\n    # c\\n`` gives back ``x = 1\\n    # c\\n``): the reparse after an edit
    that leaves such a footer gives the full parse's tree and code, not a fallback's error.
    Found by the random edits of a fixture (``import torch`` and one assignment)."""
    before = "mpos\nx = 1\n\n    # an indented comment\nim\n\n"
    after = "mpos\nx = 1\n\n    # an indented comment\n\n"
    parser = Reparser()
    parser.parse(before)
    module = parser.parse(after)
    full = cst.parse_module(after)
    assert module.deep_equals(full)
    assert module.code == full.code
