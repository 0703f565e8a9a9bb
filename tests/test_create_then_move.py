"""TDL009 create-then-move: what gets a fix, which fixes are safe, and the opt-in metadata."""
from __future__ import annotations

import textwrap

import pytest

from torchdevlint.engine import lint_source
from torchdevlint.applier import fix_source
from torchdevlint.engine import attach_fixes
from torchdevlint.fixes import FixOptions
from torchdevlint.rules import DEFAULT_RULES, OPT_IN_CODES, RULES_BY_CODE

TDL009 = [RULES_BY_CODE["TDL009"]]
HEAD = "import torch\n\n\ndef f(device, n, reference):\n    return "


def fix_of(expression: str):
    """(fixed expression or None, safe) for ``return EXPRESSION`` in a function."""
    source = HEAD + expression + "\n"
    result = lint_source(source, "s.py", TDL009)
    assert [f.code for f in result.findings] == ["TDL009"], expression
    attach_fixes(result, FixOptions(unsafe=True), TDL009)
    fix = result.findings[0].available_fix
    if fix is None:
        return None, None
    fixed = fix_source(source, "s.py", TDL009, FixOptions(unsafe=True)).fixed
    return fixed[len(HEAD):].strip(), fix.safe


@pytest.mark.parametrize("expression, fixed, safe", [
    ("torch.zeros(3, 4).to(device)", "torch.zeros(3, 4, device=device)", True),
    ("torch.ones(3).to(device, torch.float16)", "torch.ones(3, device=device, dtype=torch.float16)", True),
    ("torch.eye(3).to(dtype=torch.float16, device=device)",
     "torch.eye(3, device=device, dtype=torch.float16)", True),
    ("torch.full((2,), 0.5).to(device)", "torch.full((2,), 0.5, device=device)", True),
    ("torch.full((2,), 0.1).to(device, torch.float64)",
     "torch.full((2,), 0.1, device=device, dtype=torch.float64)", False),
    ("torch.arange(n).to(device)", "torch.arange(n, device=device)", True),
    ("torch.arange(0, n, 2).to(device)", "torch.arange(0, n, 2, device=device)", False),
    ("torch.linspace(0, 1, n).to(device)", "torch.linspace(0, 1, n, device=device)", False),
    ("torch.randn(n).to(device)", "torch.randn(n, device=device)", False),
    ("torch.zeros(n).to(device, non_blocking=True)", "torch.zeros(n, device=device)", False),
    ("torch.zeros(n, requires_grad=True).to(device)",
     "torch.zeros(n, requires_grad=True, device=device)", False),
    ("torch.zeros(n).cuda()", 'torch.zeros(n, device="cuda")', True),
    ("torch.zeros(n).cuda(0)", "torch.zeros(n, device=0)", False),
    ("torch.zeros(n, dtype=torch.int64).to(device)", "torch.zeros(n, dtype=torch.int64, device=device)", True),
    # no fix: two dtypes, a memory format
    ("torch.zeros(n, dtype=torch.int64).to(device, torch.float32)", None, None),
    ("torch.zeros(1, 3, 4, 4).to(device, memory_format=torch.channels_last)", None, None),
])
def test_fix_and_its_safety(expression, fixed, safe):
    assert fix_of(expression) == (fixed, safe)


def test_a_comment_between_factory_and_move_gets_no_fix():
    source = HEAD + "(torch.zeros(n)  # scratch\n            .to(device))\n"
    result = fix_source(source, "s.py", TDL009, FixOptions(unsafe=True))
    assert not result.changed and [f.code for f in result.findings] == ["TDL009"]


def test_opt_in_metadata():
    assert "TDL009" in OPT_IN_CODES
    assert RULES_BY_CODE["TDL009"] not in DEFAULT_RULES
    from torchdevlint.output import _sarif_rules
    entry = next(rule for rule in _sarif_rules() if rule["id"] == "TDL009")
    assert entry["defaultConfiguration"]["enabled"] is False
    assert next(rule for rule in _sarif_rules() if rule["id"] == "TDL001")["defaultConfiguration"] \
        == {"level": "error"}


def test_tdl002_creates_a_factory_tensor_on_the_runtime_device_where_that_is_the_same_tensor():
    source = textwrap.dedent("""\
        import torch
        a = torch.zeros(2, 4).cuda()
        b = torch.randn(2).cuda()
        """)
    fixed = fix_source(source, "s.py", DEFAULT_RULES, FixOptions()).fixed
    assert "a = torch.zeros(2, 4, device=device)\n" in fixed
    assert "b = torch.randn(2).to(device)\n" in fixed  # other numbers on the GPU's generator
