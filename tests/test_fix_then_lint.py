"""No fix writes code that another rule flags (issue 30, point 12): every fix of every positive
fixture and of every rule's INVALID examples is applied on its own (``--fix --unsafe-fixes``
with that one rule), and then every rule, opt-in ones included (TDL009), lints the result.
A code found more often after the fix than before is a finding the fix introduced.

Each fix runs alone because the fix loop would hide the defect: with every rule fixing,
TDL009 rewrites the ``torch.randn(2, 3).to(device)`` that TDL011's fix wrote in the next pass."""
from __future__ import annotations

from collections import Counter

import pytest

from conftest import fixture_files
from torchdevlint.engine import lint_source
from torchdevlint.applier import fix_source
from torchdevlint.fixes import FixOptions
from torchdevlint.rules import ALL_RULES

UNSAFE = FixOptions(unsafe=True)
CASES = [(f"{p.parts[-3]}/{p.name}", p.read_text(encoding="utf-8")) for p in fixture_files("positive")]
CASES += [(f"{rule.code}-invalid-{i}", code) for rule in ALL_RULES
          for i, (code, _) in enumerate(rule.invalid)]


def introduced(source: str, name: str = "example.py") -> list:
    """``(rule fixed, code, line of the fixed text)`` of every finding the fixes of one rule
    introduce, for each fixable rule with a finding in ``source``."""
    before = lint_source(source, name, ALL_RULES)
    assert before.error is None, before.error
    counts = Counter(f.code for f in before.findings)
    found = []
    for rule in ALL_RULES:
        if not rule.fixable or rule.code not in counts:
            continue
        result = fix_source(source, name, [rule], UNSAFE)
        assert result.error is None, result.error
        if not result.changed:
            continue
        after = lint_source(result.fixed, name, ALL_RULES)
        assert after.error is None, (rule.code, after.error)
        new = Counter(f.code for f in after.findings) - counts
        lines = result.fixed.splitlines()
        found += [(rule.code, f.code, lines[f.line - 1].strip()) for f in after.findings
                  if f.code in new]
    return found


def test_the_cases_exercise_every_fixable_rule():
    fixed = {rule for rule in ALL_RULES if rule.fixable
             if any(rule.code in {f.code for f in lint_source(code, "e.py", ALL_RULES).findings}
                    for _, code in CASES)}
    assert fixed == {rule for rule in ALL_RULES if rule.fixable}


@pytest.mark.parametrize("source", [code for _, code in CASES], ids=[name for name, _ in CASES])
def test_no_fix_introduces_a_finding_of_any_rule(source):
    assert introduced(source) == []


def test_the_check_sees_a_fix_that_introduces_a_finding():
    """TDL011's fix as it was before issue 30 (``.to(device)`` after a factory) is caught."""
    source = ("import torch\nimport torch.nn as nn\n\n\ndef f(device):\n"
              "    model = nn.Linear(3, 2).to(device)\n    return model(torch.randn(2, 3))\n")
    from torchdevlint.rules import tdl011_mixed_device_operands as tdl011
    original = tdl011.MoveOperand.build

    def old_build(self, finding, ctx):
        self.factory = None
        return original(self, finding, ctx)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tdl011.MoveOperand, "build", old_build)
        assert introduced(source) == [("TDL011", "TDL009",
                                       "return model(torch.randn(2, 3).to(device))")]
    assert introduced(source) == []
