"""``# noqa`` answered from Python's ast where a finding's group cannot hold one: the answer
must be the tokenizer's (flake8's) for every line, whatever joins lines into a group."""
from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from torchdevlint import noqa

CASES = {
    "backslash": "x = 1 + \\\n    2  # noqa: TDL002\ny = 3\n",
    "shared line": "a = 1; b = (\n    2)  # noqa\nc = 3\n",
    "continued after a semicolon": "a = 1; \\\nb = 2  # noqa: TDL001\n",
    "multi-line string": 'x = f("""\n  text\n""")  # noqa: TDL003\ny = x\n',
    "string on a decorator": '@deco("""\n""")  # noqa\ndef f():\n    return 1\n',
    "comment lines": "# noqa\nx = 1\n\n  # NOQA: TDL001\ny = 2\n",
    "nested blocks": textwrap.dedent("""\
        class A:
            def f(self):
                try:
                    x = g(
                        1)  # noqa: TDL004
                except E as e:  # noqa
                    pass
                for i in y:
                    z = '''a
        b'''  # noqa:TDL001,TDL002
                return x
        """),
    "none": "import torch\nx = torch.zeros(3).cuda()\n",
}
if sys.version_info >= (3, 10):
    CASES["match"] = textwrap.dedent("""\
        match v:
            case {"k": w}:  # noqa
                x = '''
        '''  # noqa: TDL002
            case _:
                pass
        """)


@pytest.mark.parametrize("source", CASES.values(), ids=CASES.keys())
def test_every_line_is_answered_as_the_tokenizer_answers(source):
    lines = noqa.split_lines(source)
    exact = noqa.NoqaIndex(lines)
    fast = noqa.NoqaIndex(lines, ast.parse(source))
    for number in range(1, len(lines) + 2):
        for code in ("TDL001", "TDL002", "TDL003", "TDL004"):
            assert fast.suppressed(code, number) == exact.suppressed(code, number), (number, code)


def test_a_finding_on_a_statement_without_noqa_does_not_tokenize(monkeypatch):
    source = "x = 1  # noqa\n" + "".join(f"y{i} = {i}\n" for i in range(50))
    calls = []
    monkeypatch.setattr(noqa, "tokens_of", lambda lines: calls.append(1) or None)
    index = noqa.NoqaIndex(noqa.split_lines(source), ast.parse(source))
    assert not index.suppressed("TDL001", 30)
    assert calls == []
    index.suppressed("TDL001", 1)  # a statement with a # noqa: flake8's groups are needed
    assert calls == [1]
