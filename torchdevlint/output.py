"""Writing results: findings, file diagnostics and the summary, in every output format.

Formats (``--output-format``): ``concise`` (the default; ``text`` is its old name:
``path:line:col: CODE [*] message`` and a summary, see ``torchdevlint.render``), ``full`` (the
same with the source excerpt and the fix's diff), ``json`` (a list of objects, see
:func:`finding_record`), ``sarif`` (SARIF 2.1.0 for code scanning), ``github`` (GitHub Actions
workflow annotations), ``gitlab`` (GitLab Code Quality) and ``junit`` (JUnit XML).
``--statistics`` replaces the findings with a count per code (concise or json). Every format
carries the file diagnostics (E999, E902, TDL999) as well as the rule findings.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO
from urllib.parse import quote

from torchdevlint import __version__
from torchdevlint.docs import PROJECT_URL, rule_doc, rule_url
from torchdevlint.findings import PARSER_ERROR, READ_ERROR, SYNTAX_ERROR, ExitCode, Finding
from torchdevlint.rules.registry import ALL_RULES, OPT_IN_CODES, RULES_BY_CODE

FORMATS = ("concise", "full", "json", "sarif", "github", "gitlab", "junit", "text")
FORMAT_ALIASES = {"text": "concise"}  # the name before ruff's concise / full
TEXT_FORMATS = ("concise", "full")  # what a person reads: colour, progress, fix report


def canonical_format(name: str) -> str:
    return FORMAT_ALIASES.get(name, name)

# The file diagnostics, described like rules so that every format can name them.
DIAGNOSTICS: Dict[str, tuple] = {
    SYNTAX_ERROR: ("syntax-error", "The file is not valid Python; it was not analysed"),
    READ_ERROR: ("io-error", "The file could not be read or decoded; it was not analysed"),
    PARSER_ERROR: ("parser-error", "LibCST could not parse or torchdevlint could not analyse the file"),
}


def rule_name(code: str) -> Optional[str]:
    rule = RULES_BY_CODE.get(code)
    return rule.name if rule else DIAGNOSTICS.get(code, (None,))[0]


def fix_safety(finding: Finding) -> Optional[str]:
    """``"safe"``, ``"unsafe"`` or None (no fix) for a finding, from the ``Fix`` its rule's plan
    built (``engine.attach_fixes``)."""
    fix = finding.available_fix
    if fix is None:
        return None
    return "safe" if fix.safe else "unsafe"


def fix_applicable(finding: Finding) -> bool:
    """Whether plain ``--fix`` applies the finding's fix (an unsafe fix only with
    unsafe-fixes): what ``[*]`` and ``"fix_available"`` say, as in ruff."""
    return finding.available_fix is not None and finding.available_fix.applicable


def fix_record(finding: Finding) -> Optional[Dict[str, Any]]:
    """The finding's fix as ruff's JSON writes it: applicability, message and edits (rows and
    character columns, 1-based; in a notebook they count in the edit's ``cell``)."""
    fix = finding.available_fix
    if fix is None:
        return None
    return {
        "applicability": fix_safety(finding),
        "message": fix.description,
        "edits": [{"content": edit.content,
                   "location": {"row": edit.row, "column": edit.column},
                   "end_location": {"row": edit.end_row, "column": edit.end_column},
                   "cell": edit.cell} for edit in fix.located],
    }


def finding_record(finding: Finding) -> Dict[str, Any]:
    """One finding as the JSON output writes it."""
    safety = fix_safety(finding)
    return {
        "path": finding.path,
        "cell": finding.cell,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line or finding.line,
        "end_column": finding.end_column or finding.column,
        "code": finding.code,
        "name": rule_name(finding.code),
        "message": finding.message,
        "url": rule_url(finding.code) if finding.code in RULES_BY_CODE else None,
        "fix_available": fix_applicable(finding),
        "fix_safety": safety,
        "fix": fix_record(finding),
    }


def summary(findings: List[Finding], errors: List[Finding], files: int) -> str:
    plural = lambda n, word: f"{n} {word}{'s' if n != 1 else ''}"  # noqa: E731
    if not findings and not errors:
        return f"All checks passed! ({plural(files, 'file')} checked)"
    parts = []
    if findings:
        counts: dict = {}
        for finding in findings:
            counts[finding.code] = counts.get(finding.code, 0) + 1
        detail = ", ".join(f"{code}: {n}" for code, n in sorted(counts.items()))
        parts.append(f"Found {plural(len(findings), 'finding')} ({detail})")
    if errors:
        parts.append(f"{plural(len(errors), 'file')} could not be analysed")
    return "; ".join(parts) + f" in {plural(files, 'file')} checked."


class Reporter:
    """Gets each file's results as they arrive, then everything at the end."""

    def __init__(self, stream: TextIO, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet

    def file_done(self, findings: List[Finding], errors: Sequence[Finding]) -> None:
        pass

    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        pass


class RunReport:
    """The one report loop of a run, lint or fix: each file's findings and errors go to the
    reporter as they arrive and into the totals, from which come the summary and the exit
    code. ``progress`` (a terminal's counter) is cleared before anything is printed."""

    def __init__(self, reporter: Reporter, files: int, progress=None) -> None:
        self.reporter = reporter
        self.files = files
        self.progress = progress
        self.findings: List[Finding] = []
        self.errors: List[Finding] = []
        self.internal = False  # torchdevlint itself failed on a file

    def file_done(self, findings: List[Finding], errors: Sequence[Finding], internal: bool = False,
                  show: bool = True) -> None:
        """One file's results; ``show=False`` counts them without reporting them (``--diff``
        prints a patch instead)."""
        if show:
            if self.progress is not None and (findings or errors):
                self.progress.clear()
            self.reporter.file_done(findings, errors)
            if self.progress is not None:
                self.progress.advance(len(findings))
        self.findings.extend(findings)
        self.errors.extend(errors)
        self.internal = self.internal or internal

    def finish(self) -> None:
        if self.progress is not None:
            self.progress.clear()
        self.reporter.finish(self.findings, self.errors, self.files)

    def exit_code(self, exit_zero: bool, changed: bool = False) -> ExitCode:
        """What the run ends with: something to report (or, with ``changed``, a patch to
        apply) is ``ExitCode.FINDINGS``, a failure of torchdevlint ``ExitCode.ERROR``."""
        return ExitCode.of_run(bool(self.findings or self.errors or changed), self.internal,
                               exit_zero)


class TextReporter(Reporter):
    """``path:line:col: CODE [*] message`` per finding as results arrive (with ``full``, the
    source excerpt and the fix's diff below each), then a summary and what ``--fix`` would fix.
    ``colour``: None decides by the stream and the environment (``render.colour_enabled``);
    ``sources``: contents not on disk (standard input) for ``full``, by the path shown."""

    def __init__(self, stream: TextIO, quiet: bool = False, full: bool = False,
                 colour: Optional[bool] = None, sources: Optional[Dict[str, bytes]] = None) -> None:
        super().__init__(stream, quiet)
        from torchdevlint import render
        self.render = render
        self.style = render.Style(render.colour_enabled(stream) if colour is None else colour)
        self.sources = render.Sources(sources) if full else None

    def file_done(self, findings: List[Finding], errors: Sequence[Finding]) -> None:
        for finding in [*findings, *errors]:
            if self.sources is not None:
                print("\n".join(self.render.full_block(finding, self.sources, self.style)),
                      file=self.stream)
            else:
                print(self.render.concise_line(finding, self.style), file=self.stream)

    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        if not self.quiet:
            print(summary(findings, errors, files), file=self.stream)
            fixes = self.render.fix_summary(findings, self.style)
            if fixes:
                print(fixes, file=self.stream)


def _all_sorted(findings: List[Finding], errors: List[Finding]) -> List[Finding]:
    return sorted([*findings, *errors], key=lambda f: f.sort_key)


class JsonReporter(Reporter):
    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        records = [finding_record(f) for f in _all_sorted(findings, errors)]
        print(json.dumps(records, indent=2, ensure_ascii=False), file=self.stream)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(finding: Finding) -> str:
    """A workflow command that GitHub Actions shows as an error annotation on the file.

    Notebook positions count within a cell, not within the .ipynb file, so they go in the
    message and the annotation is attached to the file as a whole.
    """
    props = [("file", finding.path)]
    message = finding.message
    if finding.cell is None:
        props += [("line", finding.line), ("col", finding.column),
                  ("endLine", finding.end_line or finding.line),
                  ("endColumn", finding.end_column or finding.column)]
    else:
        message = f"cell {finding.cell}, line {finding.line}, column {finding.column}: {message}"
    props.append(("title", finding.code))
    rendered = ",".join(f"{key}={_escape_property(str(value))}" for key, value in props)
    return f"::error {rendered}::{_escape_data(f'{finding.code} {message}')}"


class GithubReporter(Reporter):
    def file_done(self, findings: List[Finding], errors: Sequence[Finding]) -> None:
        for finding in [*findings, *errors]:
            print(github_annotation(finding), file=self.stream)


SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _sarif_rules() -> List[Dict[str, Any]]:
    rules = []
    for rule in ALL_RULES:
        doc = rule_doc(rule.code)
        rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.summary},
            "helpUri": rule_url(rule.code),
            "help": {"text": doc, "markdown": doc},
            # SARIF 2.1.0 reportingDescriptor.defaultConfiguration: opt-in rules are disabled
            "defaultConfiguration": {"level": "error"} if rule.default_enabled
            else {"level": "warning", "enabled": False},
            "properties": {"tags": ["pytorch", "device"] if rule.default_enabled
                           else ["pytorch", "device", "performance", "opt-in"]},
        })
    for code, (name, description) in DIAGNOSTICS.items():
        rules.append({"id": code, "name": name, "shortDescription": {"text": description},
                      "defaultConfiguration": {"level": "error"}})
    return rules


def _artifact_location(path: str, base: Path) -> Dict[str, str]:
    """A URI relative to %SRCROOT% (the current directory) when the file is below it."""
    full = Path(os.path.abspath(path))
    try:
        relative = full.relative_to(base)
    except ValueError:
        return {"uri": full.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": SRCROOT}


def sarif_log(findings: List[Finding], base: Optional[Path] = None) -> Dict[str, Any]:
    base = Path(os.path.abspath(base or Path.cwd()))
    rules = _sarif_rules()
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    results = []
    for finding in findings:
        region: Dict[str, Any] = {
            "startLine": finding.line, "startColumn": finding.column,
            "endLine": finding.end_line or finding.line,
            "endColumn": finding.end_column or finding.column,
        }
        if finding.cell is not None:
            region["properties"] = {"cell": finding.cell}
        result: Dict[str, Any] = {
            "ruleId": finding.code,
            "level": "warning" if finding.code in OPT_IN_CODES else "error",
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": _artifact_location(finding.path, base),
                "region": region,
            }}],
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        if finding.cell is not None:
            result["properties"] = {"cell": finding.cell}
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "torchdevlint", "version": __version__,
                                "informationUri": PROJECT_URL, "rules": rules}},
            "originalUriBaseIds": {SRCROOT: {"uri": base.as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


class SarifReporter(Reporter):
    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        print(json.dumps(sarif_log(_all_sorted(findings, errors)), indent=2, ensure_ascii=False),
              file=self.stream)


def statistics(findings: List[Finding], errors: List[Finding]) -> List[Dict[str, Any]]:
    """Count per code, most frequent first."""
    counts: Dict[str, int] = {}
    fixable: Dict[str, bool] = {}
    for finding in [*findings, *errors]:
        counts[finding.code] = counts.get(finding.code, 0) + 1
        fixable[finding.code] = fixable.get(finding.code, False) or fix_applicable(finding)
    return [{"code": code, "name": rule_name(code), "count": count, "fixable": fixable[code]}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


class StatisticsReporter(TextReporter):
    """``--statistics``, as ruff prints it: one line per code (``count  code  [*] name``;
    ``[*]`` fixable, ``[ ]`` not, where any is), then the text summary (the total, and what
    ``--fix`` would fix) unless quiet; json: the rows only."""

    def __init__(self, stream: TextIO, quiet: bool = False, as_json: bool = False) -> None:
        super().__init__(stream, quiet)
        self.as_json = as_json

    def file_done(self, findings: List[Finding], errors: Sequence[Finding]) -> None:
        pass  # counted at the end

    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        rows = statistics(findings, errors)
        if self.as_json:
            print(json.dumps(rows, indent=2), file=self.stream)
            return
        width = max((len(str(row["count"])) for row in rows), default=1)
        code_width = max((len(row["code"]) for row in rows), default=1)
        any_fixable = any(row["fixable"] for row in rows)
        for row in rows:
            marker = ("[*] " if row["fixable"] else "[ ] ") if any_fixable else ""
            print(f"{row['count']:>{width}}\t{row['code']:<{code_width}}\t{marker}"
                  f"{row['name'] or ''}", file=self.stream)
        super().finish(findings, errors, files)


def gitlab_report(findings: List[Finding], project_dir: Optional[str] = None) -> List[Dict[str, Any]]:
    """GitLab Code Quality issues (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format).

    Paths are relative to ``project_dir`` (GitLab's ``CI_PROJECT_DIR``, else the current
    directory), without ``./``. The fingerprint hashes the code, path, message and the text of
    the finding's line, not its line number, so that an issue keeps its fingerprint when code
    above it moves (GitLab compares the fingerprints of two pipelines); identical findings get
    ``#2``, ``#3``... in the hash to stay unique.
    """
    import hashlib
    base = Path(os.path.abspath(project_dir or os.environ.get("CI_PROJECT_DIR") or os.getcwd()))
    sources = None
    seen: Dict[str, int] = {}
    issues = []
    for finding in findings:
        if sources is None:
            from torchdevlint.render import Sources
            sources = Sources()
        full = Path(os.path.abspath(finding.path))
        try:
            path = full.relative_to(base).as_posix()
        except ValueError:
            path = full.as_posix()
        where = (f"cell {finding.cell}, line {finding.line}, column {finding.column}: "
                 if finding.cell is not None else "")
        identity = "\0".join([finding.code, path, str(finding.cell), finding.message,
                              _line_text(finding, sources)])
        seen[identity] = seen.get(identity, 0) + 1
        if seen[identity] > 1:
            identity += f"\0#{seen[identity]}"
        issues.append({
            "type": "issue",
            "check_name": finding.code,
            # GitLab's widget does not show check_name: the code leads the description
            "description": f"{finding.code}: {where}{finding.message}",
            "categories": ["Performance"] if finding.code in OPT_IN_CODES else ["Bug Risk"],
            "severity": "minor" if finding.code in OPT_IN_CODES else "major",
            "fingerprint": hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest(),
            "location": {"path": path, "positions": _gitlab_positions(finding)},
        })
    return issues


def _gitlab_positions(finding: Finding) -> Dict[str, Any]:
    if finding.cell is not None:
        # A cell's lines are not lines of the .ipynb file GitLab shows: the file's first line,
        # with the place in the description (as ruff does, and the github format).
        return {"begin": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}
    return {"begin": {"line": finding.line, "column": finding.column},
            "end": {"line": finding.end_line or finding.line,
                    "column": finding.end_column or finding.column}}


def _line_text(finding: Finding, sources) -> str:
    """The stripped text of the finding's line, for a fingerprint that survives line moves."""
    from torchdevlint.render import split_lines
    text = sources.text(finding.path, finding.cell)
    if text is None:
        return ""
    lines = split_lines(text)
    return lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""


class GitlabReporter(Reporter):
    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        print(json.dumps(gitlab_report(_all_sorted(findings, errors)), indent=2,
                         ensure_ascii=False), file=self.stream)


def junit_report(findings: List[Finding]) -> str:
    """JUnit XML, as ruff writes it: a test suite per file, a failed test case per finding
    (``errors`` for files that could not be analysed), one passing case when all is clean."""
    from xml.etree import ElementTree as ET
    root = ET.Element("testsuites", name="torchdevlint")
    by_path: Dict[str, List[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    if not by_path:
        suite = ET.SubElement(root, "testsuite", name="torchdevlint", tests="1", failures="0",
                              errors="0", skipped="0", time="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="torchdevlint",
                      time="0")
    for path, found in by_path.items():
        diagnostics = sum(f.code in DIAGNOSTICS for f in found)
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(found)),
                              failures=str(len(found) - diagnostics), errors=str(diagnostics),
                              skipped="0", time="0")
        classname = os.path.splitext(path)[0]
        for finding in found:
            case = ET.SubElement(suite, "testcase", name=f"torchdevlint.{finding.code}",
                                 classname=classname, file=path, line=str(finding.line),
                                 column=str(finding.column), time="0")
            where = f"cell {finding.cell}, " if finding.cell is not None else ""
            kind = "error" if finding.code in DIAGNOSTICS else "failure"
            outcome = ET.SubElement(case, kind, message=finding.message,
                                    type=rule_name(finding.code) or finding.code)
            outcome.text = f"{where}line {finding.line}, col {finding.column}, {finding.message}"
    for attribute in ("tests", "failures", "errors"):
        root.set(attribute, str(sum(int(suite.get(attribute)) for suite in root)))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


class JunitReporter(Reporter):
    def finish(self, findings: List[Finding], errors: List[Finding], files: int) -> None:
        print(junit_report(_all_sorted(findings, errors)), file=self.stream)


def make_reporter(output_format: str, stream: TextIO, quiet: bool = False,
                  show_statistics: bool = False, colour: Optional[bool] = None,
                  sources: Optional[Dict[str, bytes]] = None) -> Reporter:
    output_format = canonical_format(output_format)
    if show_statistics:
        if output_format not in (*TEXT_FORMATS, "json"):
            raise ValueError("--statistics works with --output-format concise, full or json")
        return StatisticsReporter(stream, quiet, as_json=output_format == "json")
    if output_format in TEXT_FORMATS:
        return TextReporter(stream, quiet, full=output_format == "full", colour=colour,
                            sources=sources)
    return {"json": JsonReporter, "sarif": SarifReporter, "github": GithubReporter,
            "gitlab": GitlabReporter, "junit": JunitReporter}[output_format](stream, quiet)
