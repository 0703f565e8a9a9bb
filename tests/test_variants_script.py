"""benchmarks/variants.py (metamorphic recall): each transform keeps the program and maps the
marked line to the lines that correspond to it, so its figures measure the rules, not itself."""
from __future__ import annotations

import ast
import json
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT))
from benchmarks import variants  # noqa: E402
from benchmarks.fixture_markers import expected_in_text  # noqa: E402

HARD_CODED = '''"""A hard-coded device."""
import torch
import torch.nn as nn


def train(model, data):
    device = torch.device("cuda")  # expect: TDL002@14
    model = model.to(device)
    return model(data.to(device))
'''

MODULE_LEVEL = '''import torch

device = torch.device("cuda")  # expect: TDL002@10
net = torch.nn.Linear(2, 2).to(device)
print(net(torch.ones(1, 2, device=device)))
'''

NESTED = '''import torch


def run(path):
    state = dict(torch.load(open(path, "rb")))  # expect: TDL003@18
    return state
'''


def only(text, transform):
    marked = {line for line, _, _ in expected_in_text(text)}
    made = variants.make_variants(text, transform, marked)
    assert len(made) == 1, made
    code, lines = made[0]
    ast.parse(code)
    return code, lines


def line_of(code, needle):
    return [n for n, text in enumerate(code.splitlines(), start=1) if needle in text]


def test_rename_renames_own_names_only_and_the_bug_is_still_caught():
    code, lines = only(HARD_CODED, "rename")
    tree = ast.parse(code)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert {"torch"} <= names and not {"device", "model", "data", "train"} & names
    assert "torch.device(" in code and ".to(" in code  # attributes untouched
    assert lines == {7: {7}}
    assert variants.caught((code, lines), expected_in_text(HARD_CODED), "TDL002")


def test_into_main_moves_module_statements_and_keeps_the_marker_with_its_statement():
    code, lines = only(MODULE_LEVEL, "into_main")
    tree = ast.parse(code)
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert main.name == "main" and len(main.body) == 3
    assert [type(n).__name__ for n in tree.body] == ["Import", "FunctionDef", "If"]
    assert lines[3] == set(line_of(code, 'device = torch.device("cuda")'))
    # a def that reads a moved name would lose it: not applicable
    reads = MODULE_LEVEL + "\n\ndef f():\n    return device\n"
    assert variants.make_variants(reads, "into_main", {3}) == []


def test_temporaries_split_the_nested_call_onto_the_line_before():
    code, lines = only(NESTED, "temporaries")
    assert line_of(code, 'tmp_value = torch.load(open(path, "rb"))') == [5]
    assert line_of(code, "state = dict(tmp_value)") == [6]
    assert lines == {5: {5, 6}}
    assert variants.caught((code, lines), expected_in_text(NESTED), "TDL003")
    # no nested call on the marked line: not applicable
    assert variants.make_variants(HARD_CODED, "temporaries", {7}) == []


def test_helper_extracts_the_value_with_its_free_names_as_parameters():
    code, lines = only(HARD_CODED, "helper")
    tree = ast.parse(code)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "helper_value")
    assert [a.arg for a in helper.args.args] == []  # torch is imported: a global
    assert line_of(code, "device = helper_value()") == [11]
    assert lines == {7: {11, helper.lineno, helper.lineno + 1}}
    nested = only(NESTED, "helper")[0]
    assert "def helper_value(path):" in nested and "state = helper_value(path)" in nested


def test_a_variant_that_lost_the_bug_is_not_caught():
    code, lines = only(HARD_CODED, "rename")
    chosen = 'torch.device("cuda" if torch.cuda.is_available() else "cpu")'
    fixed = code.replace('torch.device("cuda")', chosen)
    assert not variants.caught((fixed, lines), expected_in_text(HARD_CODED), "TDL002")


def test_the_script_reports_a_table_and_json(tmp_path):
    out = tmp_path / "v.json"
    import subprocess
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "variants.py"), "--rules",
                             "TDL002", "--transforms", "rename", "--json", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "| TDL002 | rename |" in result.stdout
    row, = json.loads(out.read_text())
    assert row["made"] > 0 and 0 <= row["caught"] <= row["made"]
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "variants.py"), "--transforms",
                          "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown transforms" in bad.stderr
