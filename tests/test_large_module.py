"""Huge modules are linted in parts of whole top-level statements (torchdevlint.chunks), so
that memory is that of one part whatever the size of the module (issue 30, point 4: a 20 MB
generated module took 18 GB). The thresholds are lowered here so that small sources take the
same path; ``benchmarks/large_module.py`` measures the real ones."""
from __future__ import annotations

import ast

import libcst
import pytest

from benchmarks.generate_large import generate
from torchdevlint import chunks
from torchdevlint.engine import lint_source
from torchdevlint.applier import fix_source


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(chunks, "LARGE_MODULE_CHARS", 20_000)
    monkeypatch.setattr(chunks, "PART_CHARS", 4_000)


@pytest.fixture
def parses(monkeypatch):
    """The size of every text LibCST and Python's ast parse."""
    # Import what a lint imports first: pytest rewrites the asserts of every module of a
    # distribution that registers a pytest plugin (torchdevlint.runtime's), with ast.parse,
    # and a rule module imported during the test would be counted as a parse of the lint.
    lint_source("import torch\nx = torch.zeros(1)\nx.to('cpu')\n", "warm.py")
    sizes = []
    parse_module, parse = libcst.parse_module, ast.parse

    def counted_module(source, *args, **kwargs):
        sizes.append(len(source))
        return parse_module(source, *args, **kwargs)

    def counted(source, *args, **kwargs):
        sizes.append(len(source))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counted_module)
    monkeypatch.setattr(ast, "parse", counted)
    return sizes


def _generated(lines: int, last: str = 'x.to("cpu")\n') -> str:
    body = "".join(f"v{i} = torch.zeros({i % 7 + 1}) + {i}\n" for i in range(lines))
    return "import torch\n" + body + "x = torch.zeros(3)\n" + last


def _found(result):
    return [(f.line, f.column, f.end_line, f.end_column, f.code, f.message)
            for f in result.findings]


def test_a_huge_module_is_never_parsed_whole(small_parts, parses):
    """The shape of issue 30's file: LibCST and Python's ast only ever see one part (and its
    prelude), and the finding on its last line is reported at that line."""
    source = _generated(3_000)
    assert len(source) > 20 * chunks.PART_CHARS
    result = lint_source(source, "gen.py")
    assert result.error is None
    assert [(f.line, f.column, f.code) for f in result.findings] == [(3_003, 1, "TDL001")]
    assert parses and max(parses) < chunks.PART_CHARS + 100


def test_parts_find_what_the_whole_module_finds_and_fix_it_the_same(small_parts):
    """A generated training module (a model, a loader loop, guarded and unguarded device code,
    checkpoints and # noqa in every block): the same findings, positions, messages and fixes
    (placed in the file's rows) as the whole-module analysis, and the same fixed text."""
    source = generate(1_500)
    whole = lint_source(source, "train.py", None, in_parts=False)
    parts = lint_source(source, "train.py", None)
    assert len(chunks.plan_parts(source)) > 5
    assert parts.error is None and whole.error is None
    assert _found(parts) == _found(whole) and len(whole.findings) > 100
    from torchdevlint.engine import attach_located_fixes
    attach_located_fixes(whole, source)
    located = [(f.line, f.code, f.available_fix and f.available_fix.located) for f in whole.findings]
    assert [(f.line, f.code, f.available_fix and f.available_fix.located)
            for f in parts.findings] == located
    fixed_in_parts = fix_source(source, "train.py")
    chunks.LARGE_MODULE_CHARS = 10 ** 9  # (restored by monkeypatch)
    fixed_whole = fix_source(source, "train.py")
    assert fixed_in_parts.error is None and fixed_in_parts.applied
    assert fixed_in_parts.fixed == fixed_whole.fixed


def test_a_syntax_error_in_a_late_part_is_the_files_one_e999(small_parts, parses):
    source = _generated(3_000, last="x.to(\n")
    whole = lint_source(source, "gen.py", in_parts=False)
    del parses[:]
    result = lint_source(source, "gen.py")
    assert result.error == whole.error and result.error.code == "E999"
    assert result.error.line == 3_003 and result.findings == []
    assert max(parses) < chunks.PART_CHARS + 100
    del parses[:]
    assert chunks.syntax_error(source) == (whole.error.message, whole.error.line,
                                           whole.error.column)
    assert max(parses) < chunks.PART_CHARS + 100


def test_the_prelude_carries_imports_and_the_modules_device(small_parts):
    """A later part still knows torch's alias and the module's device choice: its guarded
    ``device`` is no hard-coded CUDA, its discarded move is found, and a # noqa there holds."""
    head = ('import torch as T\n'
            'device = "cuda" if T.cuda.is_available() else "cpu"\n')
    tail = ("y = T.ones(2)\ny.to(device)\nz = T.ones(2)\nz.to(device)  # noqa: TDL001\n"
            "w = T.ones(2, device=device)\n")
    source = head + "".join(f"v{i} = T.zeros(2) + {i}\n" for i in range(3_000)) + tail
    parts = chunks.plan_parts(source)
    assert len(parts) > 2 and "is_available" in parts[-1].prelude
    result = lint_source(source, "gen.py")
    line = source.count("\n") - 3  # y.to(device)
    assert [(f.line, f.code) for f in result.findings] == [(line, "TDL001")]
    assert _found(result) == _found(lint_source(source, "gen.py", in_parts=False))


def test_a_file_level_noqa_and_a_part_too_deep_for_libcst(small_parts):
    source = _generated(3_000)
    assert lint_source("# flake8: noqa\n" + source, "gen.py").findings == []
    # ruff's form with codes: the comment sits in the first part, the finding in the last
    assert lint_source("# ruff: noqa: TDL001\n" + source, "gen.py").findings == []
    assert [f.code for f in lint_source("# ruff: noqa: TDL002\n" + source, "gen.py").findings] \
        == ["TDL001"]
    # a deep assignment target beside a move: TDL999 for the first part only (a whole file
    # would lose every finding)
    deep = "import torch\nq = torch.ones(1)\nq.to('cpu')\n" + "a" + ".b" * 1500 + " = 1\n"
    result = lint_source(deep + source, "gen.py")
    assert lint_source(deep + source, "gen.py", in_parts=False).findings == []
    assert result.error.code == "TDL999" and result.error.line == 4
    assert [(f.line, f.code) for f in result.findings] == [(3_007, "TDL001")]


def test_statement_boundaries_keep_compound_statements_whole():
    source = ('"""doc"""\nimport torch\n@decorator\n@other\ndef f():\n    pass\n'
              'if a:\n    pass\nelif b:\n    x = (1,\n2)\nelse:\n    pass\n'
              'try:\n    pass\nexcept E:\n    pass\nfinally:\n    pass\n'
              's = """\nnot = a statement\n"""\n'
              'device = "cuda" if torch.cuda.is_available() else "cpu"\nlast = 1\n')
    assert [line for line, _ in chunks._statements(source)] == [1, 2, 3, 7, 14, 20, 23, 24]
    parts = chunks.plan_parts(source, part_chars=1)
    assert "".join(source[p.start:p.end] for p in parts) == source
    assert [p.line for p in parts] == [1, 2, 3, 7, 14, 20, 23, 24]
    assert parts[-1].prelude == ("import torch\n"
                                 'device = "cuda" if torch.cuda.is_available() else "cpu"\n')


def test_a_huge_notebook_places_its_fixes_in_its_cells(small_parts, tmp_path):
    """A notebook's program is linted in parts too: the fixes' rows count in the cells."""
    import json

    from torchdevlint.runner import lint_path
    cells = ["import torch\n", "".join(f"v{i} = torch.zeros(2) + {i}\n" for i in range(2_000)),
             "x = torch.zeros(3)\nx.to('cpu')\ny = 1\n"]  # (not a displayed last line)
    document = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": source} for source in cells],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                "nbformat_minor": 5}
    path = tmp_path / "big.ipynb"
    path.write_text(json.dumps(document))
    in_parts = lint_path(path, None, fixes=True)
    chunks.LARGE_MODULE_CHARS = 10 ** 9  # (restored by monkeypatch)
    whole = lint_path(path, None, fixes=True)
    assert [(f.cell, f.line, f.code) for f in in_parts.findings] == [(3, 2, "TDL001")]
    assert [f.available_fix.located for f in in_parts.findings] == \
        [f.available_fix.located for f in whole.findings]
    assert in_parts.findings[0].available_fix.located[0].cell == 3
