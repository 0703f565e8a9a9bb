"""Check the GPU-only-by-design labels of the TDL002 verdicts against the objective criterion
of issue 28 (README.md, "Verdict criteria"), so that the labels are reproducible.

A TRUE TDL002 finding is ``gpu-only-by-design:`` only when the program it belongs to has no
CPU path:

(a) it runs only on a GPU for a reason other than the hard-coded device (an NCCL or
    distributed-only program, a CUDA extension's op or kernel wrapper, a GPU-marked test, a
    file whose top level imports a CUDA-only package): judged by hand, the reason then starts
    ``gpu-only-by-design: (a)``; or
(b) neither the finding's file nor a project file that it imports checks for an accelerator,
    chooses the CPU as a device or has a device option (computed here, from the checkout,
    by ``torchdevlint.project_index.program_cpu_path``, the question TDL002 asks itself), AND
    the repository's README states a GPU requirement (``gpu_requirements.tsv``: the quoted
    sentence, judged by hand). The reason then starts ``gpu-only-by-design: (b)``.

Anything else is a plain TRUE portability bug. This script prints, per TDL002 verdict of the
chosen corpora, what the criterion says where the label disagrees, and exits 1 if any does
(``--report-only``: 0). It never reads a corpus of the sealed test set.

    python benchmarks/precision/gpu_only.py --corpora /work/ext/precision-corpora
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.precision import (  # noqa: E402
    DataError, _rows, read_corpora, read_verdicts, select_set,
)

GPU_ONLY = "gpu-only-by-design:"
BY_HAND = GPU_ONLY + " (a)"
BY_CODE = GPU_ONLY + " (b)"
REQUIREMENTS = "gpu_requirements.tsv"
REQUIREMENTS_HEADER = ["name", "source", "sentence"]


@dataclass(frozen=True)
class Check:
    corpus: str
    location: str
    label: str  # "plain" (TRUE), "(a)", "(b)", "gpu-only" (no letter), "project", "FALSE"
    cpu_path: Optional[str]  # where the program has a CPU path (None: nowhere)
    stated: Optional[str]  # the README's sentence (None: it states no GPU requirement)
    source: str

    @property
    def by_code(self) -> bool:
        """Part (b) of the criterion holds."""
        return self.cpu_path is None and self.stated is not None

    @property
    def problem(self) -> Optional[str]:
        if self.label in ("FALSE", "project", "(a)"):
            return None
        if self.label == "plain" and self.by_code:
            return "is GPU-only by design, (b): " + self.evidence
        if self.label in ("(b)", "gpu-only") and not self.by_code:
            return "is not GPU-only by design (b): " + self.evidence
        if self.label == "gpu-only":
            return "holds (b): start its reason with `gpu-only-by-design: (b)`"
        return None

    @property
    def evidence(self) -> str:
        code = (f"the program has a CPU path in {self.cpu_path}" if self.cpu_path is not None
                else "no file of the program checks for an accelerator or chooses the CPU")
        readme = (f"the README says \"{self.stated}\"" if self.stated is not None
                  else "the README states no GPU requirement")
        return f"{code}; {readme}"


def read_requirements(data_dir: Path) -> Dict[Tuple[str, str], str]:
    """(repository, "") -> the README sentence that states a GPU requirement; (repository,
    notebook path) -> what a notebook says for itself (its Colab runtime and markdown: the
    docs of that one program). ``-``: it states none."""
    found: Dict[Tuple[str, str], str] = {}
    for _, (name, source, sentence) in _rows(data_dir / REQUIREMENTS, REQUIREMENTS_HEADER):
        if sentence and sentence != "-":
            found[(name, source if source.endswith(".ipynb") else "")] = sentence
    return found


def label_of(true: bool, reason: str) -> str:
    if not true:
        return "FALSE"
    if reason.startswith("gpu-only-project:"):
        return "project"
    if reason.startswith(BY_HAND):
        return "(a)"
    if reason.startswith(BY_CODE):
        return "(b)"
    if reason.startswith(GPU_ONLY):
        return "gpu-only"
    return "plain"


def check(corpora_dir: Path, data_dir: Path, chosen: str = "tuning",
          only: Sequence[str] = ()) -> List[Check]:
    from torchdevlint import project_index
    project_index.configure(use_cache=False)  # (no index cache written into a checkout)
    stated = read_requirements(data_dir)
    checks: List[Check] = []
    for corpus in select_set(read_corpora(data_dir), data_dir, chosen):
        if only and corpus.name not in only:
            continue
        verdicts, problems = read_verdicts(data_dir / "verdicts" / f"{corpus.name}.tsv")
        if problems:
            raise DataError("; ".join(problems))
        checkout = corpora_dir / corpus.name
        for (location, code), verdict in sorted(verdicts.items()):
            if code != "TDL002":
                continue
            path = checkout / location.split(":")[0]
            cpu_path = project_index.program_cpu_path(str(path)) if path.is_file() \
                else location.split(":")[0] + " (not in the checkout)"
            said = stated.get((corpus.name, location.split(":")[0]), stated.get((corpus.name, "")))
            checks.append(Check(corpus.name, location, label_of(verdict.true, verdict.reason),
                                cpu_path, said, verdict.source))
    return checks


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, required=True,
                        help="folder holding one checkout per corpus (as precision.py)")
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parent,
                        help="folder with corpora.tsv, split.tsv, verdicts/ and "
                             f"{REQUIREMENTS}")
    parser.add_argument("--set", choices=("tuning",), default="tuning",
                        help="the corpora checked (the sealed test set never is)")
    parser.add_argument("--only", nargs="+", default=(), metavar="NAME")
    parser.add_argument("--report-only", action="store_true", help="exit 0 whatever it finds")
    args = parser.parse_args(argv)
    try:
        checks = check(args.corpora, args.data_dir, args.set, args.only)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    true = [c for c in checks if c.label not in ("FALSE",)]
    counts = {label: sum(c.label == label for c in checks)
              for label in ("plain", "(a)", "(b)", "gpu-only", "project", "FALSE")}
    listed = ", ".join(f"{n} {label}" for label, n in counts.items())
    print(f"{len(checks)} TDL002 verdicts: {listed}")
    print(f"  part (b) holds for {sum(c.by_code for c in true)} of the {len(true)} TRUE ones")
    wrong = [c for c in checks if c.problem is not None]
    print(f"labels that disagree with the criterion: {len(wrong)}")
    for c in wrong:
        print(f"  {c.corpus}: {c.location} ({c.label}, {c.source}) {c.problem}")
    return 0 if args.report_only or not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
