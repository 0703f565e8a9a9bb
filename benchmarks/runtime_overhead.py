"""What the pretend accelerator costs against plain CPU (issue 29, acceptance 5; goal <= 2x).

One training step (forward, backward, AdamW step) of three models of growing size, timed on
the plain CPU and on the pretend accelerator (the same code, the model and batch moved to
"cuda") in the same process, rounds alternating; each figure is the fastest round's median
step in CPU time of this process (one thread by default), so that other processes on a shared
machine weigh little, and what noise remains hits both alike.

    python benchmarks/runtime_overhead.py [--rounds 5] [--steps 20] [--threads 1]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def models():
    import torch.nn as nn

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 256)
            self.layers = nn.TransformerEncoder(
                nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True), num_layers=2)
            self.head = nn.Linear(256, 1000)

        def forward(self, tokens):
            return self.head(self.layers(self.embed(tokens)))

    def mlp():
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))

    def cnn():
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                             nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

    return {
        "small (MLP 784-512-10, batch 64)": (
            mlp, lambda torch: (torch.randn(64, 784), torch.randint(0, 10, (64,)))),
        "medium (CNN, 2 conv+BN, 32x32 images, batch 16)": (
            cnn, lambda torch: (torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,)))),
        "large (Transformer, 2 layers d=256, batch 8x64)": (
            Transformer, lambda torch: (torch.randint(0, 1000, (8, 64)), torch.randint(0, 1000, (8, 64)))),
    }


def step_times(build, make_batch, device, steps):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    model = build().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs, target = (tensor.to(device) for tensor in make_batch(torch))
    times = []
    for _ in range(steps + 2):
        start = time.process_time()
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss.item()
        times.append(time.process_time() - start)
    return statistics.median(times[2:])  # the first steps allocate optimizer state


def aten_ops_per_step(build, make_batch):
    """How many aten operations one training step runs (each costs the pretend accelerator a
    Python call)."""
    import torch
    import torch.nn.functional as F
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.ops += 1
            return func(*args, **(kwargs or {}))

    model = build()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs, target = make_batch(torch)
    for counting in (False, True):  # the first step creates the optimizer's state
        with Count() if counting else __import__("contextlib").nullcontext():
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return Count.ops


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    args = parser.parse_args(argv)

    import torch
    from torchdevlint.runtime import fake_accelerator
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds of "
          f"{args.steps} steps; median step time, fastest round")
    worst = 0.0
    for name, (build, make_batch) in models().items():
        plain, fake = [], []
        for round_number in range(args.rounds):
            order = ("cpu", "fake") if round_number % 2 == 0 else ("fake", "cpu")
            for which in order:
                if which == "cpu":
                    plain.append(step_times(build, make_batch, "cpu", args.steps))
                else:
                    with fake_accelerator():
                        fake.append(step_times(build, make_batch, "cuda", args.steps))
        ratio = min(fake) / min(plain)
        worst = max(worst, ratio)
        ops = aten_ops_per_step(build, make_batch)
        per_op = 1e6 * (min(fake) - min(plain)) / ops
        print(f"{name:52s} cpu {1000 * min(plain):8.2f} ms   pretend cuda {1000 * min(fake):8.2f} ms"
              f"   ratio {ratio:5.2f}x   ({ops} aten ops a step, {per_op:+.1f} us each)")
    print(f"worst ratio {worst:.2f}x (goal <= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
