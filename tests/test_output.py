"""--output-format json/sarif/github, --statistics, --exit-zero and standard input."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from test_cli import BAD_INPUTS, findings
from torchdevlint.findings import Finding
from torchdevlint.output import fix_safety, github_annotation
from torchdevlint.rules import RULES_BY_CODE

# The official OASIS schema, vendored (see tests/data/sarif-schema-2.1.0.NOTICE.md).
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
# TDL001 at 3:1-3:12, TDL002 at 4:26-4:32.
SOURCE = "import torch\nx = torch.ones(2)\nx.to('cpu')\ny = torch.ones(2, device='cuda')\n"
RECORD_KEYS = {"path", "cell", "line", "column", "end_line", "end_column", "code", "name",
               "message", "url", "fix_available", "fix_safety", "fix"}


@pytest.fixture
def tree(tmp_path) -> Path:
    """A folder with findings in one file and a file diagnostic in each of the others."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(SOURCE)
    for name, (data, _) in BAD_INPUTS.items():
        (tmp_path / "src" / name).write_bytes(data)
    return tmp_path


def test_json_carries_every_field_and_the_file_diagnostics(tree):
    result = run_cli("--output-format", "json", "src", cwd=tree)
    assert result.returncode == 1
    records = json.loads(result.stdout)  # nothing but the JSON document on stdout
    assert all(set(record) == RECORD_KEYS for record in records)
    by_code = {record["code"]: record for record in records}
    assert sorted(by_code) == ["E902", "E999", "TDL001", "TDL002"]
    for code in ("E902", "E999"):
        assert sum(r["code"] == code for r in records) == \
            sum(expected == code for _, expected in BAD_INPUTS.values())
    tdl001 = by_code["TDL001"]
    assert (tdl001["path"], tdl001["cell"], tdl001["line"], tdl001["column"], tdl001["end_line"],
            tdl001["end_column"]) == ("src/model.py", None, 3, 1, 3, 12)
    assert tdl001["name"] == "discarded-tensor-move" and tdl001["url"].endswith("/TDL001.md")
    assert (tdl001["fix_available"], tdl001["fix_safety"]) == (True, "safe")
    assert by_code["E999"]["fix_available"] is False and by_code["E999"]["url"] is None
    assert (by_code["TDL002"]["line"], by_code["TDL002"]["column"]) == (4, 26)
    assert [r["line"] for r in records if r["path"] == "src/syntax.py"] == [2]
    # The same findings as the text format.
    text = findings(run_cli("src", cwd=tree).stdout)
    assert sorted((f["path"], int(f["line"]), int(f["col"]), f["code"], f["msg"]) for f in text) == \
        sorted((r["path"], r["line"], r["column"], r["code"], r["message"]) for r in records)


def test_fix_safety_is_read_from_the_fix_the_plan_built():
    from torchdevlint.fixes import Edit, Fix
    from torchdevlint.output import fix_applicable

    def finding(fix):
        return Finding("a.py", 1, 1, "TDL001", "m", available_fix=fix)

    edits = (Edit(0, 0, "x = "),)
    assert fix_safety(finding(None)) is None and not fix_applicable(finding(None))
    assert fix_safety(finding(Fix("TDL001", False, "d", edits))) == "unsafe"
    safe = Fix("TDL001", True, "d", edits)
    assert fix_safety(finding(safe)) == "safe" and fix_applicable(finding(safe))
    hidden = Fix("TDL001", False, "d", edits, applicable=False)  # unsafe, no --unsafe-fixes
    assert fix_safety(finding(hidden)) == "unsafe" and not fix_applicable(finding(hidden))


def test_the_vendored_sarif_schema_is_the_official_one_with_its_notice():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    notice = SCHEMA.with_name("sarif-schema-2.1.0.NOTICE.md").read_text(encoding="utf-8")
    assert "Copyright © OASIS Open" in notice and "OASIS IPR Policy" in notice


def test_sarif_is_valid_and_relative(tree):
    result = run_cli("--output-format", "sarif", "src", cwd=tree)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    import jsonschema  # a test dependency: never a reason to skip
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(log, schema, cls=jsonschema.Draft7Validator,
                        format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)

    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    for code in RULES_BY_CODE:
        [rule] = [r for r in rules if r["id"] == code]
        assert rule["helpUri"].endswith(f"/docs/rules/{code}.md") and rule["help"]["markdown"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"
    located = {}
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        physical = item["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        located.setdefault(item["ruleId"], []).append(
            (physical["artifactLocation"]["uri"], physical["region"]["startLine"],
             physical["region"]["startColumn"], physical["region"]["endColumn"]))
    assert located["TDL001"] == [("src/model.py", 3, 1, 12)]
    assert ("src/syntax.py", 2) in [entry[:2] for entry in located["E999"]]
    assert sorted(uri for uri, *_ in located["E902"]) == \
        sorted(f"src/{name}" for name, (_, code) in BAD_INPUTS.items() if code == "E902")


ANNOTATION = re.compile(
    r"^::error file=(?P<file>[^,:]+),line=(?P<line>\d+),col=(?P<col>\d+),"
    r"endLine=(?P<end_line>\d+),endColumn=(?P<end_col>\d+),title=(?P<title>[A-Z]+\d+)::"
    r"(?P<message>[^\r\n]+)$")


def test_github_annotations_are_well_formed(tree):
    result = run_cli("--output-format", "github", "src", cwd=tree)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    matches = [ANNOTATION.match(line) for line in lines]
    assert lines and all(matches), lines
    got = sorted((m["file"], m["line"], m["col"], m["title"]) for m in matches)
    assert ("src/model.py", "3", "1", "TDL001") in got
    assert ("src/model.py", "4", "26", "TDL002") in got
    assert {m["title"] for m in matches} == {"TDL001", "TDL002", "E999", "E902"}
    assert all(m["message"].startswith(m["title"] + " ") for m in matches)


def test_github_escaping():
    finding = Finding("dir,with:odd%name.py", 2, 3, "TDL001", "50% done,\nthen: more\r", 2, 9)
    line = github_annotation(finding)
    assert line == ("::error file=dir%2Cwith%3Aodd%25name.py,line=2,col=3,endLine=2,endColumn=9,"
                    "title=TDL001::TDL001 50%25 done,%0Athen: more%0D")
    notebook = github_annotation(Finding("nb.ipynb", 2, 5, "TDL001", "m", 2, 9, cell=3))
    assert notebook == "::error file=nb.ipynb,title=TDL001::TDL001 cell 3, line 2, column 5: m"


def test_statistics(tree):
    result = run_cli("--statistics", "src", cwd=tree)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    rows = [line.split("\t") for line in lines[:4]]
    assert [(count.strip(), code.strip()) for count, code, _ in rows] == [
        ("4", "E902"), ("2", "E999"), ("1", "TDL001"), ("1", "TDL002")]
    assert rows[2][2] == "[*] discarded-tensor-move"  # [*]: a fix is available
    assert rows[1][2] == "[ ] syntax-error"  # (as ruff marks the others where any is fixable)
    # then the total and what --fix would fix, as ruff ends its statistics
    assert lines[4:] == ["Found 2 findings (TDL001: 1, TDL002: 1); 6 files could not be "
                         "analysed in 7 files checked.", "[*] 2 fixable with the `--fix` option."]
    assert run_cli("--statistics", "-q", "src", cwd=tree).stdout.splitlines() == lines[:4]
    as_json = json.loads(run_cli("--statistics", "--output-format", "json", "src", cwd=tree).stdout)
    assert {row["code"]: row["count"] for row in as_json} == {"E902": 4, "E999": 2, "TDL001": 1, "TDL002": 1}
    assert run_cli("--statistics", "--output-format", "sarif", "src", cwd=tree).returncode == 2


def test_exit_zero(tree):
    result = run_cli("--exit-zero", "src", cwd=tree)
    assert result.returncode == 0 and "TDL001" in result.stdout
    # Usage errors still fail.
    assert run_cli("--exit-zero", "--select", "TDL9", "src", cwd=tree).returncode == 2


def test_output_file(tree):
    result = run_cli("--output-format", "json", "--output-file", "out.json", "src", cwd=tree)
    assert result.returncode == 1 and result.stdout == ""
    assert len(json.loads((tree / "out.json").read_text())) == len(BAD_INPUTS) + 2


def test_stdin(tmp_path):
    result = run_cli("-", "--stdin-filename", "pkg/train.py", input=SOURCE, cwd=tmp_path)
    assert result.returncode == 1
    assert [(f["path"], f["line"], f["code"]) for f in findings(result.stdout)] == [
        ("pkg/train.py", "3", "TDL001"), ("pkg/train.py", "4", "TDL002")]
    unnamed = run_cli("-", input=SOURCE, cwd=tmp_path)
    assert [f["path"] for f in findings(unnamed.stdout)] == ["-", "-"]
    clean = run_cli("-", input="import torch\n", cwd=tmp_path)
    assert clean.returncode == 0
    broken = run_cli("--output-format", "json", "-", "--stdin-filename", "b.py", input="def (:\n", cwd=tmp_path)
    assert [r["code"] for r in json.loads(broken.stdout)] == ["E999"]
    assert run_cli("-", "other.py", input=SOURCE, cwd=tmp_path).returncode == 2


def test_stdin_fix_writes_the_fixed_source_to_stdout(tmp_path):
    result = run_cli("--fix", "-", "--stdin-filename", "train.py", input=SOURCE, cwd=tmp_path)
    assert result.stdout.startswith("import torch\nx = torch.ones(2)\nx = x.to('cpu')\n")
    assert "device='cuda')" not in result.stdout  # TDL002 fixed too
    assert result.returncode == 0 and result.stderr == ""
    untouched = run_cli("--fix", "--unfixable", "TDL", "-", input=SOURCE, cwd=tmp_path)
    assert untouched.stdout == SOURCE and untouched.returncode == 1
    assert "-:3:1: TDL001" in untouched.stderr


def test_stdin_filename_uses_the_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchdevlint]\nextend-exclude = ["gen"]\n[tool.torchdevlint.per-file-ignores]\n'
        '"tests/*" = ["TDL001"]\n')
    result = run_cli("-", "--stdin-filename", "tests/t.py", input=SOURCE, cwd=tmp_path)
    assert [f["code"] for f in findings(result.stdout)] == ["TDL002"]
    # With --force-exclude an excluded name is not linted, as in ruff.
    excluded = run_cli("--force-exclude", "--stdin-filename", "gen/x.py", "-", input=SOURCE, cwd=tmp_path)
    assert excluded.returncode == 0 and not findings(excluded.stdout)


def test_fixable_means_what_plain_fix_applies(tmp_path):
    """`model(x.cuda())`: the only fix is unsafe, so no [*] and no "fix_available" unless
    unsafe fixes are on; --fix then says how many hidden fixes --unsafe-fixes would apply."""
    path = tmp_path / "s.py"
    path.write_text("import torch\n\ndef f(model, x):\n    return model(x.cuda())\n")
    plain = run_cli("--no-cache", "--statistics", path)
    assert plain.stdout.splitlines()[0].split("\t")[1:] == ["TDL002", "hardcoded-cuda-device"]
    unsafe = run_cli("--no-cache", "--statistics", "--unsafe-fixes", path)
    assert unsafe.stdout.splitlines()[0].split("\t")[1:] == ["TDL002", "[*] hardcoded-cuda-device"]
    [record] = json.loads(run_cli("--no-cache", "--output-format", "json", path).stdout)
    assert (record["fix_available"], record["fix_safety"]) == (False, "unsafe")
    [record] = json.loads(run_cli("--no-cache", "--output-format", "json", "--unsafe-fixes",
                                  path).stdout)
    assert (record["fix_available"], record["fix_safety"]) == (True, "unsafe")
    fixed = run_cli("--fix", path)
    assert "No findings fixed (1 hidden fix can be enabled with the `--unsafe-fixes` " \
           "option).\n" in fixed.stdout
    assert "hidden" not in run_cli("--fix", "--unsafe-fixes", path).stdout
