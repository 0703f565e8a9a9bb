"""A long, realistic-looking training script, for the no-quadratic-blow-up check.

Every block defines a model, a loader loop, guarded and unguarded device code, checkpoint
loading and ``# noqa`` comments, so every stage (scopes, kind inference, guard chains, noqa,
positions) gets exercised all over the file, not only at its start.
"""

from __future__ import annotations

import sys

HEADER = '''"""Generated: many training scripts in one module."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
'''

BLOCK = '''

class Net{i}(nn.Module):
    def __init__(self, width={i}):
        super().__init__()
        self.fc = nn.Linear(width, 2)

    def forward(self, x):
        return self.fc(x)


def train{i}(dataset, epochs=1):
    model = Net{i}().to(device)
    loader = DataLoader(dataset, batch_size=32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for inputs, labels in loader:
            inputs = inputs.to(device)
            labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
    if torch.cuda.is_available():
        model.cuda()
    state = torch.load(os.path.join("checkpoints", "run{i}.pt"))
    weights = torch.load("run{i}.pt", map_location="cpu")  # noqa: TDL003
    scratch = torch.zeros(3, device="cuda")
    return model, state, weights, scratch


def evaluate{i}(model, loader):
    total = 0
    with torch.no_grad():
        for batch, target in loader:
            total += (model(batch.to(device)).argmax(1) == target.to(device)).sum().item()
    return total
'''


def generate(lines: int) -> str:
    parts = [HEADER]
    count = HEADER.count("\n")
    block_lines = BLOCK.count("\n")
    i = 0
    while count + block_lines <= lines:
        parts.append(BLOCK.format(i=i))
        count += block_lines
        i += 1
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 30_000))
