"""benchmarks/precision.py (the precision review) on a tiny fake corpus: no network, no corpora.

The verdict locations are taken from what ``torchdevlint --isolated --no-cache --quiet .``
prints in the corpus, which is the format the verdict files use, so the script's matching of
JSON findings to them is checked against the text format too (a notebook cell included).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "precision.py"
NAME = "demo+alpha"
REPOSITORY = "https://github.com/demo/alpha"
COMMIT = "0123456789abcdef0123456789abcdef01234567"

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# demo"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import torch\n", "z = torch.zeros(1)\n", "z.to('cpu')\n", "print(z)\n"]},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


@pytest.fixture
def corpus(tmp_path):
    """A corpora folder with one checkout, and the locations torchdevlint prints for it."""
    checkout = tmp_path / "corpora" / NAME
    (checkout / "sub").mkdir(parents=True)
    (checkout / ".git").mkdir()  # (a clone's marker: the project root)
    (checkout / "a.py").write_text(
        'import torch\nx = torch.zeros(3)\nx.to("cpu")\nstate = torch.load("a.pt")\n')
    (checkout / "sub" / "b.py").write_text("import torch\ny = torch.ones(2)\ny.cuda()\n")
    (checkout / "broken.py").write_text("def broken(:\n")
    (checkout / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    text = subprocess.run(
        [sys.executable, "-m", "torchdevlint", "--isolated", "--no-cache", "--quiet", "."],
        cwd=checkout, capture_output=True, text=True).stdout
    found = {}
    for line in text.splitlines():
        location, rest = line.split(": ", 1)
        found[(location.split(":")[0], rest.split()[0])] = location
    assert set(found) == {("a.py", "TDL001"), ("a.py", "TDL003"), ("broken.py", "E999"),
                          ("nb.ipynb", "TDL001"), ("sub/b.py", "TDL001"),
                          ("sub/b.py", "TDL002")}, text
    assert found[("nb.ipynb", "TDL001")] == "nb.ipynb:cell 2:3:1"
    return tmp_path, found


def write_data(base: Path, verdicts, corpora=((NAME, REPOSITORY, COMMIT, "demo scripts"),)):
    data = base / "data"
    (data / "verdicts").mkdir(parents=True, exist_ok=True)
    (data / "corpora.tsv").write_text(
        "name\trepository\tcommit\tkind\n" + "".join("\t".join(row) + "\n" for row in corpora))
    (data / "verdicts" / f"{NAME}.tsv").write_text(
        "location\tcode\tverdict\treason\n" + "".join("\t".join(row) + "\n" for row in verdicts))
    return data


def run_script(base: Path, data: Path, *extra):
    report = base / "report.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--set", "all", "--corpora", str(base / "corpora"),
         "--data-dir", str(data),
         "--jobs", "2", "--json", str(report), *map(str, extra)],
        capture_output=True, text=True, cwd=base)
    result = json.loads(report.read_text()) if report.exists() else None
    return done, result


def all_true(found):
    return [(location, code, "TRUE", "a real bug")
            for (path, code), location in found.items() if code != "E999"]


def test_classification(corpus):
    base, found = corpus
    verdicts = [
        (found[("a.py", "TDL001")], "TDL001", "TRUE", "discarded move"),
        (found[("a.py", "TDL003")], "TDL003", "FALSE", "checkpoint written on the CPU"),
        (found[("nb.ipynb", "TDL001")], "TDL001", "TRUE", "discarded move in a notebook"),
        (found[("sub/b.py", "TDL001")], "TDL001", "TRUE", "discarded cuda()"),
        ("gone.py:7:3", "TDL002", "TRUE", "was a real hard-coded cuda"),
        ("old.py:2:5", "TDL003", "FALSE", "dataset cache"),
    ]
    done, result = run_script(base, write_data(base, verdicts))
    assert done.returncode == 1, done.stdout + done.stderr
    # sub/b.py's TDL002 has no verdict: new
    assert [(f["location"], f["code"]) for f in result["new"]] == [("sub/b.py:3:3", "TDL002")]
    assert [(v["location"], v["code"]) for v in result["lost_true"]] == [("gone.py:7:3", "TDL002")]
    assert [(v["location"], v["code"]) for v in result["gone_false"]] == [("old.py:2:5", "TDL003")]
    assert [(v["location"], v["reason"]) for v in result["still_false"]] == [
        ("a.py:4:9", "checkpoint written on the CPU")]
    # the syntax error is a diagnostic, never a finding
    assert [d["code"] for d in result["corpora"][NAME]["diagnostics"]] == ["E999"]
    assert result["rules"]["TDL001"] == {"findings": 3, "reviewed": 3, "true": 3, "false": 0,
                                         "unreviewed": 0, "false_rate": 0.0}
    assert result["rules"]["TDL002"]["unreviewed"] == 1
    assert result["rules"]["TDL003"]["false_rate"] == 100.0
    assert "E999" not in result["rules"]
    assert "RECALL LOSS" in done.stdout and "gone.py:7:3" in done.stdout
    assert "sub/b.py:3:3\tTDL002" in done.stdout
    assert "broken.py:1:12\tE999" in done.stdout

    report_only, _ = run_script(base, write_data(base, verdicts), "--report-only")
    assert report_only.returncode == 0, report_only.stderr


def test_a_true_finding_silenced_by_its_projects_intent_is_no_recall_loss(corpus):
    """Issue 27: a GPU-only project reports no TDL002; a TRUE verdict whose reason starts with
    `gpu-only-project:` is listed apart when its finding is absent, and the gate passes."""
    base, found = corpus
    verdicts = all_true(found) + [
        ("gone.py:7:3", "TDL002", "TRUE", "gpu-only-project: no file checks for CUDA")]
    done, result = run_script(base, write_data(base, verdicts))
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["lost_true"] == [] and "RECALL LOSS" not in done.stdout
    assert [(v["location"], v["code"]) for v in result["by_intent"]] == [("gone.py:7:3", "TDL002")]
    assert "silenced by their project's intent (1)" in done.stdout


def test_a_gpu_only_by_design_finding_is_counted_and_its_absence_is_no_recall_loss(corpus):
    """Issue 28: a TRUE verdict whose reason starts with `gpu-only-by-design:` counts in the
    GPU-only share while reported, and is listed apart (not lost) once a GPU-only program's
    intent silences it; any other TRUE verdict absent is still a recall loss."""
    base, found = corpus
    verdicts = [(loc, code, "TRUE", "gpu-only-by-design: NCCL program") if code == "TDL002"
                else (loc, code, verdict, reason) for loc, code, verdict, reason in all_true(found)]
    verdicts.append(("gone.py:7:3", "TDL002", "TRUE", "gpu-only-by-design: exits without CUDA"))
    done, result = run_script(base, write_data(base, verdicts))
    assert done.returncode == 0, done.stdout + done.stderr
    shares = result["gpu_only"]
    assert shares["TDL002"]["gpu_only_by_design"] == shares["TDL002"]["findings"] > 0
    assert "are TRUE but GPU-only by design" in done.stdout
    assert [(v["location"], v["code"]) for v in result["by_intent"]] == [("gone.py:7:3", "TDL002")]
    lost, result = run_script(base, write_data(base, verdicts[:-1] + [
        ("gone.py:7:3", "TDL002", "TRUE", "hard-coded cuda in a program with a CPU path")]))
    assert [v["location"] for v in result["lost_true"]] == ["gone.py:7:3"]


def test_false_findings_with_evidence_in_another_file_are_counted(corpus):
    """Issue 27: a FALSE verdict whose reason starts with `cross-file:` counts in the share of
    findings whose evidence is in another file of the project; other FALSE verdicts do not."""
    base, found = corpus
    verdicts = all_true(found)
    verdicts[0] = verdicts[0][:2] + ("FALSE", "cross-file: tools/train.py moves it")
    verdicts[1] = verdicts[1][:2] + ("FALSE", "a number, not a tensor")
    done, result = run_script(base, write_data(base, verdicts), "--report-only")
    assert result["cross_file_false"] == 1
    total = sum(rule["findings"] for rule in result["rules"].values())
    assert f"1 of {total} findings" in done.stdout and "issue 27's goal" in done.stdout


def test_passes_when_everything_is_reviewed_true(corpus):
    base, found = corpus
    done, result = run_script(base, write_data(base, all_true(found)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert result["passed"] and not result["new"] and not result["lost_true"]
    assert "PASS" in done.stdout


def test_false_rate_gate(corpus):
    base, found = corpus
    verdicts = all_true(found)
    verdicts[0] = (verdicts[0][0], verdicts[0][1], "FALSE", "not a bug")
    data = write_data(base, verdicts)
    done, result = run_script(base, data)
    assert done.returncode == 1
    assert any("FALSE" in reason for reason in result["failures"]), result["failures"]
    lenient, _ = run_script(base, data, "--max-false-rate", "100")
    assert lenient.returncode == 0, lenient.stdout


def test_missing_corpus_says_how_to_get_it(corpus):
    base, found = corpus
    other = ("demo+missing", "https://github.com/demo/missing", "f" * 40, "-")
    data = write_data(base, all_true(found),
                      corpora=((NAME, REPOSITORY, COMMIT, "demo"), other))
    done, result = run_script(base, data)
    target = base / "corpora" / "demo+missing"
    assert (f"git clone https://github.com/demo/missing {target} && "
            f"git -C {target} checkout {'f' * 40}") in done.stderr
    assert result["corpora"]["demo+missing"]["status"] == "missing"
    assert done.returncode == 1  # an incomplete review does not pass the gate
    only, _ = run_script(base, data, "--only", NAME)
    assert only.returncode == 0, only.stdout + only.stderr


def test_a_checkout_that_is_no_project_fails_the_review_and_says_how_to_mark_it(corpus):
    base, found = corpus
    data = write_data(base, all_true(found))
    checkout = base / "corpora" / NAME
    (checkout / ".git").rmdir()  # files exported with ``git archive``: no clone's .git
    done, result = run_script(base, data)
    assert f"mkdir {checkout / '.git'}" in done.stderr
    assert result["corpora"][NAME]["unmarked"] is True
    assert any("no project" in reason and NAME in reason for reason in result["failures"])
    assert done.returncode == 1
    (checkout / "setup.py").write_text("")  # any of the linter's project markers will do
    marked, result = run_script(base, data)
    assert marked.returncode == 0, marked.stdout + marked.stderr
    assert result["corpora"][NAME]["unmarked"] is False


def test_the_markers_are_the_linters():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import precision
    finally:
        sys.path.remove(str(SCRIPT.parent))
    from torchdevlint.project_index import ROOT_MARKERS
    assert set(precision.PROJECT_MARKERS) == set(ROOT_MARKERS)


def test_bad_verdict_is_reported(corpus):
    base, found = corpus
    verdicts = all_true(found) + [("a.py:1:1", "TDL001", "MAYBE", "unsure")]
    done, result = run_script(base, write_data(base, verdicts))
    assert done.returncode == 1
    assert any("MAYBE" in problem for problem in result["problems"])


def test_bad_header_is_a_data_error(corpus):
    base, found = corpus
    data = write_data(base, all_true(found))
    (data / "corpora.tsv").write_text("name\trepo\n")
    done, _ = run_script(base, data, "--report-only")
    assert done.returncode == 2 and "header" in done.stderr


def test_write_table(corpus):
    base, found = corpus
    verdicts = all_true(found)
    verdicts[-1] = (verdicts[-1][0], verdicts[-1][1], "FALSE", "a | piped reason")
    page = base / "docs" / "precision.md"
    done, _ = run_script(base, write_data(base, verdicts), "--write-table", page, "--report-only")
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert text.startswith("# Precision review")
    assert "generated by" in text.lower() and "do not edit" in text.lower()
    assert f"[{NAME}]({REPOSITORY})" in text and COMMIT[:12] in text and "demo scripts" in text
    assert "| Rule | Findings | Reviewed | True | False | Unreviewed | False % |" in text
    assert "## Per repository" in text
    assert "a \\| piped reason" in text
    assert f"{REPOSITORY}/blob/{COMMIT}/" in text


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_clone_checks_out_the_pinned_commit(corpus, tmp_path):
    base, found = corpus
    origin = tmp_path / "origin"
    shutil.copytree(base / "corpora" / NAME, origin)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(origin)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pinned"], check=True)
    pinned = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    (origin / "later.py").write_text("import torch\ntorch.load('x.pt')\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "later"], check=True)

    shutil.rmtree(base / "corpora" / NAME)
    data = write_data(base, all_true(found), corpora=((NAME, str(origin), pinned, "demo"),))
    done, result = run_script(base, data, "--clone")
    assert done.returncode == 0, done.stdout + done.stderr  # later.py is not in the pinned commit
    assert (base / "corpora" / NAME / ".git").is_dir()
    assert result["corpora"][NAME]["status"] == "ok"


def test_published_review_covers_every_corpus_and_every_default_rule():
    """docs/precision.md is generated from the corpora and the rules as they are: every
    reviewed corpus of benchmarks/precision/corpora.tsv and every rule on by default has its row (it once
    stopped at TDL006), and the README counts the corpora as corpora.tsv does (it said 27)."""
    import re

    sys.path.insert(0, str(ROOT))
    from benchmarks.precision import read_corpora
    from torchdevlint.rules import ALL_RULES
    data = ROOT / "benchmarks" / "precision"
    # the reviewed corpora: those with verdicts (the sealed test set and the tuning
    # repositories not reviewed yet have none)
    corpora = [c for c in read_corpora(data) if (data / "verdicts" / f"{c.name}.tsv").is_file()]
    page = (ROOT / "docs" / "precision.md").read_text(encoding="utf-8")
    corpora_table = page.split("## Corpora", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| \[([^\]]+)\]", corpora_table, re.M)
    assert listed == [c.name for c in corpora]
    per_rule = page.split("## Per rule", 1)[1].split("\n## ", 1)[0]
    for rule in ALL_RULES:
        if rule.default_enabled:
            assert f"| {rule.code} {rule.name} |" in per_rule, f"{rule.code} is not in the review"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"every finding on {len(corpora)} public\s+repositories", readme)
