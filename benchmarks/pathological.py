"""Time to lint pathological inputs (deep nesting, long chains, huge literals), against a
plain file of the same size linted in the same run.

    python benchmarks/pathological.py            # every kind, fastest of 3
    python benchmarks/pathological.py --rounds 5

The inputs are the ones ``tests/test_syntax.py`` checks for behaviour (at most one diagnostic,
or the deep expression left out and the rest analysed). The tests assert no time: speed is
measured here. Each kind is linted with ``engine.lint_source`` in this process (CPU time,
fastest of ``--rounds``); the baseline is a file of ordinary statements with as many
characters (``y{i} = y{i-1} + 1``), so the ratio says what the shape costs, not the size.
A kind far above 1x costs more than its size explains (a quadratic walk, a retry).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from torchdevlint.engine import lint_source  # noqa: E402


def cases() -> dict[str, str]:
    import test_syntax  # the same inputs as the behaviour tests

    prefix = test_syntax.PREFIX
    kinds = {f"expression: {k}": prefix + v + "\n" for k, v in test_syntax.PATHOLOGICAL.items()}
    kinds.update({f"statement: {k}": prefix + v + "\n"
                  for k, v in test_syntax.DEEP_STATEMENTS.items()})
    return kinds


def plain(chars: int) -> str:
    # the same first lines as the inputs (a move, so that the prefilter sends it to LibCST)
    lines, size, i = ["import torch\ny = torch.ones(2)\ny.to('cpu')\ny0 = y\n"], 0, 1
    while size < chars:
        line = f"y{i} = y{i - 1} + 1\n"
        lines.append(line)
        size += len(line)
        i += 1
    return "".join(lines)


def cpu(source: str, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        lint_source(source, "p.py")
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    lint_source("import torch\nx = torch.ones(2)\nx.to('cpu')\n", "warm.py")  # imports
    rows = []
    for kind, source in sorted(cases().items()):
        seconds = cpu(source, args.rounds)
        baseline = cpu(plain(len(source)), args.rounds)
        rows.append((kind, len(source), seconds, baseline))
    print(f"| input | chars | CPU s | plain file, same size | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for kind, chars, seconds, baseline in rows:
        print(f"| {kind} | {chars:,} | {seconds:.3f} | {baseline:.3f} | "
              f"{seconds / baseline if baseline else float('inf'):.2f}x |")
    worst = max(rows, key=lambda r: r[2])
    print(f"\nslowest: {worst[0]} {worst[2]:.3f} s CPU")


if __name__ == "__main__":
    main()
