"""benchmarks/precision/gpu_only.py (issue 28's GPU-only-by-design criterion for TDL002
verdicts) on a tiny fake corpus: the code part (b) is computed from the checkout, the README
part read from gpu_requirements.tsv, and every label that disagrees is listed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "precision" / "gpu_only.py"
NAME = "demo+alpha"
SEALED = "demo+sealed"


def make(tmp_path: Path, verdicts, requirement: str = "-"):
    checkout = tmp_path / "corpora" / NAME
    checkout.mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("")
    (checkout / "models.py").write_text("import torch\n\nclass Net(torch.nn.Module):\n    pass\n")
    (checkout / "common.py").write_text(
        'import torch\n\nDEVICE = "cuda" if torch.cuda.is_available() else "cpu"\n')
    (checkout / "sample.py").write_text("from models import Net\n\nmodel = Net().cuda()\n")
    (checkout / "evaluate.py").write_text(
        "from common import DEVICE\nfrom models import Net\n\nmodel = Net().cuda()\n")
    data = tmp_path / "data"
    (data / "verdicts").mkdir(parents=True)
    (data / "corpora.tsv").write_text(
        "name\trepository\tcommit\tkind\n"
        f"{NAME}\thttps://github.com/demo/alpha\t{'0' * 40}\tscripts\n"
        f"{SEALED}\thttps://github.com/demo/sealed\t{'1' * 40}\tscripts\n")
    (data / "split.tsv").write_text(f"name\tset\n{NAME}\ttuning\n{SEALED}\ttest\n")
    (data / "gpu_requirements.tsv").write_text(
        f"name\tsource\tsentence\n{NAME}\tREADME.md\t{requirement}\n")
    (data / "verdicts" / f"{NAME}.tsv").write_text(
        "location\tcode\tverdict\treason\n" + "".join("\t".join(row) + "\n" for row in verdicts))
    return data


def run(tmp_path: Path, data: Path, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), "--corpora", str(tmp_path / "corpora"),
                           "--data-dir", str(data), *extra],
                          capture_output=True, text=True, cwd=tmp_path)


def test_labels_that_disagree_with_the_criterion_are_listed_both_ways(tmp_path):
    """sample.py (and models.py, which it imports) has no CPU path; evaluate.py imports
    common.py, which checks for CUDA. With a README that states a GPU requirement sample.py's
    finding is GPU-only by design (b) and evaluate.py's a plain TRUE portability bug."""
    data = make(tmp_path, [("sample.py:3:15", "TDL002", "TRUE", "unguarded .cuda()"),
                           ("evaluate.py:4:15", "TDL002", "TRUE",
                            "gpu-only-by-design: a script moving its model"),
                           ("models.py:1:1", "TDL003", "TRUE", "another rule: not checked")],
                requirement="Sampling runs on a GPU with at least 8 GB of memory.")
    done = run(tmp_path, data)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "labels that disagree with the criterion: 2" in done.stdout
    assert "sample.py:3:15 (plain, " in done.stdout and "is GPU-only by design, (b)" in done.stdout
    assert "evaluate.py:4:15 (gpu-only, " in done.stdout and \
        "the program has a CPU path in common.py" in done.stdout
    assert SEALED not in done.stdout  # (the sealed test set is never read)
    assert run(tmp_path, data, "--report-only").returncode == 0


def test_consistent_labels_pass_and_a_readme_without_a_requirement_makes_them_plain(tmp_path):
    data = make(tmp_path, [("sample.py:3:15", "TDL002", "TRUE",
                            "gpu-only-by-design: (b) no CPU path, the README needs a GPU"),
                           ("evaluate.py:4:15", "TDL002", "TRUE", "unguarded .cuda()")],
                requirement="Sampling runs on a GPU with at least 8 GB of memory.")
    done = run(tmp_path, data)
    assert done.returncode == 0 and "labels that disagree with the criterion: 0" in done.stdout, \
        done.stdout + done.stderr
    (data / "gpu_requirements.tsv").write_text(f"name\tsource\tsentence\n{NAME}\t-\t-\n")
    done = run(tmp_path, data)
    assert done.returncode == 1 and "the README states no GPU requirement" in done.stdout
    # (a), judged by hand (an NCCL program, a CUDA extension's op, ...), is kept as written
    rows = (data / "verdicts" / f"{NAME}.tsv").read_text().replace(
        "gpu-only-by-design: (b)", "gpu-only-by-design: (a) a CUDA extension's op;")
    (data / "verdicts" / f"{NAME}.tsv").write_text(rows)
    assert run(tmp_path, data).returncode == 0


def test_a_malformed_requirements_file_is_one_clear_error(tmp_path):
    data = make(tmp_path, [])
    (data / "gpu_requirements.tsv").write_text("repo\tsentence\n")
    done = run(tmp_path, data)
    assert done.returncode == 2 and "gpu_requirements.tsv:1: the header must be" in done.stderr
    assert "Traceback" not in done.stderr
