#!/usr/bin/env python3
"""The repeatable precision review: re-lint the pinned corpora and compare with the verdicts.

Every finding torchdevlint reports on a set of public repositories, each pinned at a commit
(``precision/corpora.tsv``), was read by a person and given a verdict, TRUE (a real device bug,
or what the rule means to report) or FALSE (a false positive), with a one-line reason
(``precision/verdicts/<name>.tsv``; locations exactly as ``torchdevlint --isolated --no-cache
--quiet .`` prints them from inside the checkout). No code from the corpora is kept here.

This script lints each checkout with the torchdevlint importable by the running interpreter
(``--isolated --no-cache --output-format json``), matches the findings to the verdicts by
(location, code) and prints, per repository and rule, how many findings there are, how many
were reviewed and how many of those are FALSE; then the findings that need a review (NEW), the
TRUE findings that are no longer reported (LOST: a recall loss), the FALSE findings that are
gone (fixed false positives), the FALSE findings still reported, and the file diagnostics
(E999/E902/TDL999, which are not rule findings).

Exit status: 0 when every rule's false rate among its reviewed findings is at most
``--max-false-rate`` (5%), no finding is unreviewed, no TRUE finding was lost and every corpus
could be linted; 1 otherwise; 2 for a usage or data error. ``--report-only`` always exits 0
(after a usage or data error too little is known: that still exits 2).

Standard library only::

    python benchmarks/precision.py --corpora DIR [--clone] [--jobs N] [--only NAME ...]
                                   [--write-table docs/precision.md] [--report-only]
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
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = HERE / "precision"
CORPORA_HEADER = ["name", "repository", "commit", "kind"]
VERDICTS_HEADER = ["location", "code", "verdict", "reason"]
SPLIT_HEADER = ["name", "set"]
SPLIT_SETS = ("tuning", "test")  # split.tsv, written by split.py
JUDGED_HEADER = ["set", "commit", "date", "reviewers"]  # judged.tsv: when a set was judged
VERDICTS = ("TRUE", "FALSE")
# File diagnostics: the file could not be analysed. Listed on their own, never counted as findings.
DIAGNOSTIC_CODES = ("E999", "E902", "TDL999")
SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


class DataError(Exception):
    """corpora.tsv or a verdicts file is malformed; or torchdevlint cannot be run."""


# --- data -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Corpus:
    name: str
    repository: str
    commit: str
    kind: str

    @property
    def github(self) -> Optional[str]:
        url = self.repository.rstrip("/")
        if url.endswith(".git"):
            url = url[:-4]
        return url if url.startswith("https://github.com/") else None

    def clone_command(self, directory: Path) -> str:
        target = directory / self.name
        return (f"git clone {self.repository} {target} && "
                f"git -C {target} checkout {self.commit}")


# The reason of a TRUE verdict that a GPU-only project's intent silences (issue 27), or of
# one in code that only ever runs on a GPU (a program that stops without CUDA, a CUDA
# extension's op; issue 28): the finding is true and unwanted, and its absence is no recall
# loss. ``GPU_ONLY`` verdicts still reported make the GPU-only share of TDL002 (issue 28).
BY_INTENT = ("gpu-only-project:", "gpu-only-by-design:")
GPU_ONLY = BY_INTENT
# The reason of a FALSE verdict whose deciding evidence lies in another file of the project
# (README.md's criteria): issue 27 asks such findings to be at most 1% of all findings.
CROSS_FILE = "cross-file:"
CROSS_FILE_GOAL = 1.0


@dataclass(frozen=True)
class Verdict:
    location: str
    code: str
    true: bool
    reason: str
    source: str  # file:line of the row, for messages

    @property
    def key(self) -> Tuple[str, str]:
        return (self.location, self.code)


@dataclass(frozen=True)
class Finding:
    location: str
    code: str
    message: str
    path: str
    line: int
    cell: Optional[int]

    @property
    def key(self) -> Tuple[str, str]:
        return (self.location, self.code)


def _rows(path: Path, header: List[str]) -> Iterable[Tuple[int, List[str]]]:
    """The rows of a tab-separated file with a fixed header; blank lines and ``#`` lines skip."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from exc
    if not lines or lines[0].rstrip("\r").split("\t") != header:
        raise DataError(f"{path}:1: the header must be {'<TAB>'.join(header)!r}")
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        # The last column (kind, reason) is free text: it may not hold a tab, but stay lenient.
        cells = line.split("\t", len(header) - 1)
        if len(cells) != len(header):
            raise DataError(f"{path}:{number}: expected {len(header)} tab-separated columns "
                            f"({', '.join(header)}), got {len(cells)}")
        yield number, [cell.strip() for cell in cells]


def read_corpora(data_dir: Path) -> List[Corpus]:
    path = data_dir / "corpora.tsv"
    corpora: List[Corpus] = []
    seen = set()
    for number, (name, repository, commit, kind) in _rows(path, CORPORA_HEADER):
        if not name or "/" in name or name in (".", ".."):
            raise DataError(f"{path}:{number}: bad corpus name {name!r}")
        if name in seen:
            raise DataError(f"{path}:{number}: corpus {name!r} is listed twice")
        seen.add(name)
        corpora.append(Corpus(name, repository, commit, "" if kind == "-" else kind))
    return corpora


def read_split(data_dir: Path) -> Dict[str, str]:
    """``split.tsv``: the set (tuning or test) of each corpus, as ``split.py`` wrote it."""
    path = data_dir / "split.tsv"
    split: Dict[str, str] = {}
    for number, (name, kind) in _rows(path, SPLIT_HEADER):
        if kind not in SPLIT_SETS:
            raise DataError(f"{path}:{number}: set {kind!r} is neither "
                            f"{' nor '.join(SPLIT_SETS)}")
        if name in split:
            raise DataError(f"{path}:{number}: corpus {name!r} is listed twice")
        split[name] = kind
    return split


def select_set(corpora: List[Corpus], data_dir: Path, chosen: str) -> List[Corpus]:
    """The corpora of one set of split.tsv (``all``: every corpus, split.tsv not read)."""
    if chosen == "all":
        return corpora
    split = read_split(data_dir)
    unsplit = [c.name for c in corpora if c.name not in split]
    if unsplit:
        raise DataError(f"{data_dir / 'split.tsv'}: no set for {', '.join(unsplit)} "
                        f"(run benchmarks/split.py --write)")
    return [c for c in corpora if split[c.name] == chosen]


def read_verdicts(path: Path) -> Tuple[Dict[Tuple[str, str], Verdict], List[str]]:
    """The verdicts of one corpus by (location, code), and the problems found in the file."""
    verdicts: Dict[Tuple[str, str], Verdict] = {}
    problems: List[str] = []
    if not path.exists():
        return verdicts, problems
    for number, (location, code, verdict, reason) in _rows(path, VERDICTS_HEADER):
        where = f"{display(path)}:{number}"
        if verdict.upper() not in VERDICTS:
            problems.append(f"{where}: verdict {verdict!r} is neither TRUE nor FALSE")
            continue
        if code in DIAGNOSTIC_CODES:
            problems.append(f"{where}: {code} is a file diagnostic, not a rule finding; "
                            f"diagnostics take no verdict")
            continue
        if not location or not code:
            problems.append(f"{where}: empty location or code")
            continue
        if not reason:
            problems.append(f"{where}: the reason is empty")
        if (location, code) in verdicts:
            problems.append(f"{where}: a second verdict for {location} {code} "
                            f"(first at {verdicts[(location, code)].source})")
            continue
        verdicts[(location, code)] = Verdict(location, code, verdict.upper() == "TRUE",
                                             reason, where)
    return verdicts, problems


# --- running torchdevlint -------------------------------------------------------------------

def _linter_env() -> Dict[str, str]:
    # ``python -m`` puts the working directory (a corpus) first on sys.path, where its modules
    # could shadow torchdevlint's own imports; PYTHONSAFEPATH (Python 3.11+) stops that.
    return dict(os.environ, PYTHONSAFEPATH="1", PYTHONIOENCODING="utf-8")


def find_linter() -> Tuple[List[str], str]:
    """The torchdevlint command of the running interpreter, and its ``--version`` line."""
    candidates = [[sys.executable, "-m", "torchdevlint"]]
    scripts = Path(sys.executable).parent
    for name in ("torchdevlint", "torchdevlint.exe"):
        if (scripts / name).exists():
            candidates.append([str(scripts / name)])
    tried = []
    for command in candidates:
        try:
            done = subprocess.run([*command, "--version"], capture_output=True, text=True,
                                  cwd=tempfile.gettempdir(), env=_linter_env(), timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            tried.append(f"{' '.join(command)}: {exc}")
            continue
        if done.returncode == 0:
            return command, done.stdout.strip() or "torchdevlint"
        tried.append(f"{' '.join(command)}: exit {done.returncode}: "
                     f"{(done.stderr.strip().splitlines() or [''])[-1]}")
    raise DataError("cannot run torchdevlint with this interpreter "
                    f"({sys.executable}); install it (pip install -e .) or run the script "
                    "with the Python that has it. Tried: " + "; ".join(tried))


def location_of(record: dict) -> str:
    """The location the text format prints: ``path:line:col`` or ``path:cell N:line:col``
    (``torchdevlint.findings.Finding.location``)."""
    path = str(record["path"])
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    cell = f"cell {record['cell']}:" if record.get("cell") is not None else ""
    return f"{path}:{cell}{record['line']}:{record['column']}"


@dataclass
class CorpusResult:
    corpus: Corpus
    status: str  # "ok", "missing" or "error"
    detail: str = ""
    # No project marker at its root: not what a user who clones it lints (see ``unmarked``).
    unmarked: bool = False
    findings: List[Finding] = field(default_factory=list)
    diagnostics: List[Finding] = field(default_factory=list)
    files: Counter = field(default_factory=Counter)


# What makes a folder a project root for torchdevlint (``project_index.ROOT_MARKERS``; this
# script imports nothing of the linter it measures, a test keeps the two the same).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def unmarked(checkout: Path) -> bool:
    """A checkout with none of ``PROJECT_MARKERS``: a folder of files exported from git
    (``git archive``), not a clone. A user's clone has ``.git``, so torchdevlint reads it as
    one project (its index: guards, callers and writers in other files); without a marker each
    file's folder is all it sees, and the review measures what no user gets: 29 of 235
    corpora exported so reported 37 TDL002 findings more than their clones do, 8 of them FALSE
    with the evidence in another file. ``mkdir CHECKOUT/.git`` makes it one."""
    return not any((checkout / marker).exists() for marker in PROJECT_MARKERS)


def count_files(root: Path) -> Counter:
    """Python files, stubs and notebooks in a checkout (hidden folders and caches left out)."""
    counts: Counter = Counter()
    for _dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
        for name in filenames:
            suffix = os.path.splitext(name)[1]
            if suffix in SOURCE_SUFFIXES:
                counts[suffix] += 1
    return counts


def lint_corpus(command: List[str], corpus: Corpus, checkout: Path, linter_jobs: int,
                timeout: float, extend_select: Sequence[str] = ()) -> CorpusResult:
    result = CorpusResult(corpus, "ok", files=count_files(checkout), unmarked=unmarked(checkout))
    argv = [*command, "--isolated", "--no-cache", "--output-format", "json",
            "--jobs", str(linter_jobs),
            *(["--extend-select", ",".join(extend_select)] if extend_select else []), "."]
    try:
        done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True,
                              encoding="utf-8", env=_linter_env(), timeout=timeout)
    except subprocess.TimeoutExpired:
        return CorpusResult(corpus, "error", f"torchdevlint ran past {timeout:.0f}s")
    except OSError as exc:
        return CorpusResult(corpus, "error", f"cannot run torchdevlint: {exc}")
    try:
        records = json.loads(done.stdout)
        if not isinstance(records, list):
            raise ValueError("not a list")
    except ValueError:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return CorpusResult(corpus, "error", f"torchdevlint exited {done.returncode} without "
                                             f"a JSON report: {tail}")
    if done.returncode not in (0, 1):
        # 2 with a report: an internal error in some file, which shows as a TDL999 diagnostic.
        result.detail = f"torchdevlint exited {done.returncode}"
    for record in records:
        finding = Finding(location_of(record), str(record["code"]), str(record["message"]),
                          str(record["path"]), int(record["line"]), record.get("cell"))
        if finding.code in DIAGNOSTIC_CODES:
            result.diagnostics.append(finding)
        else:
            result.findings.append(finding)
    return result


def clone(corpus: Corpus, directory: Path) -> Optional[str]:
    """``git clone`` the repository and check out the commit; the error, or None."""
    target = directory / corpus.name
    directory.mkdir(parents=True, exist_ok=True)
    for argv in (["git", "clone", "--quiet", corpus.repository, str(target)],
                 ["git", "-C", str(target), "checkout", "--quiet", corpus.commit]):
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{' '.join(argv)}: {exc}"
        if done.returncode != 0:
            if target.exists():  # a clone at the wrong commit must not pass for the corpus
                shutil.rmtree(target, ignore_errors=True)
            return (f"{' '.join(argv)}: exit {done.returncode}: "
                    f"{(done.stderr.strip().splitlines() or [''])[-1]}")
    return None


# --- comparing ------------------------------------------------------------------------------

@dataclass
class Counts:
    findings: int = 0
    true: int = 0
    false: int = 0

    @property
    def reviewed(self) -> int:
        return self.true + self.false

    @property
    def unreviewed(self) -> int:
        return self.findings - self.reviewed

    @property
    def false_rate(self) -> Optional[float]:
        return 100.0 * self.false / self.reviewed if self.reviewed else None

    def add(self, other: "Counts") -> None:
        self.findings += other.findings
        self.true += other.true
        self.false += other.false


@dataclass
class Review:
    """Findings against verdicts over all corpora."""
    results: List[CorpusResult]
    counts: Dict[Tuple[str, str], Counts] = field(default_factory=dict)  # (corpus, code)
    new: List[Tuple[str, Finding]] = field(default_factory=list)
    still_false: List[Tuple[str, Finding, Verdict]] = field(default_factory=list)
    lost_true: List[Tuple[str, Verdict]] = field(default_factory=list)
    # TRUE findings a GPU-only project's or program's intent silences (``BY_INTENT``)
    by_intent: List[Tuple[str, Verdict]] = field(default_factory=list)
    # (corpus, code) -> TRUE findings still reported that are GPU-only by design
    gpu_only: Dict[Tuple[str, str], int] = field(default_factory=dict)
    gone_false: List[Tuple[str, Verdict]] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)

    def by_rule(self) -> Dict[str, Counts]:
        rules: Dict[str, Counts] = defaultdict(Counts)
        for (_corpus, code), counts in self.counts.items():
            rules[code].add(counts)
        return dict(rules)

    def gpu_only_by_rule(self) -> Dict[str, int]:
        rules: Dict[str, int] = defaultdict(int)
        for (_corpus, code), n in self.gpu_only.items():
            rules[code] += n
        return dict(rules)

    def by_corpus(self) -> Dict[str, Counts]:
        corpora: Dict[str, Counts] = defaultdict(Counts)
        for (corpus, _code), counts in self.counts.items():
            corpora[corpus].add(counts)
        return dict(corpora)

    @property
    def linted(self) -> List[CorpusResult]:
        return [r for r in self.results if r.status == "ok"]


def compare(results: List[CorpusResult], data_dir: Path, known_rules: Sequence[str]) -> Review:
    review = Review(results)
    for result in results:
        name = result.corpus.name
        verdicts, problems = read_verdicts(data_dir / "verdicts" / f"{name}.tsv")
        review.problems.extend(problems)
        if result.status != "ok":
            continue  # what was not linted says nothing about its verdicts
        for code in known_rules:
            review.counts.setdefault((name, code), Counts())
        reported = set()
        for finding in result.findings:
            counts = review.counts.setdefault((name, finding.code), Counts())
            counts.findings += 1
            reported.add(finding.key)
            verdict = verdicts.get(finding.key)
            if verdict is None:
                review.new.append((name, finding))
            elif verdict.true:
                counts.true += 1
                if verdict.reason.startswith(GPU_ONLY):
                    key = (name, finding.code)
                    review.gpu_only[key] = review.gpu_only.get(key, 0) + 1
            else:
                counts.false += 1
                review.still_false.append((name, finding, verdict))
        for key, verdict in verdicts.items():
            if key not in reported and verdict.code in known_rules:
                # (a verdict of a rule that did not run, an opt-in one, says nothing here)
                if verdict.true and verdict.reason.startswith(BY_INTENT):
                    review.by_intent.append((name, verdict))  # true, and unwanted: not lost
                    continue
                (review.lost_true if verdict.true else review.gone_false).append((name, verdict))
    return review


def gate(review: Review, max_false_rate: float) -> List[str]:
    """Why the review fails; empty when it passes."""
    reasons = []
    for code, counts in sorted(review.by_rule().items()):
        rate = counts.false_rate
        if rate is not None and rate > max_false_rate:
            reasons.append(f"{code}: {counts.false} of {counts.reviewed} reviewed findings are "
                           f"FALSE ({rate:.1f}% > {max_false_rate:g}%)")
    if review.new:
        reasons.append(f"{len(review.new)} finding(s) have no verdict")
    if review.lost_true:
        reasons.append(f"{len(review.lost_true)} TRUE finding(s) are no longer reported")
    missing = [r.corpus.name for r in review.results if r.status == "missing"]
    if missing:
        reasons.append(f"{len(missing)} corpus checkout(s) missing: {', '.join(missing)}")
    failed = [r.corpus.name for r in review.results if r.status == "error"]
    if failed:
        reasons.append(f"{len(failed)} corpus lint run(s) failed: {', '.join(failed)}")
    exported = [r.corpus.name for r in review.results if r.unmarked]
    if exported:
        reasons.append(f"{len(exported)} corpus checkout(s) are no project (no .git, "
                       f"pyproject.toml, setup.py or setup.cfg), unlike a clone: "
                       f"{', '.join(exported)}")
    if review.problems:
        reasons.append(f"{len(review.problems)} problem(s) in the verdict files")
    return reasons


# --- the terminal report --------------------------------------------------------------------

def display(path: Path, base: Optional[Path] = None) -> str:
    """``path`` relative to ``base`` (the working directory) when it lies below it."""
    full = Path(os.path.abspath(path))
    try:
        return full.relative_to(Path(os.path.abspath(base or Path.cwd()))).as_posix()
    except ValueError:
        return str(full)


def _rate(counts: Counts) -> str:
    rate = counts.false_rate
    return "-" if rate is None else f"{rate:.1f}%"


def _short(text: str, width: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _table(header: Sequence[str], rows: List[Sequence[object]], numeric_from: int) -> List[str]:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for row in cells:
        lines.append("  ".join(c.rjust(w) if i >= numeric_from else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def print_report(review: Review, rule_names: Dict[str, str], max_false_rate: float,
                 data_dir: Path, out=sys.stdout) -> None:
    def say(text: str = "") -> None:
        print(text, file=out)

    verdicts_dir = display(data_dir / "verdicts")
    say("Per repository and rule")
    rows = []
    for result in review.linted:
        name = result.corpus.name
        for (corpus, code), counts in sorted(review.counts.items()):
            if corpus == name and counts.findings:
                rows.append((name, code, counts.findings, counts.reviewed, counts.true,
                             counts.false, counts.unreviewed))
        if not any(row[0] == name for row in rows):
            rows.append((name, "-", 0, 0, 0, 0, 0))
    for line in _table(("repository", "rule", "findings", "reviewed", "TRUE", "FALSE",
                        "unreviewed"), rows, 2):
        say("  " + line)
    say()
    say("Per rule, all repositories")
    rows = []
    total = Counts()
    for code, counts in sorted(review.by_rule().items()):
        total.add(counts)
        rows.append((code, rule_names.get(code, ""), counts.findings, counts.reviewed,
                     counts.true, counts.false, counts.unreviewed, _rate(counts)))
    rows.append(("all", "", total.findings, total.reviewed, total.true, total.false,
                 total.unreviewed, _rate(total)))
    for line in _table(("rule", "name", "findings", "reviewed", "TRUE", "FALSE", "unreviewed",
                        "false rate"), rows, 2):
        say("  " + line)
    say(f"  (false rate: FALSE among the reviewed findings still reported; "
        f"the gate allows {max_false_rate:g}% per rule)")
    cross = [(name, finding) for name, finding, verdict in review.still_false
             if verdict.reason.startswith(CROSS_FILE)]
    if total.findings:
        say(f"  FALSE with their evidence in another file of the project (reason "
            f"`{CROSS_FILE} ...`): {len(cross)} of {total.findings} findings "
            f"({100.0 * len(cross) / total.findings:.1f}%; issue 27's goal: at most "
            f"{CROSS_FILE_GOAL:g}%)")
    by_rule = review.by_rule()
    for code, n in sorted(review.gpu_only_by_rule().items()):
        share = 100.0 * n / by_rule[code].findings if by_rule[code].findings else 0.0
        say(f"  {code}: {n} of {by_rule[code].findings} findings ({share:.1f}%) are TRUE but "
            f"GPU-only by design (reason `gpu-only-...`; issue 28's goal: at most 20% for TDL002)")

    say()
    say(f"NEW findings without a verdict ({len(review.new)}): review them and add a row "
        f"(location, code, TRUE/FALSE, reason) to {verdicts_dir}/<repository>.tsv")
    for name, finding in review.new:
        say(f"  {name}: {finding.location}\t{finding.code}\t{_short(finding.message)}")

    say()
    if review.lost_true:
        say("!" * 78)
        say(f"!!! LOST TRUE findings ({len(review.lost_true)}): real bugs torchdevlint no longer "
            f"reports (RECALL LOSS)")
        for name, verdict in review.lost_true:
            say(f"!!!   {name}: {verdict.location}\t{verdict.code}\t{verdict.reason}  "
                f"[{verdict.source}]")
        say("!!! If the finding only moved, update the location in the verdicts file.")
        say("!" * 78)
    else:
        say("LOST TRUE findings (0)")
    if review.by_intent:
        say(f"TRUE findings silenced by their project's intent ({len(review.by_intent)}): "
            "a GPU-only project (no CPU path in any file) or program (its own code says so) "
            "reports no TDL002")
        for name, verdict in review.by_intent:
            say(f"  {name}: {verdict.location}\t{verdict.code}")

    say()
    say(f"GONE FALSE findings: fixed false positives ({len(review.gone_false)}); their rows may "
        f"stay, to recognise the false positive should it return")
    for name, verdict in review.gone_false:
        say(f"  {name}: {verdict.location}\t{verdict.code}\t{verdict.reason}  [{verdict.source}]")

    say()
    say(f"FALSE findings still reported ({len(review.still_false)})")
    for name, finding, verdict in review.still_false:
        say(f"  {name}: {finding.location}\t{finding.code}\t{verdict.reason}")

    diagnostics = [(r.corpus.name, d) for r in review.linted for d in r.diagnostics]
    say()
    say(f"Diagnostics: files not analysed, not counted as findings ({len(diagnostics)})")
    for name, finding in diagnostics:
        say(f"  {name}: {finding.location}\t{finding.code}\t{_short(finding.message)}")

    if review.problems:
        say()
        say(f"Problems in the verdict files ({len(review.problems)})")
        for problem in review.problems:
            say(f"  {problem}")


# --- the Markdown page ----------------------------------------------------------------------

def _md(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: List[Sequence[object]], numeric_from: int) -> List[str]:
    align = ["---:" if i >= numeric_from else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return lines


def _source_link(corpus: Corpus, finding: Finding) -> str:
    code = f"`{finding.location}`"
    if not corpus.github:
        return code
    anchor = f"#L{finding.line}" if finding.cell is None else ""
    return f"[{code}]({corpus.github}/blob/{corpus.commit}/{quote(finding.path)}{anchor})"


def markdown_page(review: Review, rule_names: Dict[str, str], version: str,
                  max_false_rate: float, data_dir: Path, page: Path,
                  chosen_set: str = "all") -> str:
    data = display(data_dir, REPO)
    page_rel = display(page, REPO)
    out: List[str] = [
        "# Precision review",
        "",
        "<!-- Generated by benchmarks/precision.py; do not edit. -->",
        f"> This page is generated by `python benchmarks/precision.py --write-table {page_rel}`."
        " Do not edit it by hand: edit the verdicts and run the script again.",
        "",
        "torchdevlint is meant to be quiet on correct code. To measure that, every finding it",
        "reports on the public repositories below, each pinned at a commit, was read by a person",
        "and given a verdict: **TRUE** (a real device bug, or exactly what the rule means to",
        "report) or **FALSE** (a false positive), with a one-line reason. The verdicts are data in",
        f"`{data}/verdicts/<repository>.tsv` (location, rule, verdict, reason; no code from the",
        f"repositories), the corpora are listed in `{data}/corpora.tsv`.",
        "`benchmarks/precision.py` re-lints the corpora with `torchdevlint --isolated --no-cache`",
        "and compares the findings with the verdicts: new findings need a review, a TRUE finding",
        "that is no longer reported is a recall loss, a FALSE one that is gone is a fixed false",
        "positive. It fails (exit 1) when a rule's false rate among its reviewed findings is above",
        f"{max_false_rate:g}%, when a finding has no verdict or when a TRUE finding was lost.",
        "",
        "## Re-running the review",
        "",
        "```sh",
        "# once: clone every repository at its pinned commit (or see the git commands it prints)",
        "python benchmarks/precision.py --corpora ~/precision-corpora --clone --report-only",
        "# compare the findings with the verdicts (exit 1 on a regression)",
        "python benchmarks/precision.py --corpora ~/precision-corpora",
        "# regenerate this page",
        f"python benchmarks/precision.py --corpora ~/precision-corpora --write-table {page_rel}",
        "```",
        "",
        f"Last generated with {version}.",
        "",
    ]
    if chosen_set != "all":
        out += [f"Only the corpora of the **{chosen_set} set** of `{data}/split.tsv` "
                f"(`--set {chosen_set}`; `benchmarks/split.py` made the split).", ""]
    reasons = gate(review, max_false_rate)
    out += ["**Gate: " + ("passes.**" if not reasons else "fails:** " + "; ".join(reasons) + "."),
            ""]

    out += ["## Corpora", ""]
    rows = []
    for result in review.results:
        c = result.corpus
        name = f"[{c.name}]({c.github or c.repository})"
        commit = f"`{c.commit[:12]}`"
        if c.github:
            commit = f"[{commit}]({c.github}/tree/{c.commit})"
        if result.status == "ok":
            python = result.files[".py"] + result.files[".pyi"]
            files = f"{python} py, {result.files['.ipynb']} ipynb"
        else:
            files = f"not linted ({result.status})"
        rows.append((name, commit, c.kind or "-", files))
    out += _md_table(("Repository", "Commit", "Kind", "Files"), rows, 99)
    out.append("")

    out += ["## Per rule", ""]
    rows = []
    total = Counts()
    for code, counts in sorted(review.by_rule().items()):
        total.add(counts)
        rows.append((f"{code} {rule_names.get(code, '')}".strip(), counts.findings,
                     counts.reviewed, counts.true, counts.false, counts.unreviewed, _rate(counts)))
    rows.append(("**all**", total.findings, total.reviewed, total.true, total.false,
                 total.unreviewed, _rate(total)))
    out += _md_table(("Rule", "Findings", "Reviewed", "True", "False", "Unreviewed", "False %"),
                     rows, 1)
    out += ["", "False %: FALSE verdicts among the reviewed findings still reported.", ""]
    if chosen_set == "all" and (data_dir / "split.tsv").is_file():
        out += _per_set_tables(review, rule_names, data_dir)

    out += ["## Per repository", ""]
    codes = sorted(review.by_rule())
    rows = []
    by_corpus = review.by_corpus()
    for result in review.linted:
        name = result.corpus.name
        counts = by_corpus.get(name, Counts())
        per_rule = [review.counts.get((name, code), Counts()).findings for code in codes]
        rows.append((name, counts.findings, *per_rule, counts.reviewed, counts.true,
                     counts.false, counts.unreviewed, len(result.diagnostics)))
    out += _md_table(("Repository", "Findings", *codes, "Reviewed", "True", "False",
                      "Unreviewed", "Not analysed"), rows, 1)
    out += ["", "Not analysed: files torchdevlint could not parse (E999/E902/TDL999 "
                "diagnostics), not counted as findings.", ""]

    out += [f"## Remaining false positives ({len(review.still_false)})", ""]
    if review.still_false:
        corpora = {r.corpus.name: r.corpus for r in review.results}
        rows = [(name, _source_link(corpora[name], finding), finding.code, verdict.reason)
                for name, finding, verdict in review.still_false]
        out += _md_table(("Repository", "Location", "Rule", "Reason"), rows, 99)
    else:
        out.append("None.")
    out.append("")

    if review.new or review.lost_true:
        out += ["## Open items", ""]
        if review.new:
            out.append(f"- {len(review.new)} finding(s) have no verdict yet.")
        if review.lost_true:
            out.append(f"- {len(review.lost_true)} TRUE finding(s) are no longer reported.")
        out.append("")
    return "\n".join(out)


def _per_set_tables(review: Review, rule_names: Dict[str, str], data_dir: Path) -> List[str]:
    """The per-rule table of each set of split.tsv apart (issue 28: the tuning set's figure
    is one the rules were tuned to; the test set's, judged once, is the honest one)."""
    split = read_split(data_dir)
    judged = {}
    path = data_dir / "judged.tsv"
    if path.is_file():
        judged = {row[0]: row[1:] for _, row in _rows(path, JUDGED_HEADER)}
    out: List[str] = []
    for name in SPLIT_SETS:
        by_rule: Dict[str, Counts] = {}
        for (corpus, code), counts in review.counts.items():
            if split.get(corpus) == name:
                by_rule.setdefault(code, Counts()).add(counts)
        if not by_rule:
            continue
        corpora = sum(1 for r in review.linted if split.get(r.corpus.name) == name)
        out += [f"### The {name} set ({corpora} repositories)", ""]
        if name in judged:
            commit, date, reviewers = judged[name]
            out += [f"Judged once, on {date}, with the torchdevlint of `{commit[:10]}` ("
                    f"{reviewers}); the table counts the findings of the torchdevlint that made "
                    "this page against those verdicts (`judged.tsv`).", ""]
        rows = []
        total = Counts()
        for code, counts in sorted(by_rule.items()):
            total.add(counts)
            rows.append((f"{code} {rule_names.get(code, '')}".strip(), counts.findings,
                         counts.reviewed, counts.true, counts.false, counts.unreviewed,
                         _rate(counts)))
        rows.append(("**all**", total.findings, total.reviewed, total.true, total.false,
                     total.unreviewed, _rate(total)))
        out += _md_table(("Rule", "Findings", "Reviewed", "True", "False", "Unreviewed",
                          "False %"), rows, 1)
        out.append("")
    return out


# --- main -----------------------------------------------------------------------------------

def opt_in_rules_of(command: List[str]) -> List[str]:
    """Codes that ``--list-rules`` marks opt-in: off unless selected by their exact code."""
    try:
        done = subprocess.run([*command, "--list-rules"], capture_output=True, text=True,
                              cwd=tempfile.gettempdir(), env=_linter_env(), timeout=300)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split()[0] for line in done.stdout.splitlines()
            if len(line.split()) > 2 and line.split()[2] == "opt-in"]


def rule_names_of(command: List[str]) -> Dict[str, str]:
    try:
        done = subprocess.run([*command, "--list-rules"], capture_output=True, text=True,
                              cwd=tempfile.gettempdir(), env=_linter_env(), timeout=300)
    except (OSError, subprocess.SubprocessError):
        return {}
    names = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and re.fullmatch(r"[A-Z]+[0-9]+", parts[0]):
            names[parts[0]] = parts[1]
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="precision.py",
        description="Re-lint the pinned corpora and compare the findings with the "
                    "hand-written verdicts (the precision review).")
    parser.add_argument("--corpora", type=Path, default=os.environ.get("TORCHDEVLINT_CORPORA"),
                        help="folder holding one checkout per corpus, named as in corpora.tsv "
                             "(default: $TORCHDEVLINT_CORPORA)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA,
                        help="folder with corpora.tsv and verdicts/ (default: %(default)s)")
    parser.add_argument("--clone", action="store_true",
                        help="git clone missing corpora into --corpora and check out their commit")
    parser.add_argument("--only", nargs="+", metavar="NAME", default=None,
                        help="review only these corpora (names from corpora.tsv)")
    parser.add_argument("--set", choices=("all", *SPLIT_SETS), default="tuning",
                        help="only the corpora of this set of split.tsv: the tuning set or the "
                             "sealed test set (linted only when named), reported apart; `all` "
                             "ignores split.tsv (default: %(default)s)")
    parser.add_argument("--extend-select", action="append", default=[], metavar="CODES",
                        help="also run these rules (opt-in ones, e.g. TDL009); their verdicts "
                             "count only in such a run")
    parser.add_argument("--jobs", "-j", type=int, default=min(4, os.cpu_count() or 1),
                        help="corpora linted at once (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds one corpus may take (default: %(default)s)")
    parser.add_argument("--max-false-rate", type=float, default=5.0, metavar="PERCENT",
                        help="the most FALSE findings a rule may have among its reviewed ones "
                             "(default: %(default)s)")
    parser.add_argument("--report-only", action="store_true",
                        help="exit 0 whatever the comparison shows")
    parser.add_argument("--write-table", type=Path, metavar="PAGE",
                        help="write the Markdown review page (docs/precision.md) here")
    parser.add_argument("--json", type=Path, metavar="FILE", dest="json_out",
                        help="also write the comparison as JSON to this file")
    return parser


def review_json(review: Review, reasons: List[str]) -> dict:
    def finding(f: Finding) -> dict:
        return {"location": f.location, "code": f.code, "message": f.message}

    def verdict(v: Verdict) -> dict:
        return {"location": v.location, "code": v.code, "verdict": "TRUE" if v.true else "FALSE",
                "reason": v.reason}

    return {
        "passed": not reasons,
        "failures": reasons,
        "corpora": {r.corpus.name: {"status": r.status, "detail": r.detail,
                                    "unmarked": r.unmarked,
                                    "findings": len(r.findings),
                                    "diagnostics": [finding(d) for d in r.diagnostics]}
                    for r in review.results},
        "rules": {code: {"findings": c.findings, "reviewed": c.reviewed, "true": c.true,
                         "false": c.false, "unreviewed": c.unreviewed,
                         "false_rate": c.false_rate}
                  for code, c in sorted(review.by_rule().items())},
        "new": [{"corpus": n, **finding(f)} for n, f in review.new],
        "lost_true": [{"corpus": n, **verdict(v)} for n, v in review.lost_true],
        "by_intent": [{"corpus": n, **verdict(v)} for n, v in review.by_intent],
        "gpu_only": {code: {"findings": review.by_rule()[code].findings,
                            "gpu_only_by_design": n}
                     for code, n in sorted(review.gpu_only_by_rule().items())},
        "gone_false": [{"corpus": n, **verdict(v)} for n, v in review.gone_false],
        "still_false": [{"corpus": n, **verdict(v)} for n, _f, v in review.still_false],
        # FALSE findings still reported whose evidence is in another file (``CROSS_FILE``)
        "cross_file_false": sum(v.reason.startswith(CROSS_FILE) for _n, _f, v in review.still_false),
        "problems": review.problems,
    }


def run(args: argparse.Namespace) -> int:
    if args.corpora is None:
        raise DataError("name the folder of corpus checkouts with --corpora DIR "
                        "(or set TORCHDEVLINT_CORPORA)")
    data_dir = args.data_dir.resolve()
    corpora = read_corpora(data_dir)
    if args.only:
        unknown = sorted(set(args.only) - {c.name for c in corpora})
        if unknown:
            raise DataError(f"not in corpora.tsv: {', '.join(unknown)}")
        corpora = [c for c in corpora if c.name in args.only]
    chosen = select_set(corpora, data_dir, args.set)
    if args.only and len(chosen) < len(corpora):
        outside = sorted({c.name for c in corpora} - {c.name for c in chosen})
        raise DataError(f"not in the {args.set} set of split.tsv: {', '.join(outside)} "
                        f"(name the set with --set)")
    corpora = chosen
    listed = {c.name for c in read_corpora(data_dir)}
    verdict_dir = data_dir / "verdicts"
    if verdict_dir.is_dir():
        for path in sorted(verdict_dir.glob("*.tsv")):
            if path.stem not in listed:
                print(f"warning: {display(path)} belongs to no corpus in corpora.tsv; ignored",
                      file=sys.stderr)

    command, version = find_linter()
    rule_names = rule_names_of(command)
    extend_select = [code.strip() for value in args.extend_select for code in value.split(",")
                     if code.strip()]
    # Opt-in rules run only when named: their verdicts count only then.
    skipped = set(opt_in_rules_of(command)) - set(extend_select)
    rule_names = {code: name for code, name in rule_names.items() if code not in skipped}
    directory = args.corpora.expanduser().resolve()
    results: Dict[str, CorpusResult] = {}
    todo: List[Tuple[Corpus, Path]] = []
    for corpus in corpora:
        checkout = directory / corpus.name
        if not checkout.is_dir() and args.clone:
            print(f"cloning {corpus.repository} at {corpus.commit[:12]} ...", file=sys.stderr)
            error = clone(corpus, directory)
            if error:
                print(f"warning: {corpus.name}: clone failed: {error}", file=sys.stderr)
                results[corpus.name] = CorpusResult(corpus, "missing", f"clone failed: {error}")
                continue
        if not checkout.is_dir():
            print(f"warning: {corpus.name}: no checkout at {checkout}; skipped. Get it with:\n"
                  f"  {corpus.clone_command(directory)}\n  (or run with --clone)",
                  file=sys.stderr)
            results[corpus.name] = CorpusResult(corpus, "missing", "no checkout")
            continue
        if unmarked(checkout):
            print(f"warning: {corpus.name}: {checkout} has no .git (nor pyproject.toml, "
                  f"setup.py, setup.cfg): torchdevlint sees no project there, unlike in a "
                  f"clone. Mark it with:\n  mkdir {checkout / '.git'}", file=sys.stderr)
        todo.append((corpus, checkout))

    jobs = max(1, args.jobs)
    linter_jobs = max(1, (os.cpu_count() or 1) // min(jobs, max(1, len(todo))))
    # The biggest corpora first, so that a small one never holds the last slot alone.
    todo.sort(key=lambda item: -sum(count_files(item[1]).values()))
    print(f"linting {len(todo)} corpora with {version} ({' '.join(command)}), {jobs} at a time",
          file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(lint_corpus, command, corpus, checkout, linter_jobs, args.timeout,
                               extend_select): corpus for corpus, checkout in todo}
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            results[result.corpus.name] = result
            state = (f"{len(result.findings)} findings, {len(result.diagnostics)} diagnostics"
                     if result.status == "ok" else f"FAILED: {result.detail}")
            print(f"  {result.corpus.name}: {state}"
                  + (f" ({result.detail})" if result.status == "ok" and result.detail else ""),
                  file=sys.stderr)

    ordered = [results[c.name] for c in corpora]
    rules = sorted(code for code in rule_names if code not in DIAGNOSTIC_CODES)
    review = compare(ordered, data_dir, rules)
    scope = "" if args.set == "all" else f" ({args.set} set)"
    print(f"Precision review{scope}: {version}, {len(review.linted)} of {len(ordered)} corpora "
          f"linted, "
          f"verdicts from {display(verdict_dir)}")
    print()
    print_report(review, rule_names, args.max_false_rate, data_dir)
    for result in ordered:
        if result.status != "ok":
            print(f"\nNot linted: {result.corpus.name} ({result.status}: {result.detail})")

    reasons = gate(review, args.max_false_rate)
    print()
    if reasons:
        print("FAIL: " + "\n      ".join(reasons))
    else:
        print("PASS: every rule is within the false-rate limit, every finding is reviewed and "
              "no TRUE finding was lost")

    if args.write_table:
        page = args.write_table
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(markdown_page(review, rule_names, version, args.max_false_rate,
                                      data_dir, page.resolve(), args.set) + "\n",
                        encoding="utf-8")
        print(f"wrote {display(page)}", file=sys.stderr)
    if args.json_out:
        args.json_out.write_text(json.dumps({"set": args.set, **review_json(review, reasons)},
                                            indent=2) + "\n",
                                 encoding="utf-8")
    if args.report_only:
        return EXIT_PASS
    return EXIT_FAIL if reasons else EXIT_PASS


def script_main(parser: argparse.ArgumentParser, run_args, argv: Optional[Sequence[str]]) -> int:
    """Parse ``argv`` and run; a DataError is one diagnostic and exit 2 (the benchmarks' main)."""
    args = parser.parse_args(argv)
    try:
        return run_args(args)
    except DataError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def finish(reasons: List[str], passed: str, args: argparse.Namespace, version: str,
           rules: dict, cases: list) -> int:
    """The end of a recall benchmark's run (history.py, heldout.py): the verdict line, the JSON
    file of ``--json`` (the version, the verdict, ``rules`` and ``cases``) and the exit status
    (0 with ``--report-only``)."""
    print()
    print("FAIL: " + "\n      ".join(reasons) if reasons else f"PASS: {passed}")
    if args.json_out:
        args.json_out.write_text(json.dumps({"version": version, "passed": not reasons,
                                             "failures": reasons, "rules": rules,
                                             "cases": cases}, indent=2) + "\n", encoding="utf-8")
    if args.report_only:
        return EXIT_PASS
    return EXIT_FAIL if reasons else EXIT_PASS


def main(argv: Optional[Sequence[str]] = None) -> int:
    return script_main(build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
