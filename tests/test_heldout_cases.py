"""The held-out bug cases (benchmarks/heldout/cases.tsv) are well-formed data, and
benchmarks/heldout.py scores a case as it says. Not the recall figure: that is measured by
running the script, never asserted here."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.heldout import CASES_HEADER, DEFAULT_CASES, RUN_MODES, read_cases
from benchmarks.precision import DataError
from conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "heldout.py"
HEADER = "\t".join(CASES_HEADER) + "\n"

BUGGY = '''import torch


def restore(model, path):
    state = torch.load(path)
    model.load_state_dict(state)
'''
TWIN = '''import torch


def restore(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state)
'''


def test_the_cases_file_is_well_formed():
    cases = read_cases(DEFAULT_CASES)  # raises DataError on any malformed row
    assert len(cases) >= 40
    base = DEFAULT_CASES.parent
    for case in cases:
        for name in (case.buggy, case.twin):
            ast.parse((base / name).read_text(encoding="utf-8"), filename=name)  # runnable
        assert case.source.startswith("https://")
        assert case.run in RUN_MODES
    # each of TDL005-TDL011 has cases, and the cases come from many reports
    by_rule = Counter(c.rule for c in cases)
    assert all(by_rule[f"TDL{n:03d}"] >= 3 for n in range(5, 12)), by_rule
    assert len({c.source for c in cases}) == len(cases)


def test_the_cases_are_not_fixtures():
    # held out: nothing under fixtures/ (which the rules are tuned on) is a case file
    for case in read_cases(DEFAULT_CASES):
        assert not (DEFAULT_CASES.parent / case.buggy).resolve().is_relative_to(
            (ROOT / "fixtures").resolve())


def write_case(tmp_path: Path, row: dict, buggy: str = BUGGY, twin: str = TWIN,
               name: str = "case-1") -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "buggy.py").write_text(buggy)
    (folder / "twin.py").write_text(twin)
    values = {"id": name, "rule": "TDL003", "buggy": f"{name}/buggy.py", "lines": "5",
              "twin": f"{name}/twin.py", "run": "none", "error": "needs a GPU checkpoint",
              "validated": "-", "source": "https://github.com/o/r/issues/1",
              "description": "a GPU checkpoint loaded without map_location", **row}
    cases = tmp_path / "cases.tsv"
    cases.write_text(HEADER + "\t".join(values[k] for k in CASES_HEADER) + "\n")
    return cases


@pytest.mark.parametrize("row, message", [
    ({"lines": "40"}, "past its end or blank"),
    ({"lines": "2"}, "past its end or blank"),  # a blank line is not a bug line
    ({"twin": "case-1/missing.py"}, "does not exist"),
    ({"twin": "case-1/buggy.py"}, "the twin is the buggy file itself"),
    ({"source": "see the forum"}, "is not a URL"),
    ({"rule": "E501"}, "is not a TDL code"),
    ({"run": "gpu"}, "run 'gpu' is none of"),
    ({"run": "load"}, "needs setup.py"),
    ({"description": ""}, "the description is empty"),
])
def test_malformed_rows_are_rejected(tmp_path, row, message):
    with pytest.raises(DataError, match=message):
        read_cases(write_case(tmp_path, row))


def test_a_twin_identical_to_the_buggy_program_is_rejected(tmp_path):
    with pytest.raises(DataError, match="same program"):
        read_cases(write_case(tmp_path, {}, twin=BUGGY))


def run_script(cases: Path, tmp_path: Path, *extra: str):
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--cases", str(cases), "--json",
                           str(report), *extra], capture_output=True, text=True, cwd=tmp_path)
    return done, (json.loads(report.read_text()) if report.exists() else None)


def test_caught_on_a_bug_line_and_a_clean_twin(tmp_path):
    done, result = run_script(write_case(tmp_path, {}), tmp_path, "--min-recall", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    (case,) = result["cases"]
    assert case["caught"] and case["rule_fired_at"] == [5] and case["twin_findings"] == []
    assert "PASS" in done.stdout


def test_a_finding_elsewhere_is_a_miss_and_twin_findings_are_counted(tmp_path):
    # the bug line named is 6, the rule fires on 5: missed; the twin keeps the bug: counted
    done, result = run_script(write_case(tmp_path, {"lines": "6"}, twin=BUGGY + "\n"),
                              tmp_path)
    assert done.returncode == 1
    (case,) = result["cases"]
    assert not case["caught"] and case["rule_fired_at"] == [5]
    assert len(case["twin_findings"]) == 1 and "TDL003" in case["twin_findings"][0]
    assert "1 finding(s) on the correct twins" in done.stdout
    assert result["rules"]["TDL003"]["twin_findings"] == 1


def test_malformed_cases_file_is_one_diagnostic(tmp_path):
    cases = write_case(tmp_path, {"lines": "99"})
    done, _ = run_script(cases, tmp_path)
    assert done.returncode == 2
    assert "past its end" in done.stderr and "Traceback" not in done.stderr
