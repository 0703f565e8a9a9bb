from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# The runtime suite runs real torch. Without torch (the lowest and highest supported Pythons,
# for which CI has no torch wheel at hand) it is left out as a whole rather than failing to
# import; .ci/python-versions says so in its output.
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob = ["runtime/test_*.py"]

EXPECT = re.compile(r"#\s*expect:\s*(?P<items>(?:TDL\d{3}@\d+\s*)+)")


def expected_findings(path: Path) -> set:
    """(line, column, code) for every ``# expect: CODE@col`` marker in a fixture."""
    expected = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for item in match.group("items").split():
                code, column = item.split("@")
                expected.add((number, int(column), code))
    return expected


def fixture_files(kind: str = "*") -> list:
    return sorted(p for p in FIXTURES.glob(f"TDL*/{kind}/*.py") if not p.name.endswith(".fixed.py"))


def fixture_rules(path: Path) -> tuple:
    """The rules a fixture is linted with: those on by default, and the rule of its directory
    where that one is opt-in (``fixtures/TDL009/...`` runs TDL009 too, as
    ``--extend-select TDL009`` would)."""
    from torchdevlint.rules import DEFAULT_RULES, RULES_BY_CODE
    own = RULES_BY_CODE.get(path.parts[-3])
    return tuple(DEFAULT_RULES) + ((own,) if own is not None and own not in DEFAULT_RULES else ())


def opt_in_fixture_code(path: Path):
    """The code of a fixture's opt-in rule (its directory's), or None."""
    from torchdevlint.rules import OPT_IN_CODES
    return path.parts[-3] if path.parts[-3] in OPT_IN_CODES else None


def run_cli(*args, cwd=None, input=None):
    return subprocess.run([sys.executable, "-m", "torchdevlint", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, input=input)


@pytest.fixture
def lint():
    """Lint a source snippet; returns [(line, column, code)]."""
    from torchdevlint.engine import lint_source

    def _lint(source: str, select=None):
        from torchdevlint.config import select_rules
        rules = select_rules(select or ["TDL"])
        result = lint_source(source, "snippet.py", rules)
        assert result.error is None, result.error
        return [(f.line, f.column, f.code) for f in result.findings]

    return _lint
