"""Issue 28: rules report only where the file shows the hazard, also across a notebook's cells.

TDL007 needs evidence that the module meets an accelerator (named in the message); TDL003
classifies what the notebook itself saved through its own helper; a cell's comment saying
that the line errors makes it an expected failure."""
from __future__ import annotations

import json

import nbformat

from conftest import run_cli

MODEL_CELLS = [
    "import torch\nimport torch.nn as nn",
    "class Gate(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
    "        self.proj = nn.Linear(d, d)\n\n    def forward(self, x):\n"
    "        keep = torch.ones(x.size(1))\n        return self.proj(x) * keep",
    "model = Gate(4)\nout = model(torch.randn(2, 4))",
]


def findings(tmp_path, cells) -> list:
    path = tmp_path / "nb.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, str(path))
    result = run_cli("--isolated", "--no-cache", "--output-format", "json", path)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def test_tdl007_silent_in_a_notebook_that_never_uses_an_accelerator(tmp_path):
    assert findings(tmp_path, MODEL_CELLS) == []


def test_tdl007_names_the_move_that_puts_the_model_on_a_device(tmp_path):
    cells = MODEL_CELLS + ['device = "cuda" if torch.cuda.is_available() else "cpu"\n'
                           "model.to(device)"]
    records = findings(tmp_path, cells)
    assert [(r["cell"], r["line"], r["column"], r["code"]) for r in records] == \
        [(2, 7, 16, "TDL007")]
    assert "(this file moves it: `model.to(device)`)" in records[0]["message"]


def test_tdl007_a_dtype_is_no_device(tmp_path):
    assert findings(tmp_path, MODEL_CELLS + ["model.to(torch.float64)"]) == []


# The load comes first (a notebook re-run reads what an earlier run saved), so only what was
# saved can tell: numbers are CPU data, a moved model's state_dict is device state.
SAVE_CELLS = [
    "import torch\n\ndef save_to(obj, path):\n    torch.save(obj, path)",
    "stats = torch.load('stats.pt')",
    "features = torch.randn(100, 8)\n"
    "save_to({'mean': features.mean().item(), 'std': features.std().item()}, 'stats.pt')",
]


def test_tdl003_silent_on_numbers_the_notebook_saves_through_its_helper(tmp_path):
    assert findings(tmp_path, SAVE_CELLS) == []


def test_tdl003_reports_device_state_the_notebook_saves_through_its_helper(tmp_path):
    cells = SAVE_CELLS[:2] + [
        'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
        "model = torch.nn.Linear(8, 1).to(device)\nsave_to(model.state_dict(), 'stats.pt')"]
    records = findings(tmp_path, cells)
    assert [(r["cell"], r["code"]) for r in records] == [(2, "TDL003")]


def test_a_cell_that_errors_on_purpose(tmp_path):
    cells = ['import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'
             "x = torch.randn(3, device=device)",
             "# this will error: NumPy cannot read GPU memory\ny = x.numpy()",
             "z = x.numpy()"]
    records = findings(tmp_path, cells)
    assert [(r["cell"], r["code"]) for r in records] == [(3, "TDL008")]


GATE = MODEL_CELLS[0] + "\n\n\n" + MODEL_CELLS[1] + "\n"


def test_tdl007_reports_a_library_class_and_says_why():
    from torchdevlint.engine import lint_source
    found = lint_source(GATE, "gate.py").findings
    assert [(f.line, f.column, f.code) for f in found] == [(11, 16, "TDL007")]
    assert "(a library class: its users move it)" in found[0].message


def test_tdl007_a_script_that_names_no_device_is_silent_until_it_does():
    from torchdevlint.engine import lint_source
    script = GATE + '\n\nif __name__ == "__main__":\n    print(Gate(4)(torch.randn(2, 4)))\n'
    assert lint_source(script, "train.py").findings == []
    moved = script.replace("Gate(4)(", "Gate(4).cuda()(")
    found = [f for f in lint_source(moved, "train.py").findings if f.code == "TDL007"]
    assert len(found) == 1 and "(this file moves it: `Gate(4).cuda()`)" in found[0].message
