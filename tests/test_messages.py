"""Message text is part of the interface (people grep for it, editors show it, docs quote it):
every fixture's findings, with their full messages, are kept in a snapshot that a change must
update on purpose. Update with ``TORCHDEVLINT_UPDATE_SNAPSHOTS=1 python -m pytest
tests/test_messages.py`` and review the diff."""
from __future__ import annotations

import os

from conftest import FIXTURES, fixture_files, fixture_rules
from torchdevlint.engine import lint_source

SNAPSHOT = FIXTURES.parent / "tests" / "snapshots" / "messages.txt"


def _render() -> str:
    lines = []
    for path in fixture_files():
        result = lint_source(path.read_text(encoding="utf-8"), path.name, fixture_rules(path))
        for finding in result.findings:
            where = path.relative_to(FIXTURES).as_posix()
            lines.append(f"{where}:{finding.line}:{finding.column}: {finding.code} {finding.message}")
    return "\n".join(lines) + "\n"


def test_fixture_messages_match_the_snapshot():
    rendered = _render()
    if os.environ.get("TORCHDEVLINT_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(rendered, encoding="utf-8")
    assert rendered.count("\n") > 20, "the fixtures should produce findings"
    assert SNAPSHOT.read_text(encoding="utf-8") == rendered, \
        "messages changed: review them and update the snapshot (see this module's docstring)"
