"""Each rule's page quotes the errors its runtime proof expects: docs and proofs cannot drift."""
from __future__ import annotations

import re

import pytest

from runtime_harness import ROOT
from runtime_proofs import PROOFS

WHY_SECTION = re.compile(r"^## Why is this bad\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
CODE_BLOCK = re.compile(r"^```[^\n]*\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)
ERROR_LINE = re.compile(r"(?P<type>[A-Za-z_][\w.]*(Error|Exception)): (?P<message>.*)")


def quoted_errors(rule: str) -> list:
    """(type, message) of every error line in the code blocks of "Why is this bad"."""
    page = (ROOT / "docs" / "rules" / f"{rule}.md").read_text(encoding="utf-8")
    section = WHY_SECTION.search(page)
    assert section, f"{rule}.md has no 'Why is this bad' section"
    quotes = []
    for block in CODE_BLOCK.finditer(section.group("body")):
        for line in block.group("code").splitlines():
            match = ERROR_LINE.fullmatch(line.strip())
            if match:
                quotes.append((match.group("type"), match.group("message")))
    return quotes


@pytest.mark.parametrize("rule", sorted(PROOFS))
def test_docs_quote_only_errors_the_proof_expects(rule):
    quotes = quoted_errors(rule)
    assert quotes, f"{rule}.md quotes no error"
    errors = PROOFS[rule].all_errors()
    for error_type, message in quotes:
        assert any(error.matches(error_type, message) for error in errors), \
            f"{rule}.md quotes '{error_type}: {message}', which its runtime proof does not expect"


@pytest.mark.parametrize("rule", sorted(PROOFS))
def test_docs_quote_every_error_the_proof_expects(rule):
    quotes = {f"{error_type}: {message}" for error_type, message in quoted_errors(rule)}
    for error in PROOFS[rule].all_errors():
        assert error.quote() in quotes, f"{rule}.md does not quote {error.quote()!r}"
