"""The lines torchdevlint reads as Python in a notebook cell are the lines IPython runs as
Python: each cell below (one or more per IPython construct) goes through both
``torchdevlint.ipysyntax.cell_lines`` and IPython's ``TransformerManager().transform_cell``
(``benchmarks/notebooks_differential.py`` compares them, and runs the same comparison over
real notebooks)."""
from __future__ import annotations

import IPython
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from IPython.core.inputtransformer2 import TransformerManager

from benchmarks.notebooks_differential import IPythonRejects, disagreement
from torchdevlint.ipysyntax import CONTINUED, PYTHON, SPECIAL, CellLines, cell_lines

CELLS = {
    # line magics
    "line magic": "%matplotlib inline\nimport torch",
    "line magic with arguments": "%load_ext autoreload\n%autoreload 2\nx = 1",
    "indented line magic": "for i in range(3):\n    %time f(i)\n    y = i",
    "magic in a def": "def f():\n    %time g()\n    return 1",
    "magic continued": "%time f(1, \\\n        2)\nx = 1",
    "%% on a later line": "x = 1\n%%time\ny = 2",
    "magic assignment": "t = %timeit -o sum(range(10))\nprint(t)",
    "magic assignment continued": "r = %sx ls \\\n   -la\nr",
    "magic help": "%timeit?\nx = 1",
    # shell escapes
    "shell": "!pip install torch\nimport torch",
    "shell captured": "!!ls\nx = 1",
    "shell assignment": "files = !ls *.py\nprint(files)",
    "shell tuple assignment": "a, b = !echo one two\nprint(a)",
    "shell continued": "!python train.py \\\n   --lr 1e-4 \\\n   --epochs 3\nx = 1",
    "shell with an open bracket": "!echo (\nx = [1,\n     2]",
    "shell with a quote": "!echo \"it's\"\ny = 'a'",
    "shell indented": "if True:\n    !nvidia-smi\n    z = 1",
    # help
    "help after": "torch.ones?\nx = 1",
    "help twice after": "torch.ones??\nx = 1",
    "help before": "?torch.ones\nx = 1",
    "help twice before": "??torch\nx = 1",
    "wildcard help": "torch.*Tensor?\nx = 1",
    "help on an item": "x[0]?\ny = 1",
    "help with a comment is not help": "foo?  # what is it\nx = 1",
    "help of a call is not help": "f(x)?\ny = 1",
    "usage": "?\nx = 1",
    # autocall escapes
    "autocall paren": "/print 1 2\nx = 1",
    "autocall quote": ",print a b\nx = 1",
    "autocall quote all": ";print a b\nx = 1",
    "bare slash": "/\nx = 1",  # IPython < 8.30 made it `()`; since, it is left as written
    # continuation lines that only look like IPython syntax
    "percent continuation": "print('%d epochs'\n      % (n,))",
    "bang continuation": "ok = (a\n != b)",
    "question in a string": "x = 'a?'\ny = \"?\"",
    "backslash continuation with percent": "x = 10 \\\n    % 3",
    "comment continuation": "x = f(1,  # %time\n      2)",
    "modulo and not-equal": "a = b % c\nd = e != f",
    # escapes inside strings and comments
    "magics in a triple-quoted string": "s = \"\"\"\n%time x\n!ls\nfoo?\n\"\"\"\nt = 1",
    "magics in comments": "# %matplotlib inline\n# !pip install x\nx = 1  # what?",
    "magic after a statement on the line": "x = 1; %time y",
    # cell magics
    "time": "%%time\nx = torch.ones(2)\nx.to('cuda')",
    "timeit with options": "%%timeit -n 1 -r 1\ny = x + 1",
    "capture": "%%capture out\n!pip install torch\nimport torch",
    "prun": "%%prun -q\nf()",
    "time with magics in the body": "%%time\n%matplotlib inline\n!ls\nx = 1",
    "time with an indented body": "%%time\n  x = 1\n  y = 2",
    "nested cell magics": "%%time\n%%capture\nx = 1",
    "bash": "%%bash\necho hi\nls",
    "writefile": "%%writefile train.py\nimport torch\nx.to('cuda')",
    "html": "%%html\n<b>hi</b>",
    "cell magic after blank lines": "\n\n%%time\nx = 1",
    "cell magic help": "%%time?\nx = 1",
    # indentation and prompts
    "indented by one space": " import torch\n x = torch.ones(2)",
    "indented by a tab": "\tx = 1\n\tif x:\n\t    y = 2",
    "indented with blank lines": "  x = 1\n\n     \n  y = 2",
    "indented magic": "  %matplotlib inline\n  x = 1",
    "leading blank lines": "\n   \nx = 1",
    "doctest prompts": ">>> x = 1\n>>> y = x + 1",
    "doctest continuation": ">>> for i in range(2):\n...     print(i)",
    "ipython prompts": "In [1]: x = 1\n   ...: y = 2",
    "doctest in a docstring": "def f():\n    \"\"\"\n    >>> f()\n    \"\"\"\n    return 1",
    "ellipsis": "x = ...\ny = [\n...\n]",
    # other
    "plain python": "import torch\nx = torch.ones(2)\nx.cpu()",
    "top-level await": "await asyncio.sleep(0)\nx = 1",
    "empty": "",
    "only blank lines": "\n\n",
    "comment only, indented": "  # nothing here",
    "no final newline after a magic": "x = 1\n%time y",
    "crlf": "%matplotlib inline\r\nx = 1\r\n",
}


MANAGER = TransformerManager()


@pytest.fixture(scope="module")
def manager():
    return MANAGER


# torchdevlint follows IPython 9.16 and later; what older releases within the test extra's
# bound did otherwise, for the cells above (the combinations below differ in more ways).
CHANGED_IN = {"bare slash": (8, 30)}
IPYTHON_VERSION = tuple(int(part) for part in IPython.__version__.split(".")[:2])


@pytest.mark.parametrize("name", CELLS)
def test_same_lines_are_python_as_for_ipython(manager, name):
    if IPYTHON_VERSION < CHANGED_IN.get(name, (0,)):
        pytest.skip(f"IPython {IPython.__version__} predates its current rule for this cell")
    source = CELLS[name]
    try:
        assert disagreement(source, manager) is None
    except IPythonRejects as error:
        pytest.fail(f"IPython cannot transform a cell written for this test: {error}")


# Lines of each construct, put together in every order by the property test below.
FRAGMENTS = sorted({line for source in CELLS.values() for line in source.splitlines()} |
                   {"", "   ", "x = (", ")", "!echo \\", "y = \\", "'unterminated", "%time"})


@pytest.mark.skipif(IPYTHON_VERSION < (9, 16), reason="torchdevlint follows IPython 9.16 and "
                    "later; before, IPython took the first line's indentation off a cell (not "
                    "the indentation common to its lines, < 9.1) and read >>> prompts otherwise")
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=8), st.sampled_from(["\n", "\r\n"]),
       st.booleans())
def test_constructs_combined_are_read_as_ipython_reads_them(lines, newline, final_newline):
    source = newline.join(lines) + (newline if final_newline and lines else "")
    ours = cell_lines(source)
    if ours.python:
        assert len(ours.lines) == len(source.splitlines())  # one program line per cell line
    try:
        found = disagreement(source, MANAGER, ours)
    except IPythonRejects:
        return  # IPython cannot run it either
    assert found is None, (source, found)


def test_every_construct_is_recognised_somewhere():
    kinds = set()
    for source in CELLS.values():
        result = cell_lines(source)
        kinds.update(result.kinds if result.python else ["not python"])
        kinds.update(["shifted"] if any(result.shifts) else [])
    assert kinds == {PYTHON, SPECIAL, CONTINUED, "cell magic", "not python", "shifted"}


def line_by_line(source: str) -> CellLines:
    """What torchdevlint did before (issue 30): a line starting with %, ! or ? is IPython."""
    lines = cell_lines(source).lines
    kinds = [SPECIAL if line.lstrip()[:1] in ("%", "!", "?") else PYTHON
             for line in source.splitlines()]
    return CellLines(lines, kinds, [0] * len(lines))


@pytest.mark.parametrize("name", ["percent continuation", "bang continuation",
                                  "indented by one space", "wildcard help", "shell continued"])
def test_the_comparison_finds_a_line_by_line_reading_wrong(manager, name):
    source = CELLS[name]
    assert disagreement(source, manager, line_by_line(source)) is not None


def test_linting_a_notebook_does_not_import_ipython(tmp_path):
    import json
    import subprocess
    import sys
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": source} for source in CELLS.values()]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    code = ("import sys; from torchdevlint.cli import main\n"
            "main([sys.argv[1], '--fix', '--no-cache'])\n"
            "assert 'IPython' not in sys.modules, 'IPython was imported'")
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "nb.ipynb" in result.stdout


def test_a_notebook_of_every_construct_round_trips_and_keeps_its_lines():
    import nbformat

    from torchdevlint.notebook import parse_notebook
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS.values()]
    text = nbformat.writes(nb)
    notebook = parse_notebook(text.encode())
    assert notebook.with_program(notebook.program) == (text, [])
    for cell in notebook.cells:  # one program line per cell line
        assert len(cell.python_lines) == len(cell.source.splitlines())


def test_a_cell_indented_by_its_first_line_is_read_as_ipython_8_read_it(manager):
    """IPython 9 takes off the indentation common to every line, none here, and the cell then
    cannot run; IPython 8 took the first line's indentation off each line that starts with it,
    and the notebook ran (rasbt/machine-learning-book ch13, cell 14): torchdevlint reads it so,
    not as a syntax error."""
    source = " def f(a):\n    return a\n\nprint(f(1))"
    if IPYTHON_VERSION < (9, 1):  # IPython 8's own rule: the same lines
        assert disagreement(source, manager) is None
    else:
        with pytest.raises(IPythonRejects, match="does not compile"):
            disagreement(source, manager)
    ours = cell_lines(source)
    assert ours.python and "".join(ours.lines) == "def f(a):\n   return a\n\nprint(f(1))\n"
    assert ours.shifts == [1, 1, 0, 0]
