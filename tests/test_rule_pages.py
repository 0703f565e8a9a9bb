"""Every rule page's code does what the page says: each *Example* block gets that rule's
finding, and no *Use instead* block does.

A block is linted as written, after the imports the pages leave implied (``torch``,
``torch.nn as nn``, ``numpy as np``) where it has none of its own, with that rule selected (an
opt-in rule too). A *Use instead* block is a whole program, not a line to splice in.
"""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from torchdevlint.engine import lint_source
from torchdevlint.rules import ALL_RULES

IMPLIED = "import numpy as np\nimport torch\nimport torch.nn as nn\n"
CODE_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```", re.M | re.S)


def blocks(code: str, section: str) -> list:
    page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    body = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    assert body, f"{code}.md has no {section} section"
    found = [m.group("code") for m in CODE_BLOCK.finditer(body.group(1))]
    assert found, f"{code}.md: {section} shows no python block"
    return found


def findings(rule, block: str) -> list:
    source = block if re.search(r"^(?:import|from) torch\b", block, re.M) else IMPLIED + block
    result = lint_source(source, "example.py", [rule])
    assert result.error is None, f"{rule.code}: {result.error}\n{source}"
    return [f for f in result.findings if f.code == rule.code]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_example_gets_the_rules_finding(rule):
    for block in blocks(rule.code, "Example"):
        assert findings(rule, block), f"{rule.code}.md's Example gives no {rule.code}:\n{block}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_no_use_instead_gets_the_rules_finding(rule):
    for block in blocks(rule.code, "Use instead"):
        assert not findings(rule, block), f"{rule.code}.md's Use instead still gives {rule.code}:\n{block}"
