"""The module-state traps stay silent for the reason they name: undo that one reason and the
rule reports. (A trap silent for some other reason would prove nothing about its own.)"""
from __future__ import annotations

import pytest

from conftest import FIXTURES
from torchdevlint.engine import lint_source
from torchdevlint.rules import RULES_BY_CODE

CASES = [
    # TDL005 (fixtures/TDL005/negative/traps.py)
    ("TDL005", "0-dim", "self.temperature = torch.tensor(0.5)", "self.temperature = torch.tensor([0.5])"),
    ("TDL005", "moved at use", "self.mask.to(x.device)", "self.mask"),
    ("TDL005", "index only", "[:, self.order]", " * self.order"),
    ("TDL005", "to() override", "    def to(self, *args, **kwargs):", "    def to_device(self, *args, **kwargs):"),
    ("TDL005", "_apply override", "    def _apply(self, fn, recurse=True):", "    def apply_(self, fn, recurse=True):"),
    ("TDL005", "rebound in forward", "            self.cache = self.cache.to(x.device)", "            pass"),
    ("TDL005", "passed in", "self.table = table\n", "self.table = torch.ones(4)\n"),
    ("TDL005", "not a module", "class HoldsTensors(Sampler):", "class HoldsTensors(nn.Module):"),
    # TDL006 (fixtures/TDL006/negative/traps.py)
    ("TDL006", "references", "self.stages = [self.layer1, self.layer2]",
     "self.stages = [nn.Linear(4, 4), nn.Linear(4, 4)]"),
    ("TDL006", "wrapped", "        self.net = nn.Sequential(*self.parts)\n", "        self.net = nn.Sequential()\n"),
    ("TDL006", "computed names", '            self.add_module(f"block{index}", block)', "            pass"),
    ("TDL006", "hidden teacher", "self.teacher = [nn.Linear(4, 4).eval()]",
     "self.teacher = [nn.Linear(4, 4).eval(), nn.Linear(4, 4)]"),
    ("TDL006", "items moved", "            expert.to(device)", "            expert.train()"),
    ("TDL006", "not a module", "class NotAModule:", "class NotAModule(nn.Module):"),
    ("TDL006", "also registered", "        self.conv = conv\n", ""),
    ("TDL006", "unknown items", "self.parts.append(factory())", "self.parts.append(nn.Linear(4, 4))"),
    # TDL009 (fixtures/TDL009/negative/traps.py)
    ("TDL009", "device given", "torch.zeros(3, device=device)  #", "torch.zeros(3).to(device)  #"),
    ("TDL009", "dtype only", "torch.zeros(3).to(torch.float16)", "torch.zeros(3).to(torch.device('cuda'))"),
    ("TDL009", "other tensor", ".to(reference)", ".to(reference.device)"),
    ("TDL009", "cpu", 'torch.ones(3).to("cpu")', 'torch.ones(3).to("cuda")'),
    ("TDL009", "pin_memory chain", "torch.zeros(n).pin_memory().to(", "torch.zeros(n).to("),
    ("TDL009", "pinned keyword", "torch.zeros(n, pin_memory=True)", "torch.zeros(n)"),
    ("TDL009", "generator", "torch.rand(3, generator=generator)", "torch.rand(3)"),
    ("TDL009", "host data", "torch.tensor(data).to(device)", "torch.ones(data).to(device)"),
    ("TDL009", "like", "torch.zeros_like(x).to(device)", "torch.zeros(x).to(device)"),
    ("TDL009", "not directly", "torch.zeros(3).float().to(device)", "torch.zeros(3).to(device)"),
    ("TDL009", "out", "torch.zeros(3, out=out)", "torch.zeros(3)"),
]


@pytest.mark.parametrize("code, reason, old, new", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_undoing_the_reason_makes_the_trap_a_finding(code, reason, old, new):
    source = (FIXTURES / code / "negative" / "traps.py").read_text(encoding="utf-8")
    assert source.count(old) == 1, f"{old!r} is not in the traps exactly once"
    rule = [RULES_BY_CODE[code]]
    assert lint_source(source, "traps.py", rule).findings == []
    mutated = lint_source(source.replace(old, new), "traps.py", rule).findings
    assert len(mutated) == 1, f"{reason}: {[f.message for f in mutated]}"
