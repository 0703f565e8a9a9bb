"""Memory and time of one huge generated module, linted in parts against linted whole.

    python benchmarks/large_module.py                      # 595,000 lines (20 MB), as in issue 30
    python benchmarks/large_module.py --lines 120000 --whole 70000

The module is what a code generator writes: ``vN = torch.zeros(k) + N`` line after line, and
one ``x.to("cpu")`` (a TDL001 finding) at the end, which sends the file past the prefilter.
Every figure comes from a child process (``bench.measure``): wall and CPU seconds and its peak
resident memory. Each size is linted by the command line as it ships (in parts from
``chunks.LARGE_MODULE_CHARS`` on) and, up to the sizes given with ``--whole`` (the baseline,
measured in the same run), by ``engine.lint_source(..., in_parts=False)``, the whole-module
analysis every file got before; memory per byte of source and the ratios are printed. The
whole-module baseline grows with the file (about 1 GB per MB of this code): it is not run at
20 MB, where it took 18 GB and 5 min 38 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench import PYTHON, child_env, measure  # noqa: E402

# Runs in a child: one file linted by the engine, in parts or whole (the baseline).
_ENGINE = """
import sys
from torchdevlint.engine import lint_source
result = lint_source(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1],
                     in_parts=sys.argv[2] == "parts")
print(len(result.findings), result.error)
"""


def generate(lines: int) -> str:
    body = [f"v{i} = torch.zeros({i % 7 + 1}) + {i}\n" for i in range(lines)]
    return "import torch\n" + "".join(body) + 'x = torch.zeros(3)\nx.to("cpu")\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=595_000,
                        help="lines of the huge module (default: 595000, 20 MB)")
    parser.add_argument("--whole", default="70000,100000",
                        help="sizes (lines) also linted whole, the baseline (default: "
                             "70000,100000, 2.2 and 3.2 MB; each MB costs about 1 GB whole)")
    args = parser.parse_args()
    whole_sizes = sorted({int(n) for n in args.whole.split(",") if n.strip()})
    sizes = sorted(set(whole_sizes) | {args.lines})
    env = child_env()
    print(f"{'lines':>8} {'MB':>6} {'how':<22} {'findings':>8} {'wall s':>7} {'CPU s':>7} "
          f"{'peak MiB':>8} {'peak/source':>11}")
    rows = {}
    with tempfile.TemporaryDirectory() as scratch:
        for lines in sizes:
            path = Path(scratch) / f"generated_{lines}.py"
            source = generate(lines)
            path.write_text(source)
            megabytes = len(source) / 1e6
            runs = [("command line", [PYTHON, "-m", "torchdevlint", "--no-cache", "-j", "1",
                                      str(path)]),
                    ("engine, in parts", [PYTHON, "-c", _ENGINE, str(path), "parts"])]
            if lines in whole_sizes:
                runs.append(("engine, whole (before)", [PYTHON, "-c", _ENGINE, str(path), "whole"]))
            for how, command in runs:
                run = measure(command, Path(scratch), env=env)
                output = run.output.decode("utf-8", "replace")
                findings = (output.count(": TDL001 ") if how == "command line"
                            else output.split()[0] if output.split() else "?")
                rows[lines, how] = run
                print(f"{lines:>8} {megabytes:>6.1f} {how:<22} {findings:>8} {run.wall:>7.1f} "
                      f"{run.cpu:>7.1f} {run.rss_mb:>8.0f} {run.rss_mb * 2**20 / len(source):>10.1f}x")
            path.unlink()
    print()
    for lines in whole_sizes:
        parts, whole = rows.get((lines, "engine, in parts")), rows.get((lines, "engine, whole (before)"))
        if parts and whole:
            print(f"{lines} lines: in parts / whole = {parts.rss_mb / whole.rss_mb:.3f} x peak "
                  f"memory, {parts.cpu / whole.cpu:.3f} x CPU time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
