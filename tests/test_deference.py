"""Where one rule leaves a finding to another (``engine.DEFERENCES``): one table in the engine,
not code in the rules. Each entry is run on its own example with the table as it is, and
without that entry: the entry must be what keeps its rule silent there."""
from __future__ import annotations

import pytest

from torchdevlint import engine
from torchdevlint.engine import DEFERENCES, lint_source
from torchdevlint.rules import RULES_BY_CODE


def _codes(source: str, rules, deferences=None, monkeypatch=None) -> list:
    if deferences is not None:
        monkeypatch.setattr(engine, "DEFERENCES", tuple(deferences))
    result = lint_source(source, "example.py", rules)
    assert result.error is None, result.error
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("entry", DEFERENCES, ids=lambda d: f"{d.rule}-defers-to-{'-'.join(d.to)}")
def test_each_deference_keeps_its_rule_silent_in_its_region(entry, monkeypatch):
    rules = [RULES_BY_CODE[entry.rule], *(RULES_BY_CODE[code] for code in entry.to)]
    with_entry = _codes(entry.example, rules)
    assert entry.rule not in {code for _, code in with_entry}
    without = _codes(entry.example, rules, [d for d in DEFERENCES if d is not entry], monkeypatch)
    assert entry.rule in {code for _, code in without}, \
        f"the example of {entry.rule}'s deference does not report without the entry"
    # the entry removes its rule's findings in the region, and nothing else
    assert [f for f in without if f[1] != entry.rule] == with_entry


def test_the_rule_stays_silent_whether_or_not_the_other_rule_runs():
    for entry in DEFERENCES:
        assert entry.rule not in {code for _, code in
                                  _codes(entry.example, [RULES_BY_CODE[entry.rule]])}


def test_tdl011_reports_the_same_operation_outside_a_loader_loop():
    """The region is the loop over a data loader, not the function around it, and in the loop
    only the operations that read the batches as the loop took them (issue 28): a tensor the
    code made itself there is no batch of TDL004's."""
    outside = ("import torch\n\n\ndef f(model, loader, device):\n"
               "    w = torch.randn(3, device=device)\n"
               "    print(w + x.cpu())\n"
               "    for x, y in loader:\n"
               "        print(w + x.cpu())\n"
               "        inputs = y[0]\n"
               "        print(w + inputs.cpu().flatten(), w + torch.randn(3))\n"
               "    for x in range(3):\n"
               "        print(w + x.cpu())\n")
    assert _codes(outside, [RULES_BY_CODE["TDL011"]]) == [(6, "TDL011"), (10, "TDL011"),
                                                           (12, "TDL011")]


def test_a_nested_function_starts_outside_the_loop():
    """A function defined in the loop runs later, with its own loops (as TDL011 walks it)."""
    nested = ("import torch\n\n\ndef f(model, loader):\n"
              "    for batch in loader:\n"
              "        def g(device):\n"
              "            w = torch.randn(3, device=device)\n"
              "            return w + torch.randn(3)\n"
              "        for step in loader:\n"
              "            def h(device):\n"
              "                w = torch.randn(3, device=device)\n"
              "                for item in loader:\n"
              "                    print(w + item.cpu())\n")
    assert _codes(nested, [RULES_BY_CODE["TDL011"]]) == [(8, "TDL011")]

