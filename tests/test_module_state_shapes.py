"""TDL005/TDL006 on the module-state shapes of issue 28 that the fixtures cannot show (a base
class of another file, which a fixture cannot import), and the twins where they stay silent.
Each flagged snippet comes from a public fix; the sources are named per case."""
from __future__ import annotations

import ast
import textwrap

import pytest

from torchdevlint.rules.classfacts import module_container_in, tensor_attribute_in


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# pytorch_geometric f964759e2 ("Ensure that all model parameters move to the same device"):
# torch_geometric/contrib/nn/positional/eigen.py, whose base class lives in .base
_EIGEN = """
    import torch
    import torch.nn as nn

    from .base import BasePositionalEncoder


    class EigEncoder(BasePositionalEncoder):
        def __init__(self, num_eigvec, hidden_dim):
            super().__init__()
            {proj}
            self.sign = 2 * torch.randint(0, 2, (1, )) - 1

        {forward}(self, data):
            pos = data.eig_pos_emb
            u, v = pos.chunk(2, dim=-1)
            return self.proj(torch.cat([u * self.sign, v * (-self.sign)], dim=-1))
"""


def test_a_base_of_another_file_with_forward_and_weights_is_a_module(lint):
    code = src(_EIGEN.format(proj="self.proj = nn.Linear(num_eigvec, hidden_dim)",
                             forward="def forward"))
    assert lint(code, ["TDL005"]) == [(11, 9, "TDL005")]


@pytest.mark.parametrize("proj, forward", [
    # no forward: nothing shows the class is a module
    ("self.proj = nn.Linear(num_eigvec, hidden_dim)", "def encode"),
    # no registered weights of its own: nothing shows it either
    ("self.proj = None", "def forward"),
], ids=["no-forward", "no-weights"])
def test_a_base_of_another_file_without_the_evidence_stays_silent(lint, proj, forward):
    assert lint(src(_EIGEN.format(proj=proj, forward=forward)), ["TDL005"]) == []


def test_the_prefilter_lets_a_base_of_another_file_through_only_with_forward():
    with_forward = src(_EIGEN.format(proj="self.proj = nn.Linear(num_eigvec, hidden_dim)",
                                     forward="def forward"))
    assert tensor_attribute_in(ast.parse(with_forward), with_forward)
    without = with_forward.replace("def forward", "def encode")
    assert not tensor_attribute_in(ast.parse(without), without)


# fast.ai book, chapter 12 (LMModel5): a state read first, then updated in forward
_STATE = """
import torch
import torch.nn as nn


class LMModel(nn.Module):
    def __init__(self, n_hidden, bs):
        super().__init__()
        self.cell = nn.GRUCell(n_hidden, n_hidden)
        self.h = torch.zeros(bs, n_hidden)

    def forward(self, x):
{body}
        return self.h


model = LMModel(4, 2).cuda()
"""


@pytest.mark.parametrize("body, expected", [
    # the first call meets the CPU state, then stores the device output
    ("        self.h = self.cell(x, self.h).detach()", [(9, 9, "TDL005")]),
    ("        h = self.cell(x, self.h)\n        self.h = h.detach()", [(9, 9, "TDL005")]),
    # rebuilt on the input's device before it is used: no meeting with the CPU state
    ("        self.h = x.new_zeros(x.size(0), x.size(1))\n"
     "        self.h = self.cell(x, self.h)", []),
    # a test of the attribute guards the use (the state may be rebuilt first)
    ("        if self.h.size(0) == x.size(0):\n"
     "            self.h = self.cell(x, self.h).detach()", []),
    # the update stores something not known to be on the module's device
    ("        self.h = self.cell(x, self.h).cpu()", []),
], ids=["updated-in-place", "updated-through-a-local", "rebuilt-first", "guarded", "stored-on-cpu"])
def test_a_state_read_then_updated(lint, body, expected):
    assert lint(_STATE.format(body=body).lstrip("\n"), ["TDL005"]) == expected


_LISTS = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
{body}

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
"""


@pytest.mark.parametrize("body, expected", [
    # twitter/the-algorithm-ml PR #136
    ("        modules = []\n        for _ in range(2):\n"
     "            modules.append(nn.Linear(d, d))\n        self.layers = modules", [(10, 9)]),
    ("        layers = [nn.Linear(d, d) for _ in range(2)]\n        self.layers = layers", [(8, 9)]),
    # the same list also registered through a Sequential
    ("        layers = [nn.Linear(d, d) for _ in range(2)]\n        self.layers = layers\n"
     "        self.net = nn.Sequential(*layers)", []),
    # a list the method fills with something it does not build
    ("        layers = []\n        layers.append(self.make())\n        self.layers = layers", []),
    # bound twice: what the attribute holds depends on which
    ("        layers = []\n        layers.append(nn.Linear(d, d))\n"
     "        layers = [nn.ReLU()] + layers\n        self.layers = layers", []),
], ids=["append-loop", "comprehension", "also-sequential", "unknown-item", "rebound"])
def test_a_local_list_stored_on_self(lint, body, expected):
    code = _LISTS.format(body=body).lstrip("\n")
    assert [(line, column) for line, column, _ in lint(code, ["TDL006"])] == expected
    if expected:
        assert module_container_in(ast.parse(code), code)
