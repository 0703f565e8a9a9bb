"""The fixtures' expectation markers, read in one place (tests/conftest.py and benchmarks).

A fixture line ending in ``# expect: TDL002@27 [TDL004@5 ...]`` expects a finding of that code at
that 1-based column on that line."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<items>(?:TDL\d{3}@\d+\s*)+)")


def expected_in_text(text: str) -> set:
    """(line, column, code) for every ``# expect: CODE@col`` marker in a fixture's text."""
    expected = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for item in match.group("items").split():
                code, column = item.split("@")
                expected.add((number, int(column), code))
    return expected


def expected_findings(path: Path) -> set:
    """(line, column, code) for every ``# expect: CODE@col`` marker in a fixture."""
    return expected_in_text(path.read_text(encoding="utf-8"))


def fixture_files(kind: str = "*") -> list:
    return sorted(p for p in FIXTURES.glob(f"TDL*/{kind}/*.py") if not p.name.endswith(".fixed.py"))
