"""What a training loop keeps when it adds the loss tensor to a running total after
``loss.backward()`` (TDL010's ``GRAPH_NODES_KEPT``, issue 28; PyTorch's FAQ: "Don't accumulate
history across your training loop"), against the same loop adding ``loss.item()``.

For each model, in a fresh process each: the autograd nodes reachable from the total, and the
growth of the process's resident memory over the steps (after ``gc.collect()`` and
``malloc_trim``), per step. backward() frees the saved activations, so what grows is the graph
nodes in host memory. Needs torch (the test extra) and Linux (``/proc/self/statm``).

    python benchmarks/graph_nodes_memory.py [--steps 2000]
"""
from __future__ import annotations

import argparse
import subprocess
import sys

def reachable_nodes(total) -> int:
    """The autograd graph nodes reachable from ``total`` (0 for a number or a tensor without
    history): what a loop that keeps ``total`` keeps of every step's graph."""
    import torch
    if not isinstance(total, torch.Tensor):
        return 0
    seen, stack = set(), [total.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def _resident() -> int:
    import ctypes
    import gc
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def _child(which: str, keep: str, steps: int) -> None:
    """One measurement, in a process of its own: prints the nodes and the bytes grown."""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    torch.set_num_threads(1)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(64, 4, 256, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.encoder(x).mean(1))

    if which == "mlp":
        model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
        shape, classes = (8, 16), 4
    else:
        model, shape, classes = Encoder(), (4, 8, 64), 10
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    criterion = nn.CrossEntropyLoss()

    def step(total):
        x = torch.randn(*shape)
        loss = criterion(model(x), torch.randint(0, classes, (shape[0],)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return total + (loss if keep == "tensor" else loss.item())

    total = 0.0
    for _ in range(20):  # warm-up: the allocator's and the optimiser's first allocations
        total = step(total)
    total, base = 0.0, _resident()
    for _ in range(steps):
        total = step(total)
    print(reachable_nodes(total), _resident() - base)


MODELS = (("mlp", "two-layer MLP"), ("transformer", "two-layer transformer encoder"))


def measure(model: str, keep: str, steps: int):
    out = subprocess.run([sys.executable, __file__, "--child", model, keep, str(steps)],
                         check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--child", nargs=3, metavar=("MODEL", "KEEP", "STEPS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    print(f"{'model':32s} {'kept':>8s} {'nodes/step':>10s} {'KiB/step':>9s} {'x .item()':>9s}")
    for model, title in MODELS:
        base_nodes, base_grown = measure(model, "item", args.steps)
        nodes, grown = measure(model, "tensor", args.steps)
        for kept, n, g in (("tensor", nodes, grown), (".item()", base_nodes, base_grown)):
            ratio = g / max(base_grown, 1)
            print(f"{title:32s} {kept:>8s} {n / args.steps:10.1f} {g / args.steps / 1024:9.2f} "
                  f"{ratio:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
