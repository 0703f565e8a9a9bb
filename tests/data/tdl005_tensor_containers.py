"""Anchor offsets kept in a plain list and scales in a plain dict: `.to(device)` moves what torch
registered, never the tensors inside a Python list or dict, so each item stays on the CPU and
meets the head's GPU output in `forward`. (TDL005 has no fix for a container, and positive
fixtures are fixed whole, so this program lives here: tests/runtime/test_module_state.py.)"""
import torch
import torch.nn as nn


class AnchorHead(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.head = nn.Linear(4, 4)
        self.anchors = []  # expect: TDL005@9
        for size in sizes:
            self.anchors.append(torch.ones(4) * size)
        self.scales = {"small": torch.full((4,), 0.5), "large": torch.full((4,), 2.0)}  # expect: TDL005@9

    def forward(self, x, scale="small"):
        out = self.head(x) * self.scales[scale]
        return [out + anchor for anchor in self.anchors]


def build():
    return AnchorHead([1.0, 2.0])


def main(device):
    model = build().to(device)
    return model(torch.rand(2, 4, device=device))


if __name__ == "__main__":
    main(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
