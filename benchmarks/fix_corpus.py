"""Run ``--fix --unsafe-fixes`` over a copy of a source tree and check that it is safe to.

    python benchmarks/fix_corpus.py SOURCE_DIR [--sample N] [--work DIR]

SOURCE_DIR is copied (only its *.py files) into a temporary directory (or --work); the
original is never written. Checks, and prints as JSON with the counts:

- every changed file still parses (LibCST) and compiles (Python);
- no file changes unless its original had a fixable finding;
- a second run changes nothing;
- no file gets an internal error;
- no statement a fix rewrote still throws a move's result away (a module's ``.to()`` works
  in place and is fine);
- every message that proposes code (``assign it (`x = x.to(d)`)``, ``move it first (...)``,
  ``use `"cuda" if ...` ``) proposes what its fix writes, pass by pass.

``check_tree`` is also what tests/test_fix_corpus.py runs on a sample of the installed torch.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
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
from torchdevlint.analysis import Analysis  # noqa: E402
from torchdevlint.applier import MAX_PASSES, apply_edits, choose_fixes, fixes_for  # noqa: E402
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


# Code a message proposes: "assign it (`x = x.to(d)`)", "move it first (`x = x.to(d)`)",
# "use `"cuda" if torch.cuda.is_available() else "cpu"`".
_PROPOSAL = re.compile(r"\(`([^`]+ = [^`]+)`\)|use `(\S*cuda\S* if [^`]+)`")
_MOVES = ("to", "cuda", "cpu")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _proposal(message: str):
    match = _PROPOSAL.search(message)
    if match is None:
        return None
    code = _flat(match.group(1) or match.group(2))
    return code[:-3] if code.endswith("...") else code  # messages shorten long calls


def _discarded_moves(text: str) -> List[str]:
    """The text of every expression statement that is a ``.to()``/``.cuda()``/``.cpu()``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [_flat(ast.get_source_segment(text, node) or "") for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _MOVES]


def _discarding_statements(text: str, wanted: set) -> List[str]:
    """Of the move statements in ``wanted``, those whose receiver is not known to be a
    module (a module moves in place; a tensor's copy is lost)."""
    analysis = Analysis(cst.parse_module(text))
    printer = cst.Module([])
    found = []
    for method in _MOVES:
        for site in analysis.collected.calls_by_name.get(method, ()):
            if site.statement is None or not isinstance(site.call.func, cst.Attribute):
                continue
            code = _flat(printer.code_for_node(site.call))
            if code in wanted and not analysis.kinds.is_module(
                    analysis.kind_at(site.call.func.value, site)):
                found.append(code)
    return found


def check_agreement(text: str, path: str) -> List[str]:
    """Replays ``--fix --unsafe-fixes`` pass by pass on ``text``: every message proposing code
    must see that code in the pass's output, and no statement a pass rewrote may discard a
    tensor move."""
    found = []
    for _ in range(MAX_PASSES):
        linted = lint_source(text, path, ALL_RULES, split_large=False)
        if linted.error is not None:
            break
        chosen = choose_fixes(fixes_for(linted, text, OPTIONS))
        if not chosen:
            break
        new_text = apply_edits(text, [edit for fix in chosen for edit in fix.edits])
        messages = {(f.code, f.line, f.column): f.message for f in linted.findings}
        flat_new = _flat(new_text)
        for fix in chosen:
            proposal = _proposal(messages.get((fix.code, fix.line, fix.column), ""))
            if proposal is not None and proposal not in flat_new:
                found.append(f"{path}:{fix.line}:{fix.column}: {fix.code} proposes "
                             f"`{proposal}`, the fix writes something else")
        rewritten = set(_discarded_moves(new_text)) - set(_discarded_moves(text))
        if rewritten:
            for code in _discarding_statements(new_text, rewritten):
                found.append(f"{path}: a fix left `{code}` discarding its result")
        text = new_text
    return found


def check_tree(files: List[Path]) -> Dict:
    """Fix ``files`` in place twice; returns the counts and the problems found."""
    originals = {path: path.read_bytes() for path in files}
    report: Dict = {"files": len(files), "changed": 0, "fixes": Counter(), "errors": Counter(),
                    "parse_failures": [], "compile_failures": [], "changed_without_fixable": [],
                    "second_run_changes": [], "internal_errors": [], "disagreements": []}
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
        report["disagreements"] += check_agreement(
            originals[path].decode(outcome.result.encoding), str(path))
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
                                          "internal_errors", "disagreements")
            for value in report[key]]


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
