"""An index (or mask) and the tensor it indexes on two devices, in an operation that checks both
(``api.DEVICE_CHECKED_INDEX_ARGUMENTS``: ``gather``, ``scatter_``, ``index_select``,
``index_add_``, ``masked_select``...): a DQN's ``q(obs).gather(1, actions)`` given the replay
buffer's CPU actions, the device's labels scattered into a CPU one-hot table, a module's CPU
permutation or a ``forward``-made ``torch.arange`` given to ``index_select`` (issue 28). Unlike
``x[index]``, which takes a CPU index, these raise on a GPU ("got index is on cpu, different
from other tensors on cuda:0": recorded on an H200 in data/gpu/opinfo-h200.jsonl, both ways).

``meta``, which plays the GPU in the fixtures' proofs, checks none of them (``meta.gather(1,
cpu_index)`` runs), so they are proven here on the pretend accelerator, which raises what CUDA
raises; the silent side is in ``fixtures/TDL011/negative/index_arguments.py`` and
``fixtures/TDL005/negative/index_buffer.py``."""
from __future__ import annotations

import textwrap

import pytest
import torch

from torchdevlint.engine import lint_source
from torchdevlint.fixer import fix_data
from torchdevlint.fixes.model import FixOptions
from torchdevlint.rules.registry import classes_by_code
from torchdevlint.runtime import fake_accelerator

CPU_INDEX = "but got index is on cpu, different from other tensors on cuda:0"
DEVICE_INDEX = "but got index is on cuda:0, different from other tensors on cpu"

# a DQN update: the replay buffer's actions made on the CPU, the Q-values on the device
DQN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def main(device):
        q = nn.Linear(4, 3).to(device)
        obs = torch.randn(5, 4).to(device)
        actions = torch.tensor([0, 1, 2, 1, 0])
        chosen = q(obs).gather(1, actions.unsqueeze(1))
        return chosen.sum()
""")

# the device's labels scattered into a one-hot table made on the CPU
ONE_HOT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def main(device):
        model = nn.Linear(4, 3).to(device)
        labels = torch.tensor([0, 2, 1]).to(device)
        target = torch.zeros(3, 3).scatter_(1, labels.unsqueeze(1), 1.0)
        return ((model(torch.randn(3, 4, device=device)) - target) ** 2).mean()
""")

# rows added into a moved accumulator at a CPU index
INDEX_ADD = textwrap.dedent("""\
    import torch


    def main(device):
        totals = torch.zeros(4, 3).to(device)
        rows = torch.ones(2, 3).to(device)
        where = torch.tensor([0, 2])
        totals.index_add_(0, where, rows)
        return totals
""")

# a module's permutation kept as a plain attribute
PERMUTATION = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Shuffle(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)
            self.perm = torch.randperm(n)

        def forward(self, x):
            return self.fc(x).index_select(1, self.perm)


    def main(device):
        model = Shuffle(4).to(device)
        return model(torch.randn(2, 4, device=device))
""")

# an index made in forward without device=
REVERSED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Reverse(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)

        def forward(self, x):
            idx = torch.arange(x.size(1) - 1, -1, -1)
            return self.fc(x).index_select(1, idx)


    def main(device):
        model = Reverse(4).to(device)
        return model(torch.randn(2, 4, device=device))
""")


def run_main(source: str, device):
    namespace: dict = {}
    exec(compile(source, "snippet.py", "exec"), namespace)
    return namespace["main"](device)


def fixed(source: str, code: str) -> str:
    """The source after ``--fix --unsafe-fixes`` of ``code``'s findings (as the CLI does)."""
    result = fix_data(source.encode(), "snippet.py", [classes_by_code()[code]],
                      FixOptions(unsafe=True))
    assert result.changed, "no fix"
    return result.fixed


@pytest.mark.parametrize("source,code,where,words,error", [
    (DQN, "TDL011", (9, 14),
     "`q(obs).gather()` mixes `actions.unsqueeze(1)`, a tensor on the CPU (made by "
     "`torch.tensor([0, 1, 2, 1, 0])`), with `q(obs)`, on an accelerator", CPU_INDEX),
    (ONE_HOT, "TDL011", (8, 14),
     "`torch.zeros(3, 3).scatter_()` mixes `torch.zeros(3, 3)`, a tensor on the CPU", DEVICE_INDEX),
    (INDEX_ADD, "TDL011", (8, 5), "`totals.index_add_()` mixes `where`, a tensor on the CPU",
     CPU_INDEX),
    (PERMUTATION, "TDL005", (9, 9),
     "`forward` passes it to `.index_select()` as the index of a tensor on the module's device",
     CPU_INDEX),
    (REVERSED, "TDL007", (11, 15), "passes it to `.index_select()` as the index of a tensor on "
     "the module's device", CPU_INDEX),
])
def test_an_index_off_its_tensors_device_is_flagged_and_fails_on_a_gpu(
        source, code, where, words, error):
    findings = lint_source(source, "snippet.py", [classes_by_code()[code]]).findings
    assert [(f.line, f.column) for f in findings] == [where]
    assert words in findings[0].message, findings[0].message
    assert error in findings[0].message
    repaired = fixed(source, code)
    with fake_accelerator("cuda"):
        with pytest.raises(RuntimeError, match=error):
            run_main(source, torch.device("cuda"))
        run_main(repaired, torch.device("cuda"))  # the fix runs
    run_main(source, torch.device("cpu"))  # (and the CPU run never failed)
    assert lint_source(repaired, "snippet.py", [classes_by_code()[code]]).findings == []


def test_indexing_takes_a_cpu_index_where_these_operations_do_not():
    """Why ``x[cpu_index]`` stays silent and ``x.index_select(0, cpu_index)`` does not."""
    with fake_accelerator("cuda"):
        x = torch.arange(6.0, device="cuda").view(3, 2)
        index = torch.tensor([2, 0])
        assert x[index].device.type == "cuda"
        with pytest.raises(RuntimeError, match=CPU_INDEX):
            x.index_select(0, index)


@pytest.mark.parametrize("operation", [
    lambda x: x.index_select(0, torch.tensor(1)),
    lambda x: x.view(-1).gather(0, torch.tensor(1)),
    lambda x: x.take(torch.tensor(1)),
    lambda x: x.masked_select(torch.tensor(True)),
    lambda x: x.index_fill(0, torch.tensor(1), 0.0),
], ids=["index_select", "gather", "take", "masked_select", "index_fill"])
def test_a_zero_dim_cpu_index_is_refused_too(operation):
    """Unlike arithmetic's 0-dim CPU operands, a 0-dim CPU index is no scalar to these: each
    failed so on an H200 (torch 2.11.0+cu130, 2026-11-27), and the pretend accelerator let
    ``index_fill`` run until it learnt that. (TDL011 stays silent on a CPU index that may be
    0-dim all the same: its 0-dim test is the one every operation shares.)"""
    with fake_accelerator("cuda"):
        x = torch.randn(4, 3, device="cuda")
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            operation(x)


def test_index_fill_takes_a_zero_dim_cpu_value():
    """... while its value may be a 0-dim CPU tensor (the H200's OpInfo recording: ok)."""
    with fake_accelerator("cuda"):
        x = torch.randn(4, 3, device="cuda")
        x.index_fill(0, torch.tensor([1], device="cuda"), torch.tensor(2.0))
