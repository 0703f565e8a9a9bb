"""Huge literal tables analysed one element at a time (torchdevlint.split): the findings, their
positions, ``# noqa``, fixes and every front end must be exactly those of the whole-file
analysis, and the split path must really be the one taken."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from torchdevlint import split
from torchdevlint.engine import lint_source
from torchdevlint.applier import fix_source
from torchdevlint.flake8_plugin import TorchDevLintChecker

TABLE = textwrap.dedent('''\
    import torch
    from torch import load as load_weights

    DEVICE = "cuda"
    CHOICE = "cuda:1"  # not a device-like name: reported only where it is used as a device

    def helper(path, device="cuda"):
        return torch.load(path, map_location=device)

    def train(model, loader):
        for x, y in loader:
            model(x)

    ops = [
        torch.zeros(2, device="cuda"),
        # a comment between elements: blanked with the rest
        dict(name="ñandú", make=lambda: torch.ones(3, device="cuda:0")),
        (lambda p: load_weights(p)),
        torch.zeros(1, device="cuda" if torch.cuda.is_available() else "cpu"),
        *[torch.empty(n).cuda() for n in (1, 2)],
        {"ñ": 1, "t": torch.randn(4,
                                  device=DEVICE)},
        train(torch.nn.Linear(2, 2), []),
        torch.ones(1).to(CHOICE),
        torch.tensor([1.0]).cuda(),  # noqa: TDL002
    ]

    model = torch.nn.Linear(2, 2).to("cpu")
    train(model, [])
    x = torch.load("ckpt.pt")
''')


def _found(result):
    return [(f.line, f.column, f.end_line, f.end_column, f.code, f.message) for f in result.findings]


@pytest.fixture
def split_everything(monkeypatch):
    """Split every module-level list or tuple, whatever its size."""
    monkeypatch.setattr(split, "LARGE_FILE_CHARS", 0)
    monkeypatch.setattr(split, "LARGE_LITERAL_CHARS", 1)


def test_split_findings_are_those_of_the_whole_file(split_everything):
    parts = lint_source(TABLE, "t.py")
    whole = lint_source(TABLE, "t.py", split_large=False)
    assert parts.split_source == TABLE and whole.split_source is None  # both paths were taken
    assert _found(parts) == _found(whole)
    where = {(line, column, code) for line, column, _, _, code, _ in _found(parts)}
    # inside the table: a literal, a lambda's literal after non-ASCII text on the same line,
    # a load, a .cuda() in a starred comprehension; outside it, a device-named constant, and
    # a constant reported only because an element uses it as a device
    assert {(15, 27, "TDL002"), (17, 58, "TDL002"), (18, 16, "TDL003"), (20, 22, "TDL002"),
            (4, 10, "TDL002"), (5, 10, "TDL002"), (30, 5, "TDL003")} <= where
    assert not any(line in (19, 25) for line, _, _ in where)  # guarded; noqa in the table


def test_a_dict_table_is_split_into_its_items(split_everything):
    source = textwrap.dedent('''\
        import torch
        configs = {
            "a": torch.zeros(1, device="cuda"),
            # comment
            ("b", 2): {"inner": lambda p: torch.load(p)},
            torch.zeros(1, device="cuda:1").sum().item(): 3,
            ("parenthesized"): (  # the spans ast gives leave these parentheses out
                torch.load("c.pt")),
        }
    ''')
    plan = split.plan_split(source, min_literal=1)
    [literal] = plan.literals
    assert literal.brackets == "{}" and len(literal.elements) == 4
    parts = lint_source(source, "t.py")
    assert parts.split_source is not None
    assert [(f.line, f.column, f.code) for f in parts.findings] == \
        [(3, 32, "TDL002"), (5, 35, "TDL003"), (6, 27, "TDL002"), (7, 24, "TDL003")]
    assert _found(parts) == _found(lint_source(source, "t.py", split_large=False))


def test_end_positions_of_an_element_spread_over_lines(split_everything):
    source = "import torch\nops = [\n    torch.load(\n        'a.pt'),\n]\n"
    [finding] = lint_source(source, "t.py").findings
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (3, 5, 4, 16)
    assert _found(lint_source(source, "t.py", split_large=False)) == _found(lint_source(source, "t.py"))


def test_callers_in_a_split_table_keep_every_caller_reasoning_silent(split_everything):
    # ``train``'s batches are reported when its only caller passes a moved model; a second
    # caller in the table passes a model that never moved, so then they are not: in both paths.
    source = textwrap.dedent('''\
        import torch, torch.nn as nn
        def train(model, train_loader):
            for data, target in train_loader:
                output = model(data)
        def main():
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = nn.Linear(2, 2).to(device)
            train(model, train_loader=None)
    ''')
    assert [(f.line, f.code) for f in lint_source(source, "t.py").findings] == [(4, "TDL004")]
    source += "ops = [train(nn.Linear(2, 2), None)]\n"
    parts = lint_source(source, "t.py")
    assert parts.split_source is not None
    assert _found(parts) == _found(lint_source(source, "t.py", split_large=False)) == []


def _large_file(rows: str, newline: str = "\n") -> str:
    """A file over the size at which splitting is considered, mostly comments (cheap to
    parse), with ``rows`` as the elements of a table."""
    padding = "# " + "-" * 100 + "\n"
    source = "import torch\n" + padding * (split.LARGE_FILE_CHARS // len(padding)) + \
        "op_db = [\n" + rows + "]\nx = torch.load('a.pt')\n"
    return source.replace("\n", newline)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_real_size_table_is_split_with_the_default_limits(newline):
    rows = "".join(f"    dict(name='op{i}', make=lambda: torch.zeros({i}, device='cuda')),\n"
                   for i in range(600))
    source = _large_file(rows, newline)
    assert len(source) > split.LARGE_FILE_CHARS and len(rows) > split.LARGE_LITERAL_CHARS
    parts = lint_source(source, "big.py")
    assert parts.split_source is not None
    assert _found(parts) == _found(lint_source(source, "big.py", split_large=False))
    assert len(parts.findings) == 601
    first_row = source.count(newline, 0, source.index("op_db")) + 2
    assert (parts.findings[0].line, parts.findings[0].column) == (first_row, rows.index("'cuda'") + 1)


@pytest.mark.parametrize("source", [
    "ops = [1, 2]\n",  # small
    "ops = 1, 2, 3\n",  # a tuple without parentheses has no interior to blank
    "ops = [(y := 1), 2]\n",  # binds a name in the module
    "ops = {1: 2, **other}\n",  # no node spans the ``**``
    "ops = {1, 2, 3}\n",  # blanked, a set would become a dict
    "ops.extend([1, 2])\n",  # not an assignment
    "ops = [1,\r 2]\n",  # a lone carriage return
    "ops = [1, 2\n",  # not Python
])
def test_what_is_not_split(source):
    assert split.plan_split(source, min_literal=5 if source != "ops = [1, 2]\n" else 100) is None


def test_skeleton_keeps_every_other_token_in_place():
    source = "a = 1\nops = [\n    f(1),  # c\n    g(2),\n]; b = 'ñ'\n"
    plan = split.plan_split(source, min_literal=1)
    assert plan.skeleton == "a = 1\nops = [\n" + " " * len("    f(1),  # c") + "\n" + " " * len("    g(2),") + "\n]; b = 'ñ'\n"
    [literal] = plan.literals
    assert literal.statement_index == 1
    assert [split.element_source(source, e) for e in literal.elements] == ["[f(1)]", "[g(2)]"]
    assert [(e.line, e.column) for e in literal.elements] == [(3, 5), (4, 5)]


def test_fixes_and_fix_reports_on_a_split_file(split_everything):
    fixed = fix_source(TABLE, "t.py")
    whole_fixed = fix_source(TABLE, "t.py")  # --fix always parses the whole file
    assert fixed.fixed == whole_fixed.fixed and fixed.fixed != TABLE

    from torchdevlint.engine import attach_fixes
    from torchdevlint.fixes.model import BuiltFix
    parts, whole = lint_source(TABLE, "t.py"), lint_source(TABLE, "t.py", split_large=False)
    # the elements' fixes were built while their trees were alive, none reaching outside its
    # element: attach_fixes never parses the whole file
    assert sum(isinstance(f.fix, BuiltFix) for f in parts.findings) == 4
    assert not parts.split_fixes_need_whole
    attach_fixes(parts)
    attach_fixes(whole)

    def fixes(result):
        return [(f.line, f.column, f.available_fix and (f.available_fix.safe,
                                                        f.available_fix.description,
                                                        f.available_fix.edits))
                for f in result.findings]

    assert fixes(parts) == fixes(whole)
    # one element's fix defines a module-level device under a fresh name: the names of the
    # whole file (``device`` is a parameter outside the table) decide it, as on the whole tree
    edits = [edit for _, _, fix in fixes(parts) if fix for edit in fix[2]]
    assert any(edit.text.startswith("\ndefault_device = ") for edit in edits)


def test_an_element_fix_reaching_outside_its_element_is_built_on_the_whole_tree(split_everything):
    from torchdevlint.engine import split_fix_context
    from torchdevlint.fixes.context import ElementFixContext
    from torchdevlint.fixes.model import Edit, Fix
    parts = lint_source(TABLE, "t.py")
    whole = split_fix_context(TABLE, parts.module, parts.analysis)
    start = TABLE.index("torch.zeros(2")
    element = ElementFixContext(whole, "[torch.zeros(2)]", parts.module, parts.analysis,
                                start - 1)
    assert element.within(Fix("TDL002", True, "", (Edit(start, start + 5, "x"),)))
    assert element.within(Fix("TDL002", True, "", (whole.import_torch_edit(),)))
    assert not element.within(Fix("TDL002", True, "", (Edit(start - 1, start, ""),)))  # "["


NAMES = textwrap.dedent('''\
    import os.path as p, numpy
    from .pkg.sub import *
    from a.b import c as d
    global g
    @deco(key=value)
    class K(Base, metaclass=Meta):
        def f(self, *args, kw=None, **kwargs):
            nonlocal n
            try:
                del x
            except E as err:
                return lambda q: [y for y in q if y.attr is True or False]
    print(f"{fmt!r:>{width}}", sep=None, end=...)
''')
MATCH_NAMES = textwrap.dedent('''\
    match v:
        case Point(x=0, y=yy) | [1, *rest]:
            pass
        case {"k": w, **others} if others:
            pass
        case str() as s:
            pass
''')


@pytest.mark.parametrize("source", [
    NAMES, TABLE,
    pytest.param(MATCH_NAMES, marks=pytest.mark.skipif(sys.version_info < (3, 10),
                                                        reason="match: Python 3.10"))],
    ids=["every-construct", "table", "match"])
def test_names_from_pythons_ast_are_libcsts(source):
    """A split file's names in use come from Python's ast: the whole LibCST tree is never
    built. They must be the names the fix context finds in that tree (checked on 1,493
    files of the corpora: identical)."""
    import ast

    import libcst as cst

    from torchdevlint.fixes.context import FixContext, names_in_tree
    expected = FixContext(source, cst.parse_module(source), None).names_in_use()
    assert names_in_tree(ast.parse(source)) == expected
    if source is NAMES:
        assert {"p", "os", "numpy", "pkg", "d", "a", "g", "deco", "value", "K", "Base", "Meta",
                "args", "kw", "kwargs", "n", "err", "q", "True", "False", "None", "x",
                "fmt", "width", "c"} <= expected
        assert not {"attr", "key", "metaclass", "sep", "end", "sub", "path"} & expected
    if source is MATCH_NAMES:
        assert {"v", "Point", "x", "yy", "rest", "w", "others", "str", "s"} <= expected


def test_flake8_plugin_reports_the_same_on_a_split_file(split_everything):
    checker = TorchDevLintChecker(None, TABLE.splitlines(True), "t.py")
    reported = [(line, column + 1, message.split()[0]) for line, column, message, _ in checker.run()]
    # flake8 applies noqa itself, so the plugin reports the suppressed finding too
    whole = lint_source(TABLE, "t.py", apply_noqa=False, split_large=False)
    assert reported == [(f.line, f.column, f.code) for f in whole.findings]


def test_cli_on_a_huge_generated_table(tmp_path):
    rows = "".join(f"    OpInfo('op{i}', sample=lambda: torch.randn({i}, device='cuda:0')),\n"
                   for i in range(600))
    path = tmp_path / "table.py"
    source = _large_file(rows)
    path.write_text(source)
    out = subprocess.run([sys.executable, "-m", "torchdevlint", "--no-cache",
                          "--output-format", "json", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    findings = json.loads(out.stdout)
    assert len(findings) == 601
    last_row = rows.splitlines()[-1]
    assert (findings[-2]["line"], findings[-2]["column"]) == \
        (source.count("\n", 0, source.index(last_row)) + 1, last_row.index("'cuda:0'") + 1)
    # fix availability is resolved on the whole file, whose tree the split run never kept
    assert all(f["fix_safety"] is not None for f in findings)
    assert [f["fix_safety"] for f in findings].count("safe") == 600
    # available: what plain --fix applies, so not the one unsafe fix
    assert all(f["fix_available"] == (f["fix_safety"] == "safe") for f in findings)
