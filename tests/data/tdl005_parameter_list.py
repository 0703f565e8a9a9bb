"""Mixture weights kept as `nn.Parameter`s in a plain list: a parameter assigned to the module is
registered, one inside a Python list is not, so `.to(device)` leaves each on the CPU (and
`parameters()` does not list them: no optimizer trains them) and `forward` meets them with the
input on the GPU. (TDL005 has no fix for a container, and positive fixtures are fixed whole, so
this program lives here: tests/runtime/test_module_state.py.)"""
import torch
import torch.nn as nn


class Mixture(nn.Module):
    def __init__(self, n_experts=3, dim=4):
        super().__init__()
        self.weights = [nn.Parameter(torch.randn(dim, dim)) for _ in range(n_experts)]  # expect: TDL005@9

    def forward(self, x):
        for w in self.weights:
            x = x @ w
        return x


def build():
    return Mixture()


def main(device):
    model = build().to(device)
    return model(torch.randn(2, 4, device=device))
