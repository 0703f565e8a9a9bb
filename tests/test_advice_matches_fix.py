"""A finding's advice names the code its fix writes. A method applied to an expression that is
not an atom needs parentheses: the fix adds them (``(a * 2).to(device)``), and the advice once
did not (``a * 2.to(device)``, which calls ``.to`` on ``2``)."""
from __future__ import annotations

import re

import pytest

from torchdevlint.applier import fix_source
from torchdevlint.engine import lint_source
from torchdevlint.fixes import FixOptions
from torchdevlint.rules.tdl010_autograd_graph_kept_alive import AutogradGraphKeptAlive
from torchdevlint.rules.tdl011_mixed_device_operands import MixedDeviceOperands

UNSAFE = FixOptions(unsafe=True)

TDL010 = """\
import torch


def train(model, criterion, optimizer, loader):
    epoch_loss = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += {value}
    return epoch_loss.item()
"""

TDL011 = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.randn(3, device=device)
w = torch.ones(3)
y = x + {value}
"""


@pytest.mark.parametrize("rule, template, value, advised, pattern", [
    (AutogradGraphKeptAlive, TDL010, "loss / len(loader)", "(loss / len(loader)).detach()",
     r"accumulate `([^`]*)`"),
    (AutogradGraphKeptAlive, TDL010, "loss", "loss.detach()", r"accumulate `([^`]*)`"),
    (MixedDeviceOperands, TDL011, "w * 2", "(w * 2).to(device)", r"move it first: `([^`]*)`"),
    (MixedDeviceOperands, TDL011, "w", "w.to(device)", r"move it first: `([^`]*)`"),
])
def test_the_advice_is_the_fixed_code(rule, template, value, advised, pattern):
    source = template.format(value=value)
    [finding] = lint_source(source, "advice.py", (rule,)).findings
    assert re.search(pattern, finding.message).group(1) == advised
    fixed = fix_source(source, "advice.py", (rule,), UNSAFE).fixed
    assert advised in fixed
