#!/usr/bin/env python3
"""Recall on real historical bugs: commits of public repositories that fixed a device bug.

Each case (``history/cases.tsv``: repo, fix_commit, path, lines, rule, reason) is a commit that
fixed a device bug of one rule's kind, read and judged by a person; ``lines`` are the buggy
lines of the file in the fix's parent. No code is kept here: the script takes the file before
the fix (``fix_commit^:path``) and after it (``fix_commit:path``) from a local git mirror of the
repository, lints both with the torchdevlint importable by the running interpreter
(``--isolated --output-format json``, the case's rule selected) and checks that

- the file before the fix has a finding of the case's rule on one of the buggy lines (caught);
- the file after the fix has no finding of that rule on the lines that replaced them (clean).

Each file is linted where a user lints it: inside a checkout of the repository at that commit
(its Python files, notebooks and project markers, from ``git archive``, with an empty ``.git``
as a clone has), so that the project index (``torchdevlint/project_index.py``) sees the other
files of the project, as ``torchdevlint`` run in the project does. Checkouts are kept under
``--checkouts DIR`` (one per repository and commit, ``DIR/owner+name/<commit>``, with the
linter's cache in ``DIR/.torchdevlint-cache``), so a second run reuses them; without it they
live in a temporary folder for the run. ``--alone`` lints each file alone, outside its
project (the measure before issue 28).

It prints the recall per rule (caught among the cases), the table of cases and those missed.
Exit status: 0 when the overall recall is at least ``--min-recall`` (0.7), no rule with at least
five cases is below ``--min-rule-recall`` (0.5), no fixed file has a finding on its fixed lines
and every case could be checked; 1 otherwise; 2 for a malformed cases file or when torchdevlint
cannot be run. ``--report-only`` exits 0 after a run.

``lines`` is ``12``, ``12-14`` or ``12,15-16``; in a notebook, ``cell 3:12-14`` (the 1-based cell
among all cells and the line in it, as torchdevlint prints locations). Mirrors: ``--mirrors DIR``
holds one git repository per case repository, as ``DIR/owner+name`` (bare, or a checkout with
``.git``; ``DIR/owner+name/repo`` and ``DIR/owner+name.git`` are found too); ``--clone`` clones
the missing ones from ``https://github.com/owner/name`` (bare).

Standard library only::

    python benchmarks/history.py --mirrors DIR [--checkouts DIR | --alone] [--clone]
                                 [--only REPO ...] [--jobs N] [--json FILE] [--report-only]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import json
import os
import re
import subprocess
import sys
import shutil
import tempfile
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.precision import (  # noqa: E402
    DIAGNOSTIC_CODES, DataError, _linter_env, _rows, _table, display, find_linter, finish,
    script_main,
)

DEFAULT_CASES = Path(__file__).resolve().parent / "history" / "cases.tsv"
CASES_HEADER = ["repo", "fix_commit", "path", "lines", "rule", "reason"]
RULE = re.compile(r"TDL[0-9]{3}")
# A place in a file: (cell or None, line).
Place = Tuple[Optional[int], int]


@dataclass(frozen=True)
class Case:
    repo: str  # owner/name
    commit: str
    path: str
    lines: Tuple[Place, ...]
    rule: str
    reason: str
    source: str  # cases.tsv:line

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "+")

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.commit[:10]}:{self.path}:{format_lines(self.lines)}"


def parse_lines(text: str) -> Tuple[Place, ...]:
    """``12``, ``12-14``, ``12,15-16``, ``cell 3:12-14`` -> the places, in order."""
    cell: Optional[int] = None
    spec = text.strip()
    match = re.fullmatch(r"cell\s+(\d+)\s*:\s*(.+)", spec)
    if match:
        cell, spec = int(match.group(1)), match.group(2)
    places: List[Place] = []
    for part in spec.split(","):
        bounds = part.strip().split("-")
        if not all(b.strip().isdigit() for b in bounds) or len(bounds) > 2:
            raise ValueError(f"bad lines {text!r}: use 12, 12-14, 12,15 or cell 3:12-14")
        first, last = int(bounds[0]), int(bounds[-1])
        if first < 1 or last < first:
            raise ValueError(f"bad line range {part.strip()!r}")
        places.extend((cell, line) for line in range(first, last + 1))
    return tuple(places)


def format_lines(places: Sequence[Place]) -> str:
    cell = places[0][0] if places else None
    lines = [line for _cell, line in places]
    text = f"{lines[0]}-{lines[-1]}" if len(lines) > 1 else str(lines[0]) if lines else ""
    return f"cell {cell}:{text}" if cell is not None else text


def read_cases(path: Path) -> List[Case]:
    cases: List[Case] = []
    seen: Dict[Tuple[str, str, str, str, str], str] = {}
    for number, (repo, commit, file, lines, rule, reason) in _rows(path, CASES_HEADER):
        where = f"{display(path)}:{number}"
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
            raise DataError(f"{where}: repo {repo!r} is not owner/name")
        if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
            raise DataError(f"{where}: fix_commit {commit!r} is not a commit hash")
        if not RULE.fullmatch(rule):
            raise DataError(f"{where}: rule {rule!r} is not a TDL code")
        if not file or file.startswith("/") or ".." in file.split("/"):
            raise DataError(f"{where}: bad path {file!r}")
        if not reason:
            raise DataError(f"{where}: the reason is empty")
        try:
            places = parse_lines(lines)
        except ValueError as exc:
            raise DataError(f"{where}: {exc}") from exc
        key = (repo, commit, file, lines, rule)
        if key in seen:
            raise DataError(f"{where}: the same case as {seen[key]}")
        seen[key] = where
        cases.append(Case(repo, commit, file, places, rule, reason, where))
    return cases


# --- git ------------------------------------------------------------------------------------

def find_mirror(mirrors: Path, case: Case) -> Optional[Path]:
    """The git directory of the case's repository under ``mirrors``, or None."""
    base = mirrors / case.folder
    for candidate in (base, base / ".git", base / "repo", base / "repo" / ".git",
                      mirrors / f"{case.folder}.git"):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def clone_mirror(mirrors: Path, case: Case) -> Optional[str]:
    """``git clone --bare`` the repository into ``mirrors``; the error, or None."""
    mirrors.mkdir(parents=True, exist_ok=True)
    argv = ["git", "clone", "--bare", "--quiet", f"https://github.com/{case.repo}",
            str(mirrors / f"{case.folder}.git")]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{' '.join(argv)}: {exc}"
    if done.returncode != 0:
        return f"{' '.join(argv)}: exit {done.returncode}: " \
               f"{(done.stderr.strip().splitlines() or [''])[-1]}"
    return None


def git_show(git_dir: Path, revision: str) -> Tuple[Optional[bytes], str]:
    """The blob at ``revision`` (``commit:path``), or None and the reason."""
    try:
        done = subprocess.run(["git", "--git-dir", str(git_dir), "show", revision],
                              capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, str(exc)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines() or [""]
        return None, f"git show {revision}: {message[-1]}"
    return done.stdout, ""


# Where a linted file's project comes from: what the project index reads (``_SUFFIXES``
# and ``ROOT_MARKERS`` of ``torchdevlint/project_index.py``); ``.git`` is made empty.
CHECKOUT_NAMES = (".py", ".ipynb", "pyproject.toml", "setup.cfg")
_CHECKOUT_LOCKS: Dict[Path, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def resolve_commit(git_dir: Path, revision: str) -> Tuple[Optional[str], str]:
    """The full hash of ``revision`` (``abc123^``), or None and the reason."""
    try:
        done = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "--verify",
                               "--quiet", f"{revision}^{{commit}}"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, str(exc)
    if done.returncode != 0 or not done.stdout.strip():
        return None, f"git rev-parse {revision}: no such commit"
    return done.stdout.strip(), ""


def checkout(git_dir: Path, checkouts: Path, folder: str, commit: str) -> Tuple[Optional[Path], str]:
    """``checkouts/folder/commit``: the project's files at ``commit`` (made once, atomically:
    written beside it and renamed), or None and the reason. A blob the mirror lacks (a large
    file left out of a partial clone) is left out, as a sparse checkout would."""
    target = checkouts / folder / commit
    with _LOCKS_LOCK:
        lock = _CHECKOUT_LOCKS.setdefault(target, threading.Lock())
    with lock:
        if (target / ".git").is_dir():
            return target, ""
        part = target.with_name(f"{commit}.part-{os.getpid()}")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        try:
            error = _write_tree(git_dir, commit, part)
        except (OSError, subprocess.SubprocessError) as exc:
            error = str(exc)
        if error:
            shutil.rmtree(part, ignore_errors=True)
            return None, f"checkout of {commit[:10]}: {error}"
        (part / ".git").mkdir()  # the root marker a clone has (made last: the checkout is whole)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(part, target)
        return target, ""


def _write_tree(git_dir: Path, commit: str, into: Path) -> str:
    """Write the files of ``commit`` that the index reads into ``into``; the error, or ""."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
                             capture_output=True, timeout=300)
    if listing.returncode != 0:
        return (listing.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    blobs = []
    for entry in listing.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[0] != "120000" and \
                path.endswith(CHECKOUT_NAMES) and ".." not in path.split("/"):
            blobs.append((parts[2], path))
    if not blobs:
        return "no Python files"
    reader = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    feeder = threading.Thread(target=_feed, args=(reader.stdin, [sha for sha, _ in blobs]))
    feeder.start()
    try:
        for _sha, path in blobs:
            header = reader.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing"
                continue
            data = reader.stdout.read(int(header[2]))
            reader.stdout.read(1)  # the newline after the object
            target = into / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    finally:
        feeder.join()
        reader.stdout.close()
        reader.wait(timeout=60)
    return ""


def _feed(stream, shas: List[str]) -> None:
    try:
        for sha in shas:
            stream.write(sha.encode() + b"\n")
        stream.close()
    except OSError:
        pass


# --- the file's text, by cell ---------------------------------------------------------------

def cells_of(path: str, data: bytes) -> Dict[Optional[int], List[str]]:
    """The file's lines; for a notebook, the lines of each cell by its 1-based position."""
    text = data.decode("utf-8", "replace")
    if not path.endswith(".ipynb"):
        return {None: text.splitlines()}
    try:
        notebook = json.loads(text)
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if not isinstance(cells, list):
            cells = [c for ws in notebook.get("worksheets", []) for c in ws.get("cells", [])]
    except (ValueError, AttributeError):
        return {}
    out: Dict[Optional[int], List[str]] = {}
    for number, cell in enumerate(cells, start=1):
        source = cell.get("source", cell.get("input", "")) if isinstance(cell, dict) else ""
        if isinstance(source, list):
            source = "".join(source)
        out[number] = str(source).splitlines()
    return out


def fixed_places(before: Dict[Optional[int], List[str]], after: Dict[Optional[int], List[str]],
                 places: Sequence[Place]) -> Set[Place]:
    """The places of the fixed file that correspond to the buggy ``places``: a kept line maps
    to itself, a changed or deleted one to the lines that replaced it (and, for a deletion, the
    lines around it)."""
    out: Set[Place] = set()
    by_cell: Dict[Optional[int], Set[int]] = defaultdict(set)
    for cell, line in places:
        by_cell[cell].add(line)
    for cell, lines in by_cell.items():
        old, new = before.get(cell, []), after.get(cell, [])
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            hit = [n for n in lines if i1 < n <= i2]
            if not hit:
                continue
            if tag == "equal":
                out.update((cell, j1 + (n - i1)) for n in hit)
            elif j2 > j1:
                out.update((cell, n) for n in range(j1 + 1, j2 + 1))
            else:  # deleted: the neighbours in the fixed file
                out.update((cell, n) for n in (j1, j1 + 1) if n >= 1)
    return out


# --- running a case -------------------------------------------------------------------------

@dataclass
class Outcome:
    case: Case
    status: str  # "ok" or "error"
    detail: str = ""
    caught: bool = False
    clean: bool = True
    before_rule_lines: List[str] = field(default_factory=list)  # where the rule fired before
    after_hits: List[str] = field(default_factory=list)  # findings on the fixed lines
    diagnostics: List[str] = field(default_factory=list)


def lint_file(command: List[str], root: Path, paths: Sequence[str], rule: str,
              timeout: float, cache: Optional[Path] = None) -> Tuple[Optional[list], str]:
    """The JSON records of linting ``paths`` (relative to ``root``, where it runs); the
    linter's cache in ``cache``, or none."""
    caching = ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
    argv = [*command, "--isolated", *caching, "--output-format", "json", "--select", rule,
            *paths]  # the exact code: an opt-in rule (TDL009) runs too
    try:
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, encoding="utf-8",
                              env=_linter_env(), timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"torchdevlint ran past {timeout:.0f}s"
    except OSError as exc:
        return None, f"cannot run torchdevlint: {exc}"
    try:
        records = json.loads(done.stdout)
        if not isinstance(records, list):
            raise ValueError
    except ValueError:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return None, f"torchdevlint exited {done.returncode} without a JSON report: {tail}"
    return records, ""


def place_of(record: dict) -> Place:
    return (record.get("cell"), int(record["line"]))


def where(place: Place) -> str:
    cell, line = place
    return f"cell {cell}:{line}" if cell is not None else str(line)


def check_case(command: List[str], mirrors: Path, case: Case, timeout: float,
               checkouts: Optional[Path] = None) -> Outcome:
    """Lint the case's file before and after the fix: inside checkouts of its repository at
    the two commits (``checkouts``), or alone in a temporary folder (None)."""
    git_dir = find_mirror(mirrors, case)
    if git_dir is None:
        return Outcome(case, "error", f"no mirror of {case.repo} under {mirrors} "
                                      f"(run with --clone)")
    before, error = git_show(git_dir, f"{case.commit}^:{case.path}")
    if before is None:
        return Outcome(case, "error", error)
    after, error = git_show(git_dir, f"{case.commit}:{case.path}")
    if after is None:
        return Outcome(case, "error", error)
    outcome = Outcome(case, "ok")
    if checkouts is not None:
        found, error = lint_in_checkouts(command, git_dir, checkouts, case, timeout)
    else:
        found, error = lint_alone(command, case, {"before": before, "after": after}, timeout)
    if found is None:
        return Outcome(case, "error", error)
    records = found
    for side in ("before", "after"):
        outcome.diagnostics += [f"{side}: {r['code']} {r.get('message', '')}".strip()
                                for r in records[side] if r["code"] in DIAGNOSTIC_CODES]
    wanted = set(case.lines)
    rule_before = [place_of(r) for r in records["before"] if r["code"] == case.rule]
    outcome.before_rule_lines = [where(p) for p in rule_before]
    outcome.caught = any(p in wanted for p in rule_before)
    fixed = fixed_places(cells_of(case.path, before), cells_of(case.path, after), case.lines)
    outcome.after_hits = [f"{where(place_of(r))}: {r.get('message', '')}"
                          for r in records["after"]
                          if r["code"] == case.rule and place_of(r) in fixed]
    outcome.clean = not outcome.after_hits
    return outcome


def lint_alone(command: List[str], case: Case, files: Dict[str, bytes],
               timeout: float) -> Tuple[Optional[Dict[str, list]], str]:
    """Each side's file written alone into a temporary folder and linted there."""
    records = {}
    with tempfile.TemporaryDirectory(prefix="tdl-history-") as tmp:
        for side, data in files.items():
            target = Path(tmp, side, case.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            found, error = lint_file(command, Path(tmp, side), [case.path], case.rule, timeout)
            if found is None:
                return None, f"{side}: {error}"
            records[side] = found
    return records, ""


def lint_in_checkouts(command: List[str], git_dir: Path, checkouts: Path, case: Case,
                      timeout: float) -> Tuple[Optional[Dict[str, list]], str]:
    """Both sides' files linted in one run, each inside its checkout."""
    paths = {}
    for side, revision in (("before", f"{case.commit}^"), ("after", case.commit)):
        commit, error = resolve_commit(git_dir, revision)
        if commit is None:
            return None, f"{side}: {error}"
        root, error = checkout(git_dir, checkouts, case.folder, commit)
        if root is None:
            return None, f"{side}: {error}"
        paths[side] = root / case.path
    found, error = lint_file(command, checkouts, [str(p) for p in paths.values()], case.rule,
                             timeout, cache=checkouts / ".torchdevlint-cache")
    if found is None:
        return None, error
    records: Dict[str, list] = {side: [] for side in paths}
    for record in found:
        for side, path in paths.items():
            if Path(record.get("path", "")) == path:
                records[side].append(record)
    return records, ""


# --- report ---------------------------------------------------------------------------------

def summarize(outcomes: List[Outcome]) -> Dict[str, Dict[str, int]]:
    rules: Dict[str, Dict[str, int]] = defaultdict(lambda: {"cases": 0, "caught": 0,
                                                            "dirty_after": 0, "errors": 0})
    for o in outcomes:
        row = rules[o.case.rule]
        row["cases"] += 1
        if o.status != "ok":
            row["errors"] += 1
            continue
        row["caught"] += o.caught
        row["dirty_after"] += not o.clean
    return dict(sorted(rules.items()))


def recall(row: Dict[str, int]) -> Optional[float]:
    return row["caught"] / row["cases"] if row["cases"] else None


def gate(outcomes: List[Outcome], min_recall: float, min_rule_recall: float) -> List[str]:
    reasons = []
    rules = summarize(outcomes)
    total = {"cases": sum(r["cases"] for r in rules.values()),
             "caught": sum(r["caught"] for r in rules.values())}
    overall = recall(total)
    if overall is not None and overall < min_recall:
        reasons.append(f"overall recall {overall:.2f} < {min_recall:g}")
    for code, row in rules.items():
        rate = recall(row)
        if row["cases"] >= 5 and rate is not None and rate < min_rule_recall:
            reasons.append(f"{code}: recall {rate:.2f} < {min_rule_recall:g} "
                           f"({row['caught']} of {row['cases']})")
    dirty = sum(not o.clean for o in outcomes if o.status == "ok")
    if dirty:
        reasons.append(f"{dirty} fixed file(s) still have a finding on the fixed lines")
    errors = sum(o.status != "ok" for o in outcomes)
    if errors:
        reasons.append(f"{errors} case(s) could not be checked")
    return reasons


def print_report(outcomes: List[Outcome], version: str, out=sys.stdout) -> None:
    def say(text: str = "") -> None:
        print(text, file=out)

    rules = summarize(outcomes)
    say(f"Recall on historical bugs: {version}, {len(outcomes)} cases, "
        f"{len({o.case.repo for o in outcomes})} repositories")
    say()
    rows = []
    total = {"cases": 0, "caught": 0, "dirty_after": 0, "errors": 0}
    for code, row in rules.items():
        for key in total:
            total[key] += row[key]
        rate = recall(row)
        rows.append((code, row["cases"], row["caught"], "-" if rate is None else f"{rate:.2f}",
                     row["dirty_after"], row["errors"]))
    rate = recall(total)
    rows.append(("all", total["cases"], total["caught"], "-" if rate is None else f"{rate:.2f}",
                 total["dirty_after"], total["errors"]))
    for line in _table(("rule", "cases", "caught", "recall", "finding after fix",
                        "not checked"), rows, 1):
        say("  " + line)
    say()
    say("Cases")
    rows = []
    for o in outcomes:
        state = ("ERROR" if o.status != "ok" else
                 ("caught" if o.caught else "MISSED") + ("" if o.clean else ", AFTER-FIX FINDING"))
        rows.append((o.case.rule, state, o.case.label))
    for line in _table(("rule", "result", "case"), rows, 99):
        say("  " + line)
    missed = [o for o in outcomes if o.status == "ok" and not o.caught]
    say()
    say(f"Missed ({len(missed)})")
    for o in missed:
        fired = ", ".join(o.before_rule_lines) or "nowhere"
        say(f"  {o.case.rule} {o.case.label}: {o.case.reason}  [the rule fired at: {fired}]"
            + (f" [{'; '.join(o.diagnostics)}]" if o.diagnostics else ""))
    dirty = [o for o in outcomes if o.status == "ok" and not o.clean]
    if dirty:
        say()
        say(f"Findings on the fixed lines after the fix ({len(dirty)})")
        for o in dirty:
            say(f"  {o.case.rule} {o.case.label}: {'; '.join(o.after_hits)}")
    errors = [o for o in outcomes if o.status != "ok"]
    if errors:
        say()
        say(f"Not checked ({len(errors)})")
        for o in errors:
            say(f"  {o.case.label} [{o.case.source}]: {o.detail}")


def outcome_json(o: Outcome) -> dict:
    return {"repo": o.case.repo, "fix_commit": o.case.commit, "path": o.case.path,
            "lines": format_lines(o.case.lines), "rule": o.case.rule, "status": o.status,
            "detail": o.detail, "caught": o.caught, "clean_after": o.clean,
            "rule_fired_before_at": o.before_rule_lines, "after_hits": o.after_hits,
            "diagnostics": o.diagnostics}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="history.py",
        description="Recall on real historical device bugs: lint each case's file before and "
                    "after its fix commit.")
    parser.add_argument("--mirrors", type=Path, default=os.environ.get("TORCHDEVLINT_MIRRORS"),
                        help="folder of git mirrors, one per repository, named owner+name "
                             "(default: $TORCHDEVLINT_MIRRORS)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--checkouts", type=Path, metavar="DIR",
                       default=os.environ.get("TORCHDEVLINT_CHECKOUTS"),
                       help="keep the checkouts the files are linted in (and the linter's cache) "
                            "here, for the next run (default: $TORCHDEVLINT_CHECKOUTS, else a "
                            "temporary folder)")
    where.add_argument("--alone", action="store_true",
                       help="lint each file alone, outside a checkout of its project")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES,
                        help="the cases file (default: %(default)s)")
    parser.add_argument("--clone", action="store_true",
                        help="git clone --bare missing repositories into --mirrors")
    parser.add_argument("--only", nargs="+", metavar="REPO_OR_RULE", default=None,
                        help="only the cases of these repositories (owner/name) or rules")
    parser.add_argument("--jobs", "-j", type=int, default=min(4, os.cpu_count() or 1),
                        help="cases checked at once (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds one lint may take (default: %(default)s)")
    parser.add_argument("--min-recall", type=float, default=0.7,
                        help="the overall recall the gate asks for (default: %(default)s)")
    parser.add_argument("--min-rule-recall", type=float, default=0.5,
                        help="the recall each rule with at least five cases must reach "
                             "(default: %(default)s)")
    parser.add_argument("--report-only", action="store_true",
                        help="exit 0 whatever the results")
    parser.add_argument("--json", type=Path, metavar="FILE", dest="json_out",
                        help="also write the results as JSON to this file")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.mirrors is None:
        raise DataError("name the folder of git mirrors with --mirrors DIR "
                        "(or set TORCHDEVLINT_MIRRORS)")
    cases = read_cases(args.cases)
    if args.only:
        cases = [c for c in cases if c.repo in args.only or c.rule in args.only]
    mirrors = args.mirrors.expanduser().resolve()
    command, version = find_linter()
    if args.clone:
        for repo in sorted({c.repo for c in cases}):
            case = next(c for c in cases if c.repo == repo)
            if find_mirror(mirrors, case) is None:
                print(f"cloning https://github.com/{repo} ...", file=sys.stderr)
                error = clone_mirror(mirrors, case)
                if error:
                    print(f"warning: {repo}: clone failed: {error}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tdl-history-checkouts-") as tmp:
        checkouts = None if args.alone else \
            (args.checkouts.expanduser().resolve() if args.checkouts else Path(tmp))
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            outcomes = list(pool.map(
                lambda c: check_case(command, mirrors, c, args.timeout, checkouts), cases))
    print_report(outcomes, version)
    reasons = gate(outcomes, args.min_recall, args.min_rule_recall)
    rules = {code: {**row, "recall": recall(row)} for code, row in summarize(outcomes).items()}
    return finish(reasons, "recall within the limits, no finding on a fixed line, every case checked", args, version, rules, [outcome_json(o) for o in outcomes])


def main(argv: Optional[Sequence[str]] = None) -> int:
    return script_main(build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
