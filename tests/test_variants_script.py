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


# ------------------------------------------------ the transforms of real code's variations
# Each: a small input, the exact text the transform writes, the lines that correspond to
# the marked one, and a case where it must not apply.

MODULE_STATE = '''import torch
import torch.nn as nn


class Norm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.mean = torch.zeros(n)  # expect: TDL005@9
        self.std = torch.ones(n)

    def forward(self, x):
        return (x - self.mean) / self.std
'''


def test_method_moves_the_value_into_a_method_called_through_self():
    code, lines = only(MODULE_STATE, "method")
    assert code == MODULE_STATE.replace(
        "        self.mean = torch.zeros(n)  # expect: TDL005@9 vmark8\n",
        "").replace(
        "        self.mean = torch.zeros(n)  # expect: TDL005@9\n",
        "        self.mean = self.method_value(n)  # expect: TDL005@9 vmark8\n").replace(
        "        self.std = torch.ones(n)\n",
        "        self.std = torch.ones(n)\n\n"
        "    def method_value(self, n):\n"
        "        return torch.zeros(n)\n")
    assert lines == {8: {8, 11, 12}}
    assert variants.caught((code, lines), expected_in_text(MODULE_STATE), "TDL005")
    # a module-level statement, a staticmethod: not in an instance method
    assert variants.make_variants(NESTED, "method", {5}) == []
    static = MODULE_STATE.replace("    def forward(self, x):", "    @staticmethod\n    def forward(x):")
    assert variants.make_variants(static.replace("(x - self.mean) / self.std", "x * 2"),
                                  "method", {13}) == []


def test_attr_holder_builds_the_state_in_a_local_then_stores_it():
    code, lines = only(MODULE_STATE, "attr_holder")
    assert code == MODULE_STATE.replace(
        "        self.mean = torch.zeros(n)  # expect: TDL005@9\n",
        "        holder_value = torch.zeros(n)\n"
        "        self.mean = holder_value  # expect: TDL005@9 vmark8\n")
    assert lines == {8: {8, 9}}
    # a plain name assigned, or a name target: not applicable
    assert variants.make_variants(MODULE_STATE.replace("torch.zeros(n)", "n"), "attr_holder",
                                  {8}) == []
    assert variants.make_variants(HARD_CODED, "attr_holder", {7}) == []


FACTORY_INPUT = '''import torch
import torch.nn as nn


def smoke(device):
    model = nn.Linear(3, 2).to(device)
    return model(torch.zeros(2, 3))  # expect: TDL011@12
'''


def test_alias_reads_the_object_through_a_second_name():
    code, lines = only(FACTORY_INPUT, "alias")
    assert code == FACTORY_INPUT.replace(
        "    return model(torch.zeros(2, 3))  # expect: TDL011@12\n",
        "    alias_value = model\n"
        "    return alias_value(torch.zeros(2, 3))  # expect: TDL011@12 vmark7\n")
    assert lines == {7: {7, 8}}
    # the only own name is read in one branch of a conditional: not applicable
    conditional = FACTORY_INPUT.replace(
        "return model(torch.zeros(2, 3))",
        "return model(torch.zeros(2, 3)) if torch.cuda.is_available() else None")
    assert variants.make_variants(conditional, "alias", {7}) == []


TWO_MOVES = '''import torch


def step(x, y, device):
    x = x.to(device)  # expect: TDL001@5
    y = y.to(device)
    return x + y
'''


def test_tuple_merges_two_adjacent_assignments():
    code, lines = only(TWO_MOVES, "tuple")
    assert code == TWO_MOVES.replace(
        "    x = x.to(device)  # expect: TDL001@5\n    y = y.to(device)\n",
        "    x, y = x.to(device), y.to(device)  # expect: TDL001@5 vmark5\n")
    assert lines == {5: {5}}
    # the second value reads the first target: merging would change what it reads
    dependent = TWO_MOVES.replace("y = y.to(device)", "y = x.to(device)")
    assert variants.make_variants(dependent, "tuple", {5}) == []
    # ... or a closure of the scope reads it
    closure = TWO_MOVES.replace("    return x + y\n", "    f = lambda: x\n    return f() + y\n")
    assert variants.make_variants(closure, "tuple", {5}) == []


def test_tuple_of_attributes_only_when_the_second_value_cannot_read_the_first():
    code, _ = only(MODULE_STATE, "tuple")
    assert "        self.mean, self.std = torch.zeros(n), torch.ones(n)  # expect: TDL005@9 " \
           "vmark8\n" in code
    reads_self = MODULE_STATE.replace("self.std = torch.ones(n)", "self.std = self.mean + 1")
    assert variants.make_variants(reads_self, "tuple", {8}) == []
    calls_own = MODULE_STATE.replace("self.std = torch.ones(n)", "self.std = make(n)")
    assert variants.make_variants(calls_own, "tuple", {8}) == []


def test_import_as_and_from_import_rewrite_how_torch_is_named():
    code, lines = only(FACTORY_INPUT, "import_as")
    assert code == FACTORY_INPUT.replace("import torch\n", "import torch as th\n").replace(
        "torch.zeros", "th.zeros").replace("# expect: TDL011@12", "# expect: TDL011@12 vmark7")
    assert lines == {7: {7}}
    code, lines = only(FACTORY_INPUT, "from_import")
    assert code == FACTORY_INPUT.replace(
        "import torch\n", "import torch\nfrom torch import zeros\n").replace(
        "torch.zeros", "zeros").replace("# expect: TDL011@12", "# expect: TDL011@12 vmark7")
    assert lines == {7: {8}}
    assert variants.caught((code, lines), expected_in_text(FACTORY_INPUT), "TDL011")
    # `torch` bound by another import too, or `zeros` taken: not applicable
    both = FACTORY_INPUT.replace("import torch.nn as nn", "import torch.nn")
    assert variants.make_variants(both, "import_as", {7}) == []
    taken = FACTORY_INPUT.replace("model = nn", "zeros = 0\n    model = nn")
    assert variants.make_variants(taken, "from_import", {8}) == []


def test_subclass_moves_the_class_body_into_a_base_class():
    code, lines = only(MODULE_STATE, "subclass")
    assert code == MODULE_STATE.replace("class Norm(nn.Module):", "class NormBase(nn.Module):").replace(
        "# expect: TDL005@9", "# expect: TDL005@9 vmark8") + (
        "\n\nclass Norm(NormBase):\n    pass\n")
    assert lines == {8: {8}}
    assert variants.caught((code, lines), expected_in_text(MODULE_STATE), "TDL005")
    # super(Norm, self) in the base would skip the base's own __init__: not applicable
    explicit = MODULE_STATE.replace("super().__init__()", "super(Norm, self).__init__()")
    assert variants.make_variants(explicit, "subclass", {8}) == []
