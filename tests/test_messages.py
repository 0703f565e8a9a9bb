"""Message text is part of the interface (people grep for it, editors show it, docs quote it):
each fixture's findings, with their full messages, are kept in a snapshot of its own,
``tests/snapshots/<CODE>/<positive|negative>/<name>.txt`` beside nothing but that fixture's
rule's findings (fixtures are linted with their own rule only: ``conftest.fixture_rules``), and
a change must update it on purpose. Update with ``TORCHDEVLINT_UPDATE_SNAPSHOTS=1 python -m
pytest tests/test_messages.py`` (it writes the snapshots that differ and removes those of
fixtures without findings) and review the diff."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest

from conftest import FIXTURES, ROOT, expected_findings, fixture_files, fixture_rules
from torchdevlint import engine
from torchdevlint.engine import lint_source
from torchdevlint.findings import Finding

SNAPSHOTS = ROOT / "tests" / "snapshots"
UPDATE = os.environ.get("TORCHDEVLINT_UPDATE_SNAPSHOTS") == "1"
# (a fixture without markers has no findings, the markers test says, and so no snapshot)
WITH_FINDINGS = [path for path in fixture_files() if expected_findings(path)]


def snapshot_of(fixture: Path) -> Path:
    return SNAPSHOTS / fixture.relative_to(FIXTURES).with_suffix(".txt")


def render(fixture: Path) -> str:
    result = lint_source(fixture.read_text(encoding="utf-8"), fixture.name, fixture_rules(fixture))
    return "".join(f"{f.line}:{f.column}: {f.code} {f.message}\n" for f in result.findings)


def mismatch(fixture: Path) -> Optional[str]:
    """Why ``fixture``'s messages differ from its snapshot, or None (written first where
    ``TORCHDEVLINT_UPDATE_SNAPSHOTS=1``)."""
    rendered, snapshot = render(fixture), snapshot_of(fixture)
    if not rendered:
        return f"{fixture.name} has no findings"
    if UPDATE and (not snapshot.is_file() or snapshot.read_text(encoding="utf-8") != rendered):
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(rendered, encoding="utf-8")
    if not snapshot.is_file():
        return f"no snapshot {snapshot.relative_to(ROOT)}: write it (see this module's docstring)"
    if snapshot.read_text(encoding="utf-8") != rendered:
        return (f"messages changed in {fixture.relative_to(FIXTURES)}: review them and update "
                f"{snapshot.relative_to(ROOT)} (see this module's docstring)")
    return None


@pytest.mark.parametrize("fixture", WITH_FINDINGS,
                         ids=lambda p: f"{p.parts[-3]}-{p.parts[-2]}-{p.stem}")
def test_fixture_messages_match_its_snapshot(fixture):
    problem = mismatch(fixture)
    assert problem is None, problem


def test_every_snapshot_is_one_fixtures():
    wanted = {snapshot_of(path) for path in WITH_FINDINGS}
    stale = sorted(path for path in SNAPSHOTS.rglob("*") if path.is_file() and path not in wanted)
    if UPDATE:
        for path in stale:
            path.unlink()
        stale = []
    assert stale == [], f"snapshots of no fixture with findings: {stale}"
    assert len(wanted) > 20, "the fixtures should produce findings"


def test_a_snapshot_holds_its_own_rules_findings_only():
    for fixture in WITH_FINDINGS:
        codes = {line.split()[1] for line in snapshot_of(fixture).read_text(encoding="utf-8")
                 .splitlines()}
        assert codes == {fixture.parts[-3]}, f"{snapshot_of(fixture)} holds {sorted(codes)}"


def test_a_changed_message_fails_its_snapshot(monkeypatch):
    """The check above is the one that catches a reworded message."""
    fixture = WITH_FINDINGS[0]
    assert mismatch(fixture) is None
    monkeypatch.setattr(engine, "_finding", lambda path, code, violation, position:
                        Finding(path, *position[:2], code, violation.message + " (reworded)"))
    monkeypatch.setattr("test_messages.UPDATE", False)
    assert "messages changed" in mismatch(fixture)

