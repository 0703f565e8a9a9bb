"""Run ``--fix --unsafe-fixes`` over a copy of a source tree and check that it is safe to.

    python benchmarks/fix_corpus.py SOURCE_DIR [--sample N] [--work DIR]

SOURCE_DIR is copied (only its *.py files) into a temporary directory (or --work); the
original is never written. Checks, and prints as JSON with the counts:

- every changed file still parses (LibCST) and compiles (Python);
- no file changes unless its original had a fixable finding;
- a second run changes nothing;
- no file gets an internal error.

``check_tree`` is also what tests/test_fix_corpus.py runs on a sample of the installed torch.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from torchdevlint.engine import lint_source  # noqa: E402
from torchdevlint.fixer import fix_file  # noqa: E402
from torchdevlint.fixes import FixOptions  # noqa: E402
from torchdevlint.fixes.applier import fixes_for  # noqa: E402
from torchdevlint.rules import ALL_RULES  # noqa: E402
from torchdevlint.source import SourceError, decode_source  # noqa: E402

OPTIONS = FixOptions(unsafe=True)


def copy_tree(files: List[Path], source_root: Path, work: Path) -> List[Path]:
    copies = []
    for path in files:
        target = work / path.relative_to(source_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        copies.append(target)
    return copies


def _has_fixable_finding(data: bytes, path: str) -> bool:
    try:
        text = decode_source(data).text
    except SourceError:
        return False
    linted = lint_source(text, path, ALL_RULES)
    return bool(fixes_for(linted, text, OPTIONS))


def check_tree(files: List[Path]) -> Dict:
    """Fix ``files`` in place twice; returns the counts and the problems found."""
    originals = {path: path.read_bytes() for path in files}
    report: Dict = {"files": len(files), "changed": 0, "fixes": Counter(), "errors": Counter(),
                    "parse_failures": [], "compile_failures": [], "changed_without_fixable": [],
                    "second_run_changes": [], "internal_errors": []}
    started = time.perf_counter()
    for path in files:
        outcome = fix_file(path, ALL_RULES, OPTIONS, write=True)
        for error in outcome.errors:
            report["errors"][error.code] += 1
        if outcome.result.internal_error:
            report["internal_errors"].append(f"{path}: {outcome.result.error.message}")
        after = path.read_bytes()
        if after == originals[path]:
            continue
        report["changed"] += 1
        for fix in outcome.result.applied:
            report["fixes"][fix.code] += 1
        text = after.decode(outcome.result.encoding)
        try:
            cst.parse_module(text)
        except Exception as exc:
            report["parse_failures"].append(f"{path}: {type(exc).__name__}")
        try:
            compile(after, str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            report["compile_failures"].append(f"{path}: {exc}")
        if not _has_fixable_finding(originals[path], str(path)):
            report["changed_without_fixable"].append(str(path))
    report["first_run_seconds"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    for path in files:
        before = path.read_bytes()
        fix_file(path, ALL_RULES, OPTIONS, write=True)
        if path.read_bytes() != before:
            report["second_run_changes"].append(str(path))
    report["second_run_seconds"] = round(time.perf_counter() - started, 1)
    report["fixes"] = dict(sorted(report["fixes"].items()))
    report["errors"] = dict(sorted(report["errors"].items()))
    return report


def problems(report: Dict) -> List[str]:
    return [f"{key}: {value}" for key in ("parse_failures", "compile_failures",
                                          "changed_without_fixable", "second_run_changes",
                                          "internal_errors") for value in report[key]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--sample", type=int, default=0, help="only every n-th file")
    parser.add_argument("--work", type=Path, help="where to copy the tree (default: a temp dir)")
    args = parser.parse_args(argv)
    files = sorted(p for p in args.source.rglob("*.py") if p.is_file())
    if args.sample > 1:
        files = files[:: args.sample]
    work = args.work or Path(tempfile.mkdtemp(prefix="tdl-fix-corpus-"))
    copies = copy_tree(files, args.source, work)
    report = check_tree(copies)
    report["work"] = str(work)
    shown = {k: (len(v) if isinstance(v, list) else v) for k, v in report.items()}
    print(json.dumps(shown, indent=2))
    for problem in problems(report)[:50]:
        print(problem)
    return 1 if problems(report) else 0


if __name__ == "__main__":
    sys.exit(main())
