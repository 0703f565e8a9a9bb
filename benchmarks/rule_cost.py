"""What a set of rules costs against another, on the same files in the same process.

Each file is linted with every rule set in turn (the order alternating between rounds), and
each set's figure is the sum over files of its fastest run: on a shared machine the noise of
one moment hits every set alike, and the fastest of a few runs drops most of it. This is how
a new rule's cost is judged (issue 15 allows its five rules +15% together):

    python benchmarks/rule_cost.py --rounds 3 \\
        TDL001,TDL002,TDL003,TDL004,TDL005,TDL006 \\
        TDL001,TDL002,TDL003,TDL004,TDL005,TDL006,TDL007,TDL008,TDL009,TDL010,TDL011

The first set is the baseline; each other set is printed with its ratio to it, and the files
that cost most besides. Sources: torch's own (the installed wheel), all of it or the
subdirectories given with --dirs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", metavar="CODES",
                        help="comma-separated rule codes; the first set is the baseline")
    parser.add_argument("--dirs", nargs="*", default=None, metavar="DIR",
                        help="directories of the torch package to lint (default: all of it)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--top", type=int, default=10, help="files with the largest cost shown")
    args = parser.parse_args(argv)

    import torch  # only for where its sources are; nothing of it runs

    from torchdevlint.engine import lint_bytes
    from torchdevlint.rules import RULES_BY_CODE

    package = Path(torch.__file__).resolve().parent
    roots = [package / d for d in args.dirs] if args.dirs else [package]
    files = sorted(path for root in roots for path in root.rglob("*.py"))
    sets = [[RULES_BY_CODE[code.strip()] for code in codes.split(",")] for codes in args.sets]
    data = [(path.read_bytes(), str(path)) for path in files]
    fastest: List[List[float]] = [[float("inf")] * len(sets) for _ in data]
    for round_ in range(args.rounds):
        order = list(range(len(sets)))[::-1 if round_ % 2 else 1]
        for index, (source, name) in enumerate(data):
            for which in order:
                start = time.process_time()
                lint_bytes(source, name, sets[which])
                fastest[index][which] = min(fastest[index][which], time.process_time() - start)
    totals = [sum(row[which] for row in fastest) for which in range(len(sets))]
    print(f"{len(files)} files under {', '.join(str(r) for r in roots)}; "
          f"the fastest of {args.rounds} runs per file and set, CPU time")
    for codes, total in zip(args.sets, totals):
        print(f"  {total:8.2f} s  x{total / totals[0]:.3f}  {codes}")
    if len(sets) > 1:
        costs = sorted(((row[-1] - row[0], name) for row, (_, name) in zip(fastest, data)),
                       reverse=True)
        print("  largest costs of the last set over the first:")
        for cost, name in costs[:args.top]:
            print(f"    +{cost:.3f} s  {Path(name).relative_to(package.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
