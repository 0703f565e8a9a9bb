"""Proves on real code that what spares work never loses a finding.

    python benchmarks/prefilter_check.py [DIR ...] [--rules TDL008,TDL011]

- **ast prefilters** (each rule's declared ``required_calls`` and ``could_report_in``): every file whose text passes a rule's
  text prefilter but whose ast the rule's test rejects is linted for that rule with the
  prefilter off; a finding there is a loss.
- **``# noqa`` without tokenizing** (``noqa.group_bounds``): in every file with a ``# noqa``,
  every line that the tokenizer (flake8's grouping) finds silenced must have a ``# noqa``
  within the bound the ast gives it; a line without is an unsound bound.

DIRs default to torch's installed sources. Not a test: it reads thousands of files (torch
alone: a few minutes). Exit status 1 when anything is lost.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from torchdevlint import engine, noqa  # noqa: E402
from torchdevlint.rules.prefilter import has_ast_prefilter, passes_ast_prefilter  # noqa: E402
from torchdevlint.rules.registry import ALL_RULES, rule_classes  # noqa: E402
from torchdevlint.source import SourceError, decode_source  # noqa: E402


def _default_dirs() -> List[Path]:
    try:
        import torch
    except ImportError:
        sys.exit("torch is not installed: name the directories to check")
    return [Path(torch.__file__).parent]


def _sources(dirs: Sequence[Path]):
    for directory in dirs:
        for path in sorted(directory.rglob("*.py")):
            try:
                text = decode_source(path.read_bytes()).text
                tree = ast.parse(text)
            except (OSError, SourceError, SyntaxError, ValueError, RecursionError):
                continue
            yield path, text, tree


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path, help="directories of Python sources")
    parser.add_argument("--rules", help="comma-separated codes (default: every rule with an "
                                        "ast prefilter)")
    args = parser.parse_args(argv)
    dirs = args.dirs or _default_dirs()
    rules = [rule for rule in rule_classes(ALL_RULES) if has_ast_prefilter(rule)]
    if args.rules:
        wanted = set(args.rules.split(","))
        rules = [rule for rule in rules if rule.code in wanted]
    patterns = {rule.code: engine._prefilter([rule])[0] for rule in rules}
    passed = {rule.code: 0 for rule in rules}
    dropped = {rule.code: 0 for rule in rules}
    lost: List[str] = []
    noqa_files = noqa_lines = unsound = 0
    files = 0
    started = time.perf_counter()
    for path, text, tree in _sources(dirs):
        files += 1
        skipped = []
        for rule in rules:
            if not all(pattern.found(text) for pattern in patterns[rule.code]):
                continue
            passed[rule.code] += 1
            if not passes_ast_prefilter(rule, tree, text):
                dropped[rule.code] += 1
                skipped.append(rule)
        if skipped:  # one parse for every rule whose ast test skips the file
            result = engine.lint_source(text, str(path), skipped, prefilter=False)
            for finding in result.findings:
                lost.append(f"{path}:{finding.line}:{finding.column}: {finding.code} "
                            f"(its ast prefilter skips this file)")
        if noqa.may_suppress(text):
            noqa_files += 1
            lines = noqa.split_lines(text)
            exact, bounded = noqa.NoqaIndex(lines), noqa.NoqaIndex(lines, tree)
            for number in range(1, len(lines) + 1):
                noqa_lines += 1
                if exact._codes_on(number) is not None and not bounded._may_hold_noqa(number):
                    unsound += 1
                    lost.append(f"{path}:{number}: silenced by a noqa comment outside "
                                "its ast bound")
    print(f"{files:,} files under {', '.join(map(str, dirs))} "
          f"({time.perf_counter() - started:.0f} s)")
    print(f"  {'rule':<7} {'text passes':>12} {'ast drops':>10}")
    for rule in rules:
        print(f"  {rule.code:<7} {passed[rule.code]:>12,} {dropped[rule.code]:>10,}")
    print(f"  # noqa: {noqa_files:,} files with one, {noqa_lines:,} lines, "
          f"{unsound} outside their bound")
    for line in lost:
        print(f"LOST {line}")
    print("PASS: nothing lost" if not lost else f"FAIL: {len(lost)} lost")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
