"""benchmarks/history.py (recall on real historical bugs) on tiny git repositories the test
makes itself: a commit with the bug, a commit that fixes it, and the cases file naming them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "history.py"
HEADER = "repo\tfix_commit\tpath\tlines\trule\treason\n"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BUGGY = '''import torch


def restore(path):
    state = torch.load(path)
    return state


def to_numpy(t):
    return t.cuda().numpy()
'''
FIXED = '''import torch


def restore(path):
    # the checkpoint was saved on a GPU
    state = torch.load(path, map_location="cpu")
    return state


def to_numpy(t):
    return t.cuda().numpy()
'''


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def make_repo(mirrors: Path, name: str = "demo+alpha") -> str:
    """A repository with two commits; the second fixes the torch.load; the fix's hash."""
    repo = mirrors / name
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "ckpt.py").write_text(BUGGY)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "buggy")
    (repo / "pkg" / "ckpt.py").write_text(FIXED)
    git(repo, "commit", "-qam", "fix: load checkpoints on CPU-only machines")
    return git(repo, "rev-parse", "HEAD")


def run(tmp_path: Path, rows, *extra):
    cases = tmp_path / "cases.tsv"
    cases.write_text(HEADER + "".join("\t".join(row) + "\n" for row in rows))
    report = tmp_path / "report.json"
    if report.exists():
        report.unlink()
    done = subprocess.run([sys.executable, str(SCRIPT), "--mirrors", str(tmp_path / "mirrors"),
                           "--cases", str(cases), "--jobs", "2", "--json", str(report),
                           *extra], capture_output=True, text=True, cwd=tmp_path)
    return done, (json.loads(report.read_text()) if report.exists() else None)


def test_caught_before_and_clean_after(tmp_path):
    fix = make_repo(tmp_path / "mirrors")
    done, result = run(tmp_path, [("demo/alpha", fix, "pkg/ckpt.py", "5", "TDL003",
                                   "GPU checkpoint loaded without map_location")],
                       "--min-recall", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    (case,) = result["cases"]
    assert case["status"] == "ok" and case["caught"] and case["clean_after"]
    assert result["rules"]["TDL003"] == {"cases": 1, "caught": 1, "dirty_after": 0,
                                         "errors": 0, "recall": 1.0}
    assert "TDL003" in done.stdout and "PASS" in done.stdout


def test_missed_and_still_buggy_after_the_fix(tmp_path):
    fix = make_repo(tmp_path / "mirrors")
    rows = [
        # the wrong line: the finding is on line 5, not 3, so the case is missed
        ("demo/alpha", fix, "pkg/ckpt.py", "3", "TDL003", "wrong line"),
        # TDL008 on line 10, which the commit did not fix: caught, and still there after it
        ("demo/alpha", fix, "pkg/ckpt.py", "10", "TDL008", "numpy of a CUDA tensor"),
    ]
    done, result = run(tmp_path, rows)
    assert done.returncode == 1
    missed, unfixed = result["cases"]
    assert not missed["caught"] and missed["rule_fired_before_at"] == ["5"]
    assert unfixed["caught"] and not unfixed["clean_after"]
    assert unfixed["after_hits"][0].startswith("11:")  # line 10 moved to 11 in the fix
    assert "Missed (1)" in done.stdout and "wrong line" in done.stdout
    assert "still have a finding on the fixed lines" in done.stdout
    report_only, _ = run(tmp_path, rows, "--report-only")
    assert report_only.returncode == 0


def test_recall_gate_per_rule_with_five_cases(tmp_path):
    fix = make_repo(tmp_path / "mirrors")
    rows = [("demo/alpha", fix, "pkg/ckpt.py", str(line), "TDL003", "r") for line in (1, 2, 3, 4)]
    rows.append(("demo/alpha", fix, "pkg/ckpt.py", "5", "TDL003", "r"))
    done, result = run(tmp_path, rows, "--min-recall", "0")
    assert done.returncode == 1 and result["rules"]["TDL003"]["recall"] == pytest.approx(0.2)
    assert "TDL003: recall 0.20 < 0.5 (1 of 5)" in done.stdout


def test_missing_mirror_and_revision_are_reported_not_raised(tmp_path):
    fix = make_repo(tmp_path / "mirrors")
    rows = [("demo/absent", fix, "pkg/ckpt.py", "5", "TDL003", "no mirror"),
            ("demo/alpha", fix, "pkg/gone.py", "5", "TDL003", "no such file")]
    done, result = run(tmp_path, rows, "--report-only")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    absent, gone = result["cases"]
    assert absent["status"] == "error" and "no mirror of demo/absent" in absent["detail"]
    assert gone["status"] == "error" and "pkg/gone.py" in gone["detail"]
    assert "Not checked (2)" in done.stdout


def test_bare_mirror_and_bad_cases_file(tmp_path):
    source = tmp_path / "src"
    fix = make_repo(source)
    (tmp_path / "mirrors").mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(source / "demo+alpha"),
                    str(tmp_path / "mirrors" / "demo+alpha.git")], check=True)
    done, result = run(tmp_path, [("demo/alpha", fix, "pkg/ckpt.py", "4-6", "TDL003", "r")])
    assert result["cases"][0]["caught"], done.stdout
    done, result = run(tmp_path, [("demo/alpha", fix, "pkg/ckpt.py", "6-4", "TDL003", "r")])
    assert done.returncode == 2 and result is None
    assert "bad line range" in done.stderr and "Traceback" not in done.stderr


def test_notebook_cells(tmp_path):
    repo = tmp_path / "mirrors" / "demo+nb"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")

    def notebook(line):
        cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# demo"]},
                 {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                  "source": ["import torch\n", "model = torch.nn.Linear(2, 2).cuda()\n",
                             line]}]
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    (repo / "nb.ipynb").write_text(notebook("y = model(torch.ones(2).cuda()).numpy()\n"))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "buggy")
    (repo / "nb.ipynb").write_text(notebook("y = model(torch.ones(2).cuda()).cpu().numpy()\n"))
    git(repo, "commit", "-qam", "fix")
    fix = git(repo, "rev-parse", "HEAD")
    done, result = run(tmp_path, [("demo/nb", fix, "nb.ipynb", "cell 2:3", "TDL008", "r")],
                       "--min-recall", "1")
    (case,) = result["cases"]
    assert case["caught"] and case["clean_after"], done.stdout
    assert done.returncode == 0


def test_the_file_is_linted_inside_its_checkout(tmp_path):
    """The tensor's device comes from another file of the project (the index, issue 27): caught
    in a checkout of the repository at the commit, missed when the file is linted alone; a
    second run reuses the kept checkouts."""
    repo = tmp_path / "mirrors" / "demo+proj"
    (repo / "pkg").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "setup.py").write_text("")
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "convert.py").write_text("def to_numpy(t):\n    return t.numpy()\n")
    (repo / "pkg" / "main.py").write_text(
        "import torch\nfrom pkg.convert import to_numpy\n\n\ndef main():\n"
        "    return to_numpy(torch.zeros(2).cuda())\n")
    (repo / "big.ipynb").write_text("{}")  # not read: a notebook that is no project file here
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "buggy")
    (repo / "pkg" / "convert.py").write_text("def to_numpy(t):\n    return t.cpu().numpy()\n")
    git(repo, "commit", "-qam", "fix: copy to the host")
    fix = git(repo, "rev-parse", "HEAD")
    rows = [("demo/proj", fix, "pkg/convert.py", "2", "TDL008", "numpy of a CUDA tensor")]
    kept = tmp_path / "checkouts"
    done, result = run(tmp_path, rows, "--min-recall", "1", "--checkouts", str(kept))
    (case,) = result["cases"]
    assert case["caught"] and case["clean_after"], done.stdout + done.stderr
    parent = git(repo, "rev-parse", f"{fix}^")
    assert (kept / "demo+proj" / parent / "pkg" / "main.py").is_file()
    assert (kept / "demo+proj" / fix / ".git").is_dir()
    again, result = run(tmp_path, rows, "--min-recall", "1", "--checkouts", str(kept))
    assert again.returncode == 0 and result["cases"][0]["caught"]
    alone, result = run(tmp_path, rows, "--alone", "--report-only")
    assert not result["cases"][0]["caught"] and result["cases"][0]["status"] == "ok"


def test_the_cases_file_is_well_formed_and_keeps_off_the_test_set():
    sys.path.insert(0, str(ROOT))
    from benchmarks.history import DEFAULT_CASES, read_cases
    from benchmarks.precision import read_split

    cases = read_cases(DEFAULT_CASES)  # raises on a malformed row
    assert len(cases) >= 60
    assert len({case.repo for case in cases}) >= 15
    assert all(len(case.commit) == 40 for case in cases)
    # the sealed test repositories are not linted before their review, histories included
    test_set = {name for name, kind in read_split(ROOT / "benchmarks" / "precision").items()
                if kind == "test"}
    assert not {case.folder for case in cases} & test_set
