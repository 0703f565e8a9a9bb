from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
sys.path.insert(0, str(ROOT))
from benchmarks.fixture_markers import EXPECT, expected_findings, fixture_files  # noqa: E402,F401
# The runtime suite runs real torch. Without torch (the lowest and highest supported Pythons,
# for which CI has no torch wheel at hand) it is left out as a whole rather than failing to
# import; .ci/python-versions says so in its output.
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob = ["runtime/test_*.py"]


def fixture_rules(path: Path) -> tuple:
    """The rules a fixture is linted with: the rule of its directory only
    (``fixtures/TDL004/...`` runs TDL004, as ``--select TDL004`` would), so that a fixture's
    markers, snapshot and fixed version say what its own rule does and no other's."""
    from torchdevlint.rules import RULES_BY_CODE
    return (RULES_BY_CODE[path.parts[-3]],)


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
