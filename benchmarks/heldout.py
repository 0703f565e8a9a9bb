#!/usr/bin/env python3
"""Recall on held-out bug cases: small programs written from public bug reports.

Each case (``heldout/cases.tsv``) is a folder under ``heldout/`` with the buggy program as the
report shows it (minimised, keeping its helpers, classes and loops) and its correct twin. The
rules were never tuned on these files (they are not fixtures). The script lints every buggy
program and every twin with the torchdevlint importable by the running interpreter, in one
run of the CLI (``--isolated --no-cache --output-format json --select TDL``: the rules on by
default, as a user runs them; the opt-in TDL009 in a second run over its own cases only), and
checks that

- the buggy program has a finding of the case's rule on one of its bug lines (caught);
- the twin has no finding at all (each is counted and listed; the goal is none).

It prints the recall per rule (caught among the cases), the findings on the twins, every case
and those missed. ``--validate`` also runs each case to show that it is a real bug: the buggy
program must fail with the error the report names and the twin must run (see ``RUN_MODES``);
``--write-validated`` stores the outcome in the ``validated`` column of the cases file.

Exit status: 0 when the overall recall is at least ``--min-recall`` (0.85), each of TDL005 to
TDL011 with at least five cases reaches ``--min-rule-recall`` (0.7), no twin has a finding and
(with ``--validate``) every runnable case behaved as recorded; 1 otherwise; 2 for a malformed
cases file or when torchdevlint cannot be run. ``--report-only`` exits 0 after a run.

Standard library only (``--validate`` needs torch)::

    python benchmarks/heldout.py [--only RULE_OR_ID ...] [--validate [--write-validated]]
                                 [--jobs N] [--json FILE] [--report-only]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.history import parse_lines  # noqa: E402
from benchmarks.precision import (  # noqa: E402
    DIAGNOSTIC_CODES, DataError, _linter_env, _rows, _table, display, find_linter, finish,
    script_main,
)

DATA = Path(__file__).resolve().parent / "heldout"
DEFAULT_CASES = DATA / "cases.tsv"
CASES_HEADER = ["id", "rule", "buggy", "lines", "twin", "run", "error", "validated", "source",
                "description"]
RULE = re.compile(r"TDL[0-9]{3}")
OPT_IN = "TDL009"  # off by default: linted with --select TDL009 on its own cases only
GATED_RULES = tuple(f"TDL{n:03d}" for n in range(5, 12))  # acceptance: each >= 0.7
# How a case is shown to be a real bug (``--validate``), on a machine without a GPU:
RUN_MODES = {
    # buggy fails under the pretend accelerator with ``error``; the twin runs there
    "fake": "python -m torchdevlint.runtime buggy.py",
    # buggy fails with ``error`` as a plain CPU-only run (hard-coded CUDA, no accelerator); the
    # twin runs
    "plain": "python buggy.py on a CPU-only machine",
    # setup.py writes the checkpoint on the pretend GPU; buggy then fails loading it as a
    # plain CPU-only run; the twin loads it
    "load": "setup.py on the pretend GPU, then python buggy.py on a CPU-only machine",
    # the pretend accelerator counts no memory: the buggy program prints the accumulated value,
    # which still holds its autograd graph (``grad_fn=`` in its output); the twin's does not
    "graph": "python -m torchdevlint.runtime buggy.py prints a value with grad_fn=",
    # no error to reproduce (performance advice): both programs must run
    "runs": "both run under python -m torchdevlint.runtime",
    # cannot be run this way; ``error`` says why
    "none": "not run",
}


@dataclass(frozen=True)
class Case:
    id: str
    rule: str
    buggy: str  # relative to the cases file's folder
    lines: Tuple[int, ...]
    twin: str
    run: str
    error: str
    validated: str
    source: str
    description: str
    where: str  # cases.tsv:line


def read_cases(path: Path) -> List[Case]:
    """The cases, checked: files present, lines inside the buggy file, a URL, a known mode."""
    base = path.parent
    cases: List[Case] = []
    seen: Dict[str, str] = {}
    for number, row in _rows(path, CASES_HEADER):
        cid, rule, buggy, lines, twin, run, error, validated, source, description = row
        where = f"{display(path)}:{number}"
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", cid):
            raise DataError(f"{where}: id {cid!r} is not lower-case letters, digits, . _ -")
        if cid in seen:
            raise DataError(f"{where}: id {cid} is also at {seen[cid]}")
        seen[cid] = where
        if not RULE.fullmatch(rule):
            raise DataError(f"{where}: rule {rule!r} is not a TDL code")
        for label, name in (("buggy", buggy), ("twin", twin)):
            if not name or name.startswith("/") or ".." in name.split("/"):
                raise DataError(f"{where}: bad {label} path {name!r}")
            if not (base / name).is_file():
                raise DataError(f"{where}: the {label} file {name} does not exist")
        if buggy == twin:
            raise DataError(f"{where}: the twin is the buggy file itself")
        try:
            places = parse_lines(lines)
        except ValueError as exc:
            raise DataError(f"{where}: {exc}") from exc
        if any(cell is not None for cell, _line in places):
            raise DataError(f"{where}: cases are .py files; no cells in {lines!r}")
        numbers = tuple(line for _cell, line in places)
        text = (base / buggy).read_text(encoding="utf-8").splitlines()
        outside = [n for n in numbers if n > len(text) or not text[n - 1].strip()]
        if outside:
            raise DataError(f"{where}: line(s) {outside} of {buggy} are past its end or blank")
        if (base / buggy).read_bytes() == (base / twin).read_bytes():
            raise DataError(f"{where}: the twin is the same program as the buggy one")
        if run not in RUN_MODES:
            raise DataError(f"{where}: run {run!r} is none of {', '.join(RUN_MODES)}")
        if run == "load" and not (base / buggy).with_name("setup.py").is_file():
            raise DataError(f"{where}: run 'load' needs setup.py beside {buggy}")
        if not error:
            raise DataError(f"{where}: the error column is empty (use - when none is expected)")
        if not re.fullmatch(r"https?://\S+", source):
            raise DataError(f"{where}: source {source!r} is not a URL")
        if not description:
            raise DataError(f"{where}: the description is empty")
        cases.append(Case(cid, rule, buggy, numbers, twin, run, error, validated or "-",
                          source, description, where))
    if not cases:
        raise DataError(f"{display(path)}: no cases")
    return cases


# --- linting --------------------------------------------------------------------------------

def lint_all(command: List[str], base: Path, files: Sequence[str], select: str,
             timeout: float) -> Dict[str, List[dict]]:
    """The findings of one CLI run over ``files`` (relative to ``base``), by file."""
    argv = [*command, "--isolated", "--no-cache", "--output-format", "json",
            "--select", select, *files]
    try:
        done = subprocess.run(argv, cwd=base, capture_output=True, text=True, encoding="utf-8",
                              env=_linter_env(), timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise DataError(f"torchdevlint ran past {timeout:.0f}s") from exc
    except OSError as exc:
        raise DataError(f"cannot run torchdevlint: {exc}") from exc
    try:
        records = json.loads(done.stdout)
        if not isinstance(records, list):
            raise ValueError
    except ValueError as exc:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise DataError(f"torchdevlint exited {done.returncode} without a JSON report: "
                        f"{tail}") from exc
    by_file: Dict[str, List[dict]] = defaultdict(list)
    for record in records:
        path = Path(str(record["path"]))
        if path.is_absolute():
            try:
                path = path.relative_to(base)
            except ValueError:
                pass
        by_file[path.as_posix()].append(record)
    return by_file


@dataclass
class Outcome:
    case: Case
    caught: bool = False
    rule_lines: List[int] = field(default_factory=list)  # where the rule fired in buggy
    other_on_bug_lines: List[str] = field(default_factory=list)
    twin_findings: List[str] = field(default_factory=list)
    diagnostics: List[str] = field(default_factory=list)
    validation: str = ""  # with --validate: the outcome of running the case


def judge(case: Case, findings: Dict[str, List[dict]]) -> Outcome:
    outcome = Outcome(case)
    for side in (case.buggy, case.twin):
        outcome.diagnostics += [f"{side}: {r['code']} {r.get('message', '')}".strip()
                                for r in findings.get(side, [])
                                if r["code"] in DIAGNOSTIC_CODES]
    buggy = [r for r in findings.get(case.buggy, []) if r["code"] not in DIAGNOSTIC_CODES]
    outcome.rule_lines = sorted(int(r["line"]) for r in buggy if r["code"] == case.rule)
    outcome.caught = any(line in case.lines for line in outcome.rule_lines)
    outcome.other_on_bug_lines = [f"{r['code']}:{r['line']}" for r in buggy
                                  if r["code"] != case.rule and int(r["line"]) in case.lines]
    outcome.twin_findings = [f"{r['code']} {case.twin}:{r['line']}: {r.get('message', '')}"
                             for r in findings.get(case.twin, [])
                             if r["code"] not in DIAGNOSTIC_CODES]
    return outcome


# --- running the cases ----------------------------------------------------------------------

def _run(argv: List[str], cwd: Path, timeout: float) -> Tuple[int, str, str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", CUDA_VISIBLE_DEVICES="")
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", f"ran past {timeout:.0f}s"
    return done.returncode, done.stdout, done.stderr


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:160] if lines else "(no output)"


def validate(case: Case, base: Path, timeout: float) -> str:
    """Run the case as ``case.run`` says: ``yes: ...``, ``NO: ...`` or ``n/a: ...``."""
    if case.run == "none":
        return f"n/a: {case.error}"
    fake = [sys.executable, "-m", "torchdevlint.runtime"]
    plain = [sys.executable]
    folder = (base / case.buggy).parent
    with tempfile.TemporaryDirectory(prefix="tdl-heldout-") as tmp:
        def fresh(name: str) -> Path:  # each program in its own copy of the case's folder
            where = Path(tmp, name)
            shutil.copytree(folder, where)
            return where

        buggy, twin = Path(case.buggy).name, Path(case.twin).name
        if case.run == "load":
            b_dir, t_dir = fresh("b"), fresh("t")
            for where in (b_dir, t_dir):
                rc, out, err = _run([*fake, "setup.py"], where, timeout)
                if rc != 0:
                    return f"NO: setup.py failed: {_last_line(err)}"
            b_cmd, t_cmd = plain, plain
        else:
            b_dir, t_dir = fresh("b"), fresh("t")
            b_cmd = t_cmd = plain if case.run == "plain" else fake
        b_rc, b_out, b_err = _run([*b_cmd, buggy], b_dir, timeout)
        t_rc, t_out, t_err = _run([*t_cmd, twin], t_dir, timeout)
    if case.run == "graph":
        if b_rc != 0:
            return f"NO: buggy failed: {_last_line(b_err)}"
        if case.error not in b_out:
            return f"NO: buggy printed no {case.error!r}"
        if t_rc != 0:
            return f"NO: twin failed: {_last_line(t_err)}"
        if case.error in t_out:
            return f"NO: twin printed {case.error!r} too"
        return "yes: the accumulated value keeps its graph (grad_fn); the twin's does not"
    if case.run == "runs":
        if b_rc != 0 or t_rc != 0:
            failed = "buggy" if b_rc != 0 else "twin"
            return f"NO: {failed} failed: {_last_line(b_err if b_rc else t_err)}"
        return "yes: both run (no error expected)"
    if b_rc == 0:
        return "NO: buggy ran without error"
    if case.error not in b_err:
        return f"NO: buggy failed otherwise: {_last_line(b_err)}"
    if t_rc != 0:
        return f"NO: twin failed: {_last_line(t_err)}"
    return f"yes: buggy fails with {case.error!r}; twin runs"


def write_validated(path: Path, results: Dict[str, str]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    column = CASES_HEADER.index("validated")
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split("\t")
        if len(cells) == len(CASES_HEADER) and cells[0] in results:
            cells[column] = results[cells[0]].replace("\t", " ")
        out.append("\t".join(cells))
    tmp = path.with_suffix(".tsv.tmp")
    tmp.write_text("\n".join(out) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --- report ---------------------------------------------------------------------------------

def summarize(outcomes: List[Outcome]) -> Dict[str, Dict[str, int]]:
    rules: Dict[str, Dict[str, int]] = defaultdict(
        lambda: {"cases": 0, "caught": 0, "twin_findings": 0, "twins_with_findings": 0})
    for o in outcomes:
        row = rules[o.case.rule]
        row["cases"] += 1
        row["caught"] += o.caught
        row["twin_findings"] += len(o.twin_findings)
        row["twins_with_findings"] += bool(o.twin_findings)
    return dict(sorted(rules.items()))


def recall(row: Dict[str, int]) -> Optional[float]:
    return row["caught"] / row["cases"] if row["cases"] else None


def totals(rules: Dict[str, Dict[str, int]]) -> Dict[str, int]:
    keys = ("cases", "caught", "twin_findings", "twins_with_findings")
    return {k: sum(r[k] for r in rules.values()) for k in keys}


def gate(outcomes: List[Outcome], min_recall: float, min_rule_recall: float,
         validated: bool) -> List[str]:
    reasons = []
    rules = summarize(outcomes)
    overall = recall(totals(rules))
    if overall is not None and overall < min_recall:
        reasons.append(f"overall recall {overall:.2f} < {min_recall:g}")
    for code, row in rules.items():
        rate = recall(row)
        if code in GATED_RULES and row["cases"] >= 5 and rate is not None \
                and rate < min_rule_recall:
            reasons.append(f"{code}: recall {rate:.2f} < {min_rule_recall:g} "
                           f"({row['caught']} of {row['cases']})")
    twins = sum(len(o.twin_findings) for o in outcomes)
    if twins:
        reasons.append(f"{twins} finding(s) on the correct twins")
    if validated:
        bad = [o.case.id for o in outcomes if o.validation.startswith("NO")]
        if bad:
            reasons.append(f"{len(bad)} case(s) did not behave as recorded: {', '.join(bad)}")
    return reasons


def print_report(outcomes: List[Outcome], version: str, validated: bool,
                 out=sys.stdout) -> None:
    def say(text: str = "") -> None:
        print(text, file=out)

    rules = summarize(outcomes)
    say(f"Held-out bug cases: {version}, {len(outcomes)} cases, "
        f"{len({o.case.source for o in outcomes})} sources")
    say()
    rows = []
    for code, row in list(rules.items()) + [("all", totals(rules))]:
        rate = recall(row)
        rows.append((code, row["cases"], row["caught"], "-" if rate is None else f"{rate:.2f}",
                     row["twin_findings"], row["twins_with_findings"]))
    for line in _table(("rule", "cases", "caught", "recall", "twin findings",
                        "twins with findings"), rows, 1):
        say("  " + line)
    if validated:
        say()
        counts: Dict[str, int] = defaultdict(int)
        for o in outcomes:
            counts[o.validation.split(":", 1)[0]] += 1
        say("Runtime validation: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            + " (yes: the buggy program fails as the report says and the twin runs)")
    say()
    say("Cases")
    rows = []
    for o in outcomes:
        rows.append((o.case.rule, "caught" if o.caught else "MISSED",
                     f"{o.case.buggy}:{','.join(map(str, o.case.lines))}",
                     o.validation or o.case.validated))
    for line in _table(("rule", "result", "bug lines", "validated"), rows, 99):
        say("  " + line)
    missed = [o for o in outcomes if not o.caught]
    say()
    say(f"Missed ({len(missed)})")
    for o in missed:
        fired = ", ".join(map(str, o.rule_lines)) or "nowhere"
        other = f" [other rules on the bug lines: {', '.join(o.other_on_bug_lines)}]" \
            if o.other_on_bug_lines else ""
        say(f"  {o.case.rule} {o.case.id}: {o.case.description}  [the rule fired at: "
            f"{fired}]{other}" + (f" [{'; '.join(o.diagnostics)}]" if o.diagnostics else ""))
    dirty = [o for o in outcomes if o.twin_findings]
    say()
    say(f"Findings on the correct twins ({sum(len(o.twin_findings) for o in dirty)})")
    for o in dirty:
        for finding in o.twin_findings:
            say(f"  {o.case.id}: {finding}")


def outcome_json(o: Outcome) -> dict:
    return {"id": o.case.id, "rule": o.case.rule, "buggy": o.case.buggy,
            "lines": list(o.case.lines), "twin": o.case.twin, "source": o.case.source,
            "caught": o.caught, "rule_fired_at": o.rule_lines,
            "other_rules_on_bug_lines": o.other_on_bug_lines,
            "twin_findings": o.twin_findings, "diagnostics": o.diagnostics,
            "validation": o.validation or o.case.validated}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heldout.py",
        description="Recall on held-out bug cases written from public bug reports, and the "
                    "findings on their correct twins.")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES,
                        help="the cases file; case files are relative to its folder "
                             "(default: %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="RULE_OR_ID", default=None,
                        help="only the cases of these rules or ids")
    parser.add_argument("--validate", action="store_true",
                        help="also run each case (needs torch): the buggy program must fail "
                             "as the report says, the twin must run")
    parser.add_argument("--write-validated", action="store_true",
                        help="with --validate: store each outcome in the cases file's "
                             "validated column")
    parser.add_argument("--jobs", "-j", type=int, default=min(4, os.cpu_count() or 1),
                        help="cases run at once by --validate (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds the lint, or one program run, may take "
                             "(default: %(default)s)")
    parser.add_argument("--min-recall", type=float, default=0.85,
                        help="the overall recall the gate asks for (default: %(default)s)")
    parser.add_argument("--min-rule-recall", type=float, default=0.7,
                        help="the recall each of TDL005-TDL011 with at least five cases must "
                             "reach (default: %(default)s)")
    parser.add_argument("--report-only", action="store_true", help="exit 0 whatever the results")
    parser.add_argument("--json", type=Path, metavar="FILE", dest="json_out",
                        help="also write the results as JSON to this file")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.write_validated and not args.validate:
        raise DataError("--write-validated needs --validate")
    cases = read_cases(args.cases)
    if args.only:
        cases = [c for c in cases if c.rule in args.only or c.id in args.only]
        if not cases:
            raise DataError(f"no case of {' '.join(args.only)}")
    base = args.cases.parent.resolve()
    command, version = find_linter()
    # The rules on by default over every file, as a user runs them; the opt-in TDL009
    # (performance advice) only over its own cases.
    findings = lint_all(command, base, [n for c in cases for n in (c.buggy, c.twin)], "TDL",
                        args.timeout)
    advice = [n for c in cases if c.rule == OPT_IN for n in (c.buggy, c.twin)]
    if advice:
        for name, records in lint_all(command, base, advice, OPT_IN, args.timeout).items():
            findings[name] += records
    outcomes = [judge(c, findings) for c in cases]
    if args.validate:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda c: validate(c, base, args.timeout), cases))
        for o, result in zip(outcomes, results):
            o.validation = result
        if args.write_validated:
            write_validated(args.cases, {o.case.id: o.validation for o in outcomes})
    print_report(outcomes, version, args.validate)
    reasons = gate(outcomes, args.min_recall, args.min_rule_recall, args.validate)
    rules = {code: {**row, "recall": recall(row)} for code, row in summarize(outcomes).items()}
    return finish(reasons, "recall within the limits, no finding on a correct twin", args, version, rules, [outcome_json(o) for o in outcomes])


def main(argv: Optional[Sequence[str]] = None) -> int:
    return script_main(build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
