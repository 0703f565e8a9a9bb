"""ruff's text formats (concise with colour and ``[*]``, full with the source and the fix's
diff), the edits in the JSON output, and the CI formats gitlab (Code Quality) and junit, end
to end through the command."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from conftest import ROOT

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# TDL001 (safe fix) at 3:1, TDL002 "cuda" (safe fix) at 4:26, TDL002 .cuda() (unsafe fix) at 7:20
SOURCE = ("import torch\nx = torch.ones(2)\nx.to('cpu')\ny = torch.ones(2, device='cuda')\n\n"
          "def f(model, x):\n    return model(x.cuda())\n")
GITLAB_SCHEMA = ROOT / "tests" / "data" / "gitlab-code-quality-schema.json"
NOTEBOOK = ROOT / "tests" / "data" / "training.ipynb"


def cli(*args, cwd, env=None, input=None, stdout=subprocess.PIPE):
    """The command with a clean colour environment plus ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-m", "torchdevlint", *map(str, args)], cwd=cwd,
                          env={**base, **(env or {})}, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, input=input)


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.torchdevlint]\n")
    (tmp_path / "m.py").write_text(SOURCE)
    return tmp_path


def lines_of(stdout: str) -> dict:
    """The lines of m.py's findings, by line number."""
    return {int(m.group(1)): m.group(0) for m in re.finditer(r"^m\.py:(\d+):\d+: .*$", stdout, re.M)}


# -- colour ----------------------------------------------------------------------------------


def test_force_color_colours_a_pipe_and_no_color_wins(project):
    plain = cli("m.py", cwd=project)
    assert not ANSI.search(plain.stdout)  # a pipe: no colour
    forced = cli("m.py", cwd=project, env={"FORCE_COLOR": "1"})
    assert "\x1b[1mm.py\x1b[0m\x1b[36m:\x1b[0m3" in forced.stdout  # path bold, ':' cyan
    assert "\x1b[31;1mTDL001\x1b[0m \x1b[36m[*]\x1b[0m" in forced.stdout  # code red, [*] cyan
    assert ANSI.sub("", forced.stdout) == plain.stdout  # colour is all that changes
    both = cli("m.py", cwd=project, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert both.stdout == plain.stdout
    empty = cli("m.py", cwd=project, env={"FORCE_COLOR": ""})  # empty: as if unset
    assert empty.stdout == plain.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("env, coloured", [({}, True), ({"NO_COLOR": "1"}, False),
                                           ({"NO_COLOR": ""}, True)])
def test_a_terminal_gets_colour_unless_no_color(project, env, coloured):
    import pty
    leader, follower = pty.openpty()
    try:
        result = cli("m.py", cwd=project, env={**env, "TERM": "xterm"}, stdout=follower)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    output = b"".join(chunks).decode()
    assert result.returncode == 1 and "TDL001" in output
    assert bool(ANSI.search(output)) is coloured


def test_output_file_is_never_coloured_unless_forced(project):
    cli("m.py", "--output-file", "report.txt", cwd=project)
    assert "TDL001" in (project / "report.txt").read_text() and \
        not ANSI.search((project / "report.txt").read_text())
    cli("m.py", "--output-file", "report.txt", cwd=project, env={"FORCE_COLOR": "1"})
    assert ANSI.search((project / "report.txt").read_text())


# -- [*] and the fixable summary -------------------------------------------------------------


def test_star_marks_only_findings_plain_fix_fixes(project):
    out = cli("m.py", cwd=project).stdout
    found = lines_of(out)
    assert found[3].startswith("m.py:3:1: TDL001 [*] result of `x.to()`")
    assert found[4].startswith("m.py:4:26: TDL002 [*] hard-coded CUDA device")
    assert found[7].startswith("m.py:7:20: TDL002 `.cuda()`")  # unsafe fix: no [*]
    assert out.splitlines()[-1] == ("[*] 2 fixable with the `--fix` option (1 hidden fix can be "
                                    "enabled with the `--unsafe-fixes` option).")
    unsafe = cli("m.py", "--unsafe-fixes", cwd=project).stdout
    assert lines_of(unsafe)[7].startswith("m.py:7:20: TDL002 [*] `.cuda()`")
    assert unsafe.splitlines()[-1] == "[*] 3 fixable with the `--fix` option."
    quiet = cli("m.py", "--quiet", cwd=project).stdout
    assert "fixable" not in quiet and len(quiet.splitlines()) == 3


def test_no_star_where_the_configuration_makes_the_code_unfixable(project):
    cli("m.py", cwd=project)  # warm the cache: it must not keep the fixability of this run
    out = cli("m.py", "--unfixable", "TDL001", cwd=project).stdout
    assert lines_of(out)[3].startswith("m.py:3:1: TDL001 result of")
    assert lines_of(out)[4].startswith("m.py:4:26: TDL002 [*]")
    assert out.splitlines()[-1].startswith("[*] 1 fixable with the `--fix` option (1 hidden")
    (project / "pyproject.toml").write_text('[tool.torchdevlint]\nfixable = ["TDL001"]\n')
    out = cli("m.py", cwd=project).stdout
    assert lines_of(out)[3].startswith("m.py:3:1: TDL001 [*]")
    assert "[*]" not in lines_of(out)[4] and out.splitlines()[-1] == \
        "[*] 1 fixable with the `--fix` option."
    record = {r["line"]: r for r in json.loads(cli("m.py", "--output-format", "json",
                                                   cwd=project).stdout)}
    assert record[4]["fix"] is None and record[4]["fix_available"] is False


def test_only_unsafe_fixes_say_none_is_available(tmp_path):
    (tmp_path / "m.py").write_text("def f(model, x):\n    return model(x.cuda())\n")
    out = cli("m.py", "--no-cache", cwd=tmp_path).stdout
    assert out.splitlines()[-1] == ("No fixes available (1 hidden fix can be enabled with the "
                                    "`--unsafe-fixes` option).")


def test_a_cached_run_reports_what_a_fresh_one_does(project):
    for fmt in ("concise", "full", "json"):
        fresh = cli("--no-cache", "--output-format", fmt, "m.py", cwd=project).stdout
        cli("--output-format", fmt, "m.py", cwd=project)  # fills the cache
        assert (project / ".torchdevlint_cache").is_dir()
        assert cli("--output-format", fmt, "m.py", cwd=project).stdout == fresh, fmt


def test_text_is_the_old_name_of_concise_the_default(project):
    default = cli("m.py", cwd=project).stdout
    assert cli("--output-format", "text", "m.py", cwd=project).stdout == default
    assert cli("--output-format", "concise", "m.py", cwd=project).stdout == default
    helptext = " ".join(cli("--help", cwd=project).stdout.split())
    for name in ("concise", "full", "gitlab", "junit", "NO_COLOR", "FORCE_COLOR"):
        assert name in helptext


def test_statistics_with_the_text_formats(project):
    for fmt in ("concise", "full"):
        rows = cli("--statistics", "--output-format", fmt, "m.py", cwd=project).stdout.splitlines()
        assert rows[0].split("\t")[1:] == ["TDL002", "[*] hardcoded-cuda-device"]


# -- full ------------------------------------------------------------------------------------


def test_full_shows_the_source_a_caret_under_the_span_and_the_fix_as_a_diff(project):
    out = cli("--output-format", "full", "m.py", cwd=project).stdout
    block = out.split("\n\n")[0:2]
    assert block[0].splitlines() == [
        "m.py:3:1: TDL001 [*] result of `x.to()` is discarded: Tensor.to() returns a new tensor "
        "and leaves `x` where it was; assign it (`x = x.to('cpu')`)",
        "  |",
        "1 | import torch",
        "2 | x = torch.ones(2)",
        "3 | x.to('cpu')",
        "  | ^^^^^^^^^^^ TDL001",
        "4 | y = torch.ones(2, device='cuda')",
        "5 |",
        "  |",
        "  = help: assign the moved tensor back to `x`",
    ]
    assert block[1].splitlines()[0] == "\u2139 Safe fix"
    assert "3   |-x.to('cpu')" in block[1].splitlines()
    assert "  3 |+x = x.to('cpu')" in block[1].splitlines()
    assert "\u2139 Unsafe fix" in out  # the .cuda() fix is shown with its safety
    assert out.endswith("[*] 2 fixable with the `--fix` option (1 hidden fix can be enabled "
                        "with the `--unsafe-fixes` option).\n")


def _width(text: str) -> int:
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def test_full_places_the_caret_after_tabs_and_wide_characters(tmp_path):
    (tmp_path / "m.py").write_text(
        "import torch\n\ndef f():\n\ty = torch.ones(2)\n\tz = '中文é'; y.to('cpu')\n")
    out = cli("--output-format", "full", "m.py", cwd=tmp_path).stdout
    lines = out.splitlines()
    assert lines[0].startswith("m.py:5:13: TDL001 [*]")  # columns count characters
    source = next(line for line in lines if line.startswith("5 | "))
    caret = lines[lines.index(source) + 1]
    assert "\t" not in source and source == "5 |     z = '中文é'; y.to('cpu')"
    body, marks = source[len("5 | "):], caret[len("  | "):]
    start = body.index("y.to")
    assert marks == " " * _width(body[:start]) + "^" * len("y.to('cpu')") + " TDL001"


def test_full_shows_a_notebook_cell(tmp_path):
    notebook = tmp_path / "training.ipynb"
    notebook.write_bytes(NOTEBOOK.read_bytes())
    out = cli("--output-format", "full", "training.ipynb", cwd=tmp_path).stdout
    first = out.split("\n\n")[0].splitlines()
    assert first[0].startswith("training.ipynb:cell 3:1:1: TDL001 [*]")
    assert first[2] == "1 | weights.to(device)  # weights is defined in the cell above"
    assert first[3] == "  | ^^^^^^^^^^^^^^^^^^ TDL001"
    assert "\u2139 Safe fix (cell 3)" in out


def test_full_reads_standard_input(project):
    out = cli("--output-format", "full", "-", "--stdin-filename", "m.py", cwd=project,
              input=SOURCE).stdout
    assert "3 | x.to('cpu')\n  | ^^^^^^^^^^^ TDL001" in out


# -- JSON edits ------------------------------------------------------------------------------


def apply_json_edits(text: str, edits: list) -> str:
    """What a consumer of the JSON does: rows/columns to offsets, each edit once, in order."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(location):
        return starts[location["row"] - 1] + location["column"] - 1

    unique = []
    for edit in edits:
        if edit not in unique:
            unique.append(edit)
    spans = sorted((offset(e["location"]), offset(e["end_location"]), i, e["content"])
                   for i, e in enumerate(unique))
    out, position = [], 0
    for start, end, _, content in spans:
        out += [text[position:start], content]
        position = end
    return "".join(out + [text[position:]])


@pytest.mark.parametrize("unsafe", [False, True])
def test_json_edits_apply_to_exactly_what_fix_writes(project, unsafe):
    flags = ["--unsafe-fixes"] if unsafe else []
    records = json.loads(cli("--output-format", "json", *flags, "m.py", cwd=project).stdout)
    edits = [e for r in records if r["fix_available"] for e in r["fix"]["edits"]]
    assert all(set(e) == {"content", "location", "end_location", "cell"} for e in edits)
    assert records[0]["fix"]["edits"] == [{"content": "x = ", "location": {"row": 3, "column": 1},
                                           "end_location": {"row": 3, "column": 1}, "cell": None}]
    expected = apply_json_edits(SOURCE, edits)
    cli("--fix", *flags, "m.py", cwd=project)
    assert (project / "m.py").read_text() == expected != SOURCE


def test_json_edits_of_a_notebook_count_in_cells(tmp_path):
    notebook = tmp_path / "training.ipynb"
    sources = ["import torch\nx = torch.ones(2)", "# moved\nx.to('cpu')\nprint(x)",
               "y = torch.ones(2, device='cuda')\nprint(y)"]
    notebook.write_text(json.dumps({
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Title"]}] + [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": text.splitlines(keepends=True)} for text in sources],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5},
        indent=1))
    cells = lambda: [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])  # noqa: E731
                     for c in json.loads(notebook.read_text())["cells"]]
    before = cells()
    records = json.loads(cli("--output-format", "json", "training.ipynb", cwd=tmp_path).stdout)
    by_cell: dict = {}
    for record in records:
        if record["fix_available"]:
            for edit in record["fix"]["edits"]:
                by_cell.setdefault(edit["cell"], []).append(edit)
    assert sorted(by_cell) == [3, 4]  # cells count among all cells, as findings do
    assert by_cell[3] == [{"content": "x = ", "location": {"row": 2, "column": 1},
                           "end_location": {"row": 2, "column": 1}, "cell": 3}]
    expected = [apply_json_edits(text, by_cell.get(number, [])) for number, text in
                enumerate(before, start=1)]
    cli("--fix", "training.ipynb", cwd=tmp_path)
    assert cells() == expected != before


# -- gitlab and junit ------------------------------------------------------------------------


def test_gitlab_matches_the_code_quality_schema(project):
    import jsonschema  # a test dependency: never a reason to skip
    (project / "sub").mkdir()
    (project / "sub" / "twice.py").write_text("import torch\nx = torch.ones(2)\nx.to('cpu')\n"
                                              "x.to('cpu')\n")
    (project / "bad.py").write_text("def (:\n")
    result = cli("--output-format", "gitlab", ".", cwd=project)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    jsonschema.validate(report, json.loads(GITLAB_SCHEMA.read_text()),
                        cls=jsonschema.Draft7Validator)
    assert len({issue["fingerprint"] for issue in report}) == len(report) == 6
    first = next(i for i in report if i["location"]["path"] == "m.py")
    assert first["check_name"] == "TDL001" and first["description"].startswith("TDL001: result")
    assert first["location"]["positions"] == {"begin": {"line": 3, "column": 1},
                                              "end": {"line": 3, "column": 12}}
    assert {i["location"]["path"] for i in report} == {"m.py", "sub/twice.py", "bad.py"}
    assert next(i for i in report if i["location"]["path"] == "bad.py")["check_name"] == "E999"
    # GitLab matches issues between pipelines by fingerprint: moving code keeps it.
    (project / "m.py").write_text("# a new first line\n" + SOURCE)
    moved = json.loads(cli("--output-format", "gitlab", ".", cwd=project).stdout)
    assert {i["fingerprint"] for i in moved} == {i["fingerprint"] for i in report}
    # Relative to GitLab's CI_PROJECT_DIR when it is set.
    nested = json.loads(cli("--output-format", "gitlab", "m.py", cwd=project,
                            env={"CI_PROJECT_DIR": str(project.parent)}).stdout)
    assert nested[0]["location"]["path"] == f"{project.name}/m.py"


def test_gitlab_clean_is_an_empty_report(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\n")
    assert json.loads(cli("--output-format", "gitlab", ".", cwd=tmp_path).stdout) == []


def test_junit_reads_in_a_real_consumer(project):
    from junitparser import Error, Failure, JUnitXml  # a test dependency
    (project / "bad.py").write_text("def (:\n")
    result = cli("--output-format", "junit", ".", cwd=project)
    assert result.returncode == 1 and result.stdout.startswith("<?xml")
    xml = JUnitXml.fromstring(result.stdout)
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {"m.py", "bad.py"}
    assert (xml.tests, xml.failures, xml.errors) == (4, 3, 1)
    cases = list(suites["m.py"])
    assert [case.name for case in cases] == ["torchdevlint.TDL001", "torchdevlint.TDL002",
                                             "torchdevlint.TDL002"]
    assert cases[0].classname == "m" and isinstance(cases[0].result[0], Failure)
    assert cases[0].result[0].message.startswith("result of `x.to()` is discarded")
    assert cases[0].result[0].text.startswith("line 3, col 1, result of")
    assert isinstance(list(suites["bad.py"])[0].result[0], Error)


def test_junit_clean_run_has_one_passing_case(tmp_path):
    from junitparser import JUnitXml
    (tmp_path / "ok.py").write_text("import torch\n")
    xml = JUnitXml.fromstring(cli("--output-format", "junit", ".", cwd=tmp_path).stdout)
    [suite] = list(xml)
    [case] = list(suite)
    assert (xml.tests, xml.failures, case.name, case.is_passed) == (1, 0, "No errors found", True)


# -- flake8 ----------------------------------------------------------------------------------


def test_flake8_output_is_unchanged(project):
    """The plugin's lines stay flake8's own: no [*], no colour, whatever the environment."""
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "TDL", "m.py"],
                            cwd=project, capture_output=True, text=True,
                            env={**os.environ, "FORCE_COLOR": "1"})
    ours = cli("m.py", cwd=project).stdout.splitlines()[:3]
    assert result.stdout.splitlines() == [line.replace(" [*] ", " ") for line in ours]
