"""Jupyter notebooks: code cells linted as one program, cell positions, writing fixes back."""
from __future__ import annotations

import copy
import json
import shutil

import nbformat
import pytest

from conftest import ROOT, run_cli
from torchdevlint.notebook import NotebookError, parse_notebook

NOTEBOOK = ROOT / "tests" / "data" / "training.ipynb"
# (cell, line, column, code): cells count markdown cells too, as notebook front ends do.
EXPECTED = [
    (3, 1, 1, "TDL001"),   # `weights` comes from cell 2
    (5, 1, 9, "TDL003"),
    (5, 5, 5, "TDL001"),   # after a `%time` line magic
    (5, 5, 14, "TDL002"),
    (7, 3, 1, "TDL001"),   # `batch.cpu();`: the semicolon stops Jupyter displaying it
]


def json_findings(*args, cwd=None) -> list:
    result = run_cli("--output-format", "json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def test_cells_lines_and_columns():
    result = run_cli(NOTEBOOK)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if ": TDL" in line]
    assert lines[0].startswith(f"{NOTEBOOK}:cell 3:1:1: TDL001 [*] result of `weights.to()`")
    records = json_findings(NOTEBOOK)
    assert [(r["cell"], r["line"], r["column"], r["code"]) for r in records] == EXPECTED
    assert all(r["end_line"] == r["line"] for r in records)


def test_magics_and_cell_magics_are_skipped_not_errors():
    notebook = parse_notebook(NOTEBOOK.read_bytes())
    assert "%matplotlib" not in notebook.program and "!pip" not in notebook.program
    assert "echo" not in notebook.program  # the %%bash cell is not Python
    compile(notebook.program, "program", "exec")  # the placeholders keep it valid Python
    assert all(r["code"].startswith("TDL") for r in json_findings(NOTEBOOK))


def test_names_from_earlier_cells_are_known(tmp_path):
    document = json.loads(NOTEBOOK.read_text())
    del document["cells"][1]  # without the cell defining `weights`, its kind is unknown
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(document))
    assert (2, 1, 1, "TDL001") not in [(r["cell"], r["line"], r["column"], r["code"])
                                       for r in json_findings(path)]


def test_displayed_last_expression_is_not_a_discarded_move(tmp_path):
    cells = ["import torch\nx = torch.ones(2)\nx.cpu()",          # displayed: silent
             "x.cpu()\ny = 1",                                      # not last: reported
             "if True:\n    x.cpu()",                               # not an expression: reported
             "x.cpu()  # shown\n# a comment after it\n"]            # still displayed: silent
    path = tmp_path / "nb.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, str(path))
    got = [(r["cell"], r["line"], r["code"]) for r in json_findings(path)]
    assert got == [(2, 1, "TDL001"), (3, 2, "TDL001")]


def test_directories_include_notebooks(tmp_path):
    shutil.copy(NOTEBOOK, tmp_path / "training.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    shutil.copy(NOTEBOOK, tmp_path / ".ipynb_checkpoints" / "training-checkpoint.ipynb")
    records = json_findings(tmp_path)
    assert {r["path"] for r in records} == {str(tmp_path / "training.ipynb")}
    assert len(records) == len(EXPECTED)


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "not a Jupyter notebook"),
    (b'{"nbformat": 3, "worksheets": []}', "nbformat 3"),
    (b'{"cells": [{"cell_type": "code"}], "nbformat": 4}', "cell 1"),
    (b"\xff\xfe\x00", "UTF-8"),
])
def test_invalid_notebook_is_one_diagnostic(tmp_path, content, message):
    (tmp_path / "bad.ipynb").write_bytes(content)
    shutil.copy(NOTEBOOK, tmp_path / "good.ipynb")
    records = json_findings(tmp_path)
    [bad] = [r for r in records if r["path"].endswith("bad.ipynb")]
    assert bad["code"] == "E902" and message in bad["message"]
    assert len(records) == len(EXPECTED) + 1  # the run went on


def test_syntax_error_in_a_cell_points_at_the_cell(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch"), nbformat.v4.new_code_cell("x = 1\ndef broken(:\n")]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    [record] = json_findings(tmp_path / "nb.ipynb")
    assert (record["code"], record["cell"], record["line"]) == ("E999", 2, 2)
    assert run_cli(tmp_path / "nb.ipynb").stdout.startswith(f"{tmp_path / 'nb.ipynb'}:cell 2:2:")


def test_other_kernel_languages_are_not_linted(tmp_path):
    document = json.loads(NOTEBOOK.read_text())
    document["metadata"]["language_info"] = {"name": "R"}
    (tmp_path / "r.ipynb").write_text(json.dumps(document))
    assert json_findings(tmp_path / "r.ipynb") == []


def test_sarif_carries_the_cell():
    log = json.loads(run_cli("--output-format", "sarif", NOTEBOOK).stdout)
    results = log["runs"][0]["results"]
    cells = [(r["properties"]["cell"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
              r["ruleId"]) for r in results]
    assert cells == [(cell, line, code) for cell, line, _, code in EXPECTED]


def test_stdin_notebook():
    result = run_cli("-", "--stdin-filename", "nb.ipynb", input=NOTEBOOK.read_text())
    assert [line.split(": ")[0] for line in result.stdout.splitlines() if "TDL" in line][0] == \
        "nb.ipynb:cell 3:1:1"


# --- writing a fixed program back (the API --fix uses) --------------------------------------


def test_with_program_rewrites_only_the_changed_cells():
    text = NOTEBOOK.read_text()
    notebook = parse_notebook(NOTEBOOK.read_bytes())
    original = copy.deepcopy(notebook.document)
    fixed_program = notebook.program.replace("weights.to(device)", "weights = weights.to(device)") \
        .replace('torch.load("model.pt")', 'torch.load("model.pt", map_location=device)')
    new_text, changed = notebook.with_program(fixed_program)
    assert changed == [3, 5]
    document = json.loads(new_text)
    nbformat.validate(nbformat.reads(new_text, as_version=4))
    for before, after in zip(original["cells"], document["cells"]):
        assert {k: v for k, v in before.items() if k != "source"} == \
            {k: v for k, v in after.items() if k != "source"}  # outputs, metadata, ids kept
    assert document["cells"][2]["source"] == [
        "weights = weights.to(device)  # weights is defined in the cell above\n", "print(weights.shape)"]
    assert document["cells"][4]["source"][2] == "%time features.sum()\n"  # magic put back
    assert document["cells"][4]["source"][-1] == "features.cpu()"  # no newline added
    # Same JSON layout: only the two edited lines differ.
    diff = [(a, b) for a, b in zip(text.splitlines(), new_text.splitlines()) if a != b]
    assert len(text.splitlines()) == len(new_text.splitlines()) and len(diff) == 2
    assert new_text.endswith("}\n")


def test_unchanged_program_gives_the_same_text():
    notebook = parse_notebook(NOTEBOOK.read_bytes())
    assert notebook.with_program(notebook.program) == (NOTEBOOK.read_text(), [])


@pytest.mark.parametrize("indent", [None, 1, 2, 4])
def test_layout_round_trips(tmp_path, indent):
    document = json.loads(NOTEBOOK.read_text())
    document["cells"][0]["source"] = "Unicode: café → GPU"
    text = json.dumps(document, indent=indent, ensure_ascii=indent != 2)
    notebook = parse_notebook(text.encode())
    assert notebook.layout.dump(notebook.document) == text


def test_lost_cell_markers_are_refused():
    notebook = parse_notebook(NOTEBOOK.read_bytes())
    with pytest.raises(NotebookError):
        notebook.with_program(notebook.program.replace("# torchdevlint: cell 5\n", ""))


def test_fix_changes_only_the_affected_cells(tmp_path):
    path = tmp_path / "training.ipynb"
    shutil.copy(NOTEBOOK, path)
    before_text = path.read_text()
    before = json.loads(before_text)
    result = run_cli("--fix", path)
    after_text = path.read_text()
    after = json.loads(after_text)
    nbformat.validate(nbformat.reads(after_text, as_version=4))
    changed = [i + 1 for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [3, 5, 7]
    for a, b in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    assert after["cells"][2]["source"][0] == "weights = weights.to(device)  # weights is defined in the cell above\n"
    assert after["cells"][4]["source"][4] == "    features = features.to(device)\n"
    assert after["cells"][4]["source"][2] == "%time features.sum()\n"
    assert after["cells"][4]["source"][5] == "features.cpu()"  # displayed, so not "fixed"
    assert after["cells"][6]["source"][2] == "batch = batch.cpu();"
    # The JSON layout is kept: only the three edited lines differ.
    diff = [a for a, b in zip(before_text.splitlines(), after_text.splitlines()) if a != b]
    assert len(before_text.splitlines()) == len(after_text.splitlines()) and len(diff) == 3
    # What is left (the unsafe TDL003 fix was not applied) is reported in cell coordinates.
    assert result.returncode == 1
    assert [line.split(": ")[0] for line in result.stdout.splitlines() if ": TDL" in line] == \
        [f"{path}:cell 5:1:9"]
    unsafe = run_cli("--fix", "--unsafe-fixes", path)
    assert unsafe.returncode == 0
    assert json.loads(path.read_text())["cells"][4]["source"][0] == \
        'state = torch.load("model.pt", map_location=device)\n'


def test_fix_of_an_invalid_notebook_is_one_diagnostic(tmp_path):
    (tmp_path / "bad.ipynb").write_text("{nope")
    result = run_cli("--fix", tmp_path / "bad.ipynb")
    assert result.returncode == 1 and "E902" in result.stdout and "Traceback" not in result.stderr
    assert (tmp_path / "bad.ipynb").read_text() == "{nope"


# --- IPython syntax found as IPython finds it (issue 30) ------------------------------------


def write_notebook(path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, str(path))
    return path


SETUP = "import torch\nn = 3\nx = torch.ones(2)"


@pytest.mark.parametrize("cell, line, column", [
    ("print('%d epochs'\n      % (n,))\nx.cpu()\nz = 0", 3, 1),   # a continuation line with %
    ("ok = (n\n != 2)\nx.cpu()\nz = 0", 3, 1),                     # ... with !
    ("!python train.py \\\n   --lr 1e-4\nx.cpu()\nz = 0", 3, 1),  # a continued shell escape
    (" y = n + 1\n x.cpu()\n z = 0", 2, 2),                        # the whole cell indented
    ("\tif n:\n\t    x.cpu()\n\tz = 0", 2, 6),                     # ... by a tab
    ("torch.*Tensor?\nx.cpu()\nz = 0", 2, 1),                      # wildcard help
    ("files = !ls \\\n  -l\nx.cpu()\nz = 0", 3, 1),               # a continued x = !cmd
    (">>> y = n\n>>> x.cpu()\n>>> z = 0", 2, 5),                   # a pasted doctest
])
def test_valid_ipython_is_not_a_syntax_error(tmp_path, cell, line, column):
    path = write_notebook(tmp_path / "nb.ipynb", [SETUP, cell])
    records = json_findings(path)
    assert [(r["cell"], r["line"], r["column"], r["code"]) for r in records] == \
        [(2, line, column, "TDL001")]
    assert records[0]["end_column"] == column + len("x.cpu()")


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1", "%%capture out", "%%prun -q"])
def test_python_body_cell_magics_are_analysed(tmp_path, magic):
    body = "x.to('cuda')\nz = 0"
    path = write_notebook(tmp_path / "nb.ipynb", [SETUP, f"{magic}\n{body}", body])
    got = [(r["cell"], r["line"], r["column"], r["end_column"], r["code"]) for r in json_findings(path)]
    with_magic = [(line - 1, *rest) for cell, line, *rest in got if cell == 2]
    without = [tuple(rest) for cell, *rest in got if cell == 3]
    assert with_magic == without and {code for *_, code in without} == {"TDL001", "TDL002"}


def test_other_cell_magics_are_not_python(tmp_path):
    path = write_notebook(tmp_path / "nb.ipynb", [SETUP, "%%bash\nx.to('cuda')", "%%writefile a.py\nx.cpu()"])
    assert json_findings(path) == []


def test_fix_in_a_cell_magic_body_and_an_indented_cell(tmp_path):
    cells = [SETUP, "%%time\nx.to('cuda')\nz = 0", " x.cpu()\n\n   \n z = 0"]
    path = write_notebook(tmp_path / "nb.ipynb", cells)
    before = path.read_text()
    result = run_cli("--fix", path)
    assert result.returncode == 0, result.stdout
    after = path.read_text()
    sources = ["".join(cell["source"]) for cell in json.loads(after)["cells"]]
    assert sources == [SETUP, "%%time\nx = x.to('cuda' if torch.cuda.is_available() else 'cpu')\nz = 0",
                       " x = x.cpu()\n\n   \n z = 0"]  # the magic line, the indentation kept
    diff = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(before.splitlines()) == len(after.splitlines()) and len(diff) == 2


def cell_sources(path) -> list:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]


DEVICE = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'


@pytest.mark.parametrize("cells, expected", [
    # the import cell after a `!pip install` cell: no second `import torch`
    (["!pip install torch", "import torch\nimport numpy as np", "x = torch.ones(2)\ny = x.cuda()"],
     ["!pip install torch", f"import torch\nimport numpy as np\n\n{DEVICE}",
      "x = torch.ones(2)\ny = x.to(device)"]),
    # after the cell's shell lines and imports, not above them
    (["!pip install torch\nimport torch", "x = torch.ones(2)\ny = x.cuda()"],
     [f"!pip install torch\nimport torch\n\n{DEVICE}", "x = torch.ones(2)\ny = x.to(device)"]),
    # a cell magic stays the first line of its cell: the first Python cell gets them
    (["%%capture\n!pip install torch", "n = 1", "import torch\nx = torch.ones(2)\ny = x.cuda()"],
     ["%%capture\n!pip install torch", f"import torch\n{DEVICE}\n\nn = 1",
      "import torch\nx = torch.ones(2)\ny = x.to(device)"]),
    # in a cell indented as a whole, the new lines are indented as its lines
    ([" import torch\n x = torch.ones(2)\n y = x.cuda()"],
     [f" import torch\n\n {DEVICE}\n x = torch.ones(2)\n y = x.to(device)"]),
])
def test_fix_definitions_go_where_a_person_puts_them(tmp_path, cells, expected):
    path = write_notebook(tmp_path / "nb.ipynb", cells)
    run_cli("--fix", "--unsafe-fixes", path)
    assert cell_sources(path) == expected


def apply_located_edits(source: str, edits: list) -> str:
    """A consumer of the JSON output applying a fix's edits to a cell's text."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(location):
        return starts[location["row"] - 1] + location["column"] - 1

    for edit in sorted(edits, key=lambda e: offset(e["location"]), reverse=True):
        source = source[:offset(edit["location"])] + edit["content"] + source[offset(edit["end_location"]):]
    return source


@pytest.mark.parametrize("cell", [" import torch\n x = torch.ones(2)\n y = x.cuda()\n print(y)",
                                  ">>> import torch\n>>> x = torch.ones(2)\n>>> y = x.cuda()"])
def test_reported_edits_in_a_cleaned_up_cell_give_the_fixed_cell(tmp_path, cell):
    path = write_notebook(tmp_path / "nb.ipynb", [cell])
    [record] = json_findings("--unsafe-fixes", path)
    reported = apply_located_edits(cell, record["fix"]["edits"])
    run_cli("--fix", "--unsafe-fixes", path)
    assert reported == cell_sources(path)[0] != cell
