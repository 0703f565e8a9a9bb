"""Fixing one file: lint, build the fixes, apply those that do not overlap, repeat until
nothing changes. Works on text so that everything outside the edited spans stays byte for
byte; every intermediate result is parsed again (by the next lint), the final one by Python.

It sits above the engine, beside the fix command (``fixer``) and the language server that
call it: it lints with the engine and applies the fixes the engine builds
(``engine.build_fix``). The entry points take plain data and return plain data (a
``FixResult``), so that a parallel runner can call them in worker processes.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, List, Optional, Sequence, Tuple

from torchdevlint import chunks, syntax
from torchdevlint.engine import build_fix, lint_source
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import AppliedFix, BuiltFix, Edit, Fix, FixOptions, FixResult
from torchdevlint.source import SourceError, decode_source

# Each pass applies every fix that does not overlap one applied before it in the same pass;
# the others wait for the next pass. Real files need two or three passes.
MAX_PASSES = 10


def fix_bytes(data: bytes, path: str, rules: Optional[Sequence[type]] = None,
              options: FixOptions = FixOptions()) -> FixResult:
    """Fix one file's contents. Never raises for bad input; the result says what happened."""
    try:
        decoded = decode_source(data)
    except SourceError as exc:
        error = Finding(path, max(exc.line, 1), max(exc.column, 1), READ_ERROR, str(exc))
        return FixResult(path, "", "", error=error)
    return fix_source(decoded.text, path, rules, options, decoded.encoding)


def fix_source(source: str, path: str, rules: Optional[Sequence[type]] = None,
               options: FixOptions = FixOptions(), encoding: str = "utf-8",
               finding_filter: Optional[Callable[[str, List[Finding]], List[Finding]]] = None
               ) -> FixResult:
    """``rules``: None for every rule. ``finding_filter(text, findings)``: the findings of each pass that may be fixed and
    reported (notebooks drop the displayed last expressions of cells)."""
    result = FixResult(path, source, source, encoding)
    text = source
    for number in range(1, MAX_PASSES + 2):
        linted = lint_source(text, path, rules, split_large=False,  # fixes need the whole tree
                             target=options.target, torch_version=options.torch_version,
                             apply_noqa=options.apply_noqa)
        if finding_filter is not None and linted.findings:
            linted.findings = finding_filter(text, linted.findings)
        if linted.error is not None:
            if number == 1:
                result.error = linted.error
                return result
            return _failed(result, "the fixed code does not parse")
        fixes = fixes_for(linted, text, options)
        if fixes and number > MAX_PASSES:
            return _failed(result, f"fixes did not converge after {MAX_PASSES} passes")
        chosen = choose_fixes(fixes)
        new_text = apply_edits(text, [edit for fix in chosen for edit in fix.edits])
        if new_text == text:
            result.findings = [dataclasses.replace(f, fix=None) for f in linted.findings]
            if not options.unsafe and result.findings:
                result.hidden = sum(not fix.safe for fix in fixes_for(
                    linted, text, dataclasses.replace(options, unsafe=True)))
            break
        result.applied.extend(AppliedFix(f.code, f.safe, f.description, f.line, f.column)
                              for f in chosen)
        result.passes = number
        text = new_text
    if text != source:
        # Python's verdict for the target version (this interpreter may be older than it)
        error = chunks.syntax_error(text, options.target or syntax.NEWEST)
        if error is not None:
            return _failed(result, f"the fixed code does not compile ({error[0]}, line {error[1]})")
    result.fixed = text
    return result


def _failed(result: FixResult, why: str) -> FixResult:
    """A bug in a fix: nothing is written, and the user is told."""
    result.fixed = result.original
    result.applied = []
    result.error = Finding(result.path, 1, 1, PARSER_ERROR,
                           f"autofix failed, file left unchanged: {why}; please report it")
    result.internal_error = True
    return result


def fixes_for(linted, text: str, options: FixOptions) -> List[Fix]:
    """The fixes ``options`` allow for the findings of one lint pass, in finding order."""
    if not linted.findings:
        return []
    # (no module: a huge module linted in parts, whose fixes were built part by part, their
    # edits on # noqa lines already left out: engine._lint_in_parts)
    ctx = FixContext(text, linted.module, linted.analysis) if linted.module is not None else None
    fixes = []
    for finding in linted.findings:
        if ctx is None and not isinstance(finding.fix, BuiltFix):
            continue
        fix = build_fix(finding, ctx)
        if fix is None or not options.allows(fix):
            continue
        if ctx is not None and options.apply_noqa \
                and any(ctx.touches_noqa(edit) for edit in fix.edits):
            continue  # (a line with a ``# noqa`` is left alone, unless --ignore-noqa)
        fix.line, fix.column = finding.line, finding.column
        fixes.append(fix)
    return fixes


def _conflict(a: Edit, b: Edit) -> bool:
    if a == b:
        return False  # one shared edit (the module-level device definition)
    if a.is_insertion and b.is_insertion:
        return a.start == b.start and (a.exclusive or b.exclusive)
    if a.is_insertion:
        return b.start < a.start < b.end
    if b.is_insertion:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def choose_fixes(fixes: List[Fix]) -> List[Fix]:
    """The fixes of one pass that can be applied together: each in full or not at all."""
    chosen: List[Fix] = []
    taken: List[Edit] = []
    for fix in fixes:
        if any(_conflict(edit, other) for edit in fix.edits for other in taken):
            continue
        chosen.append(fix)
        taken.extend(fix.edits)
    return chosen


def apply_edits(text: str, edits: List[Edit]) -> str:
    unique: List[Edit] = []
    for edit in edits:
        if edit not in unique:
            unique.append(edit)
    # insertions at an offset go before a replacement starting there; ties keep fix order
    ordered: List[Tuple[int, int, int, Edit]] = sorted(
        (edit.start, edit.end, index, edit) for index, edit in enumerate(unique))
    pieces, position = [], 0
    for start, end, _, edit in ordered:
        pieces.append(text[position:start])
        pieces.append(edit.text)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
