"""Buffers registered under computed names and also kept in a plain list: `.to(device)`
replaces each buffer with a moved copy (it moves parameters in place, buffers it replaces), so
the list keeps the CPU tensors. (TDL005 has no fix for a container, and positive
fixtures are fixed whole, so this program lives here: tests/runtime/test_module_state.py.)
Source: https://github.com/pytorch/pytorch/issues/29807."""
import torch
import torch.nn as nn


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        params = [torch.rand(1, 3) for _ in range(4)]
        self.params = []  # expect: TDL005@9
        for i, param in enumerate(params):
            self.register_buffer("param_{}".format(i), param)
            self.params.append(getattr(self, "param_{}".format(i)))

    def forward(self, x):
        return sum(x * p for p in self.params)


def build():
    return MyModule()


def main(device):
    model = build().to(device)
    return model(torch.ones(1, 3, device=device))


if __name__ == "__main__":
    main(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
