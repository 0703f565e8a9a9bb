"""Issue 28, cause 6: a comment saying that a line fails makes that line an expected failure,
decided in one place (``analysis.model.says_it_fails``) and read by every rule that honours
``pytest.raises``."""
from __future__ import annotations

import libcst as cst
import pytest

from torchdevlint.analysis import says_it_fails
from torchdevlint.engine import lint_source

FAILS = ["# this will error", "# This would fail on a GPU", "# raises", "# error!",
         "# RuntimeError: Expected all tensors to be on the same device",
         "# -> TypeError", "# expected to crash", "# throws an exception"]
SAYS_NOTHING = ["# compute the error", "# mean squared error", "# error handling below",
                "# raise the learning rate later", "# this works", "# no error here"]


def _line(comment: str, above: bool) -> cst.SimpleStatementLine:
    source = f"x = t\n{comment}\ny = x.numpy()\n" if above else f"x = t\ny = x.numpy()  {comment}\n"
    return cst.parse_module(source).body[1]


@pytest.mark.parametrize("comment", FAILS)
@pytest.mark.parametrize("above", [False, True])
def test_a_comment_that_says_the_line_fails(comment, above):
    assert says_it_fails(_line(comment, above))


@pytest.mark.parametrize("comment", SAYS_NOTHING)
@pytest.mark.parametrize("above", [False, True])
def test_a_comment_that_only_mentions_an_error(comment, above):
    assert not says_it_fails(_line(comment, above))


def test_only_the_adjacent_line_counts():
    statement = cst.parse_module("x = t\n# this will error\n\ny = x.numpy()\n").body[1]
    assert not says_it_fails(statement)


DEMO = """import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(3, device=device)
a = x.numpy(){comment}
b = x + torch.randn(3){comment}
c = torch.ones(2).cuda(){comment}
"""


def test_rules_stay_silent_on_a_deliberate_error_demo():
    reported = {f.code for f in lint_source(DEMO.format(comment=""), "demo.py").findings}
    assert {"TDL002", "TDL008", "TDL011"} <= reported
    demo = DEMO.format(comment="  # this will error")
    assert [f.code for f in lint_source(demo, "demo.py").findings] == []


LOADER_DEMO = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(3, 1).to(device)
loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4)
for (x,) in loader:
    out = model(x){comment}
"""


@pytest.mark.parametrize("comment, reported", [
    ("", ["TDL004"]),
    ("  # this will error: the batch is still on the CPU", []),
    ("  # mean squared error below", ["TDL004"]),
])
def test_tdl004_reads_the_comment_too(comment, reported):
    """TDL004 walks a loop body in order (``OrderedWalk``), not through the builder's
    contexts: a line whose comment says it errors is left out of the walk."""
    findings = lint_source(LOADER_DEMO.format(comment=comment), "demo.py").findings
    assert [f.code for f in findings] == reported
