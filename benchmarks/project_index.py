"""What the project index (issue 27) costs: cold with the index against without it, warm
against cold, one changed file in a generated 2,000-file project, and peak memory.

    python benchmarks/project_index.py                         # torch's installed sources
    python benchmarks/project_index.py --corpus PATH --limit 400
    python benchmarks/project_index.py --generated 2000 --no-corpus
    python benchmarks/project_index.py --no-corpus --changed-only --changed-rounds 7
    python benchmarks/project_index.py --no-corpus --changed-only --baseline /tmp/base

Every figure is a child process's (``torchdevlint`` on the command line, ``-j`` as given):
wall time, CPU time (user + system of the children) and the peak resident memory of the
largest process. "without" runs set ``TORCHDEVLINT_NO_INDEX=1``; both run in the same
invocation, interleaved, on the same files, each with its own empty cache directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
_KEEP_BYTECODE_SETTING = False  # ``--no-bytecode``

_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                      env=json.loads(sys.argv[1]))
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024, "rc": done.returncode,
                  "stderr": done.stderr.decode()[-400:]}))
"""


def measure(args: Sequence[str], cwd: Path, index: bool,
            pythonpath: Optional[str] = None) -> Dict[str, float]:
    """One child run's figures; ``pythonpath``: import torchdevlint from that checkout."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.pop("TORCHDEVLINT_NO_INDEX", None)
    # (an installed package has its bytecode: a child that compiled the package's 60-odd
    # modules from source in every run, as PYTHONDONTWRITEBYTECODE=1 makes it, paid 0.2 s
    # of CPU that no user pays; ``--no-bytecode`` keeps the environment's setting)
    if not _KEEP_BYTECODE_SETTING:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not index:
        env["TORCHDEVLINT_NO_INDEX"] = "1"
    # (``-P``: the project's own modules are not importable as top-level ones; torch's
    # sources, copied as a project, hold a ``types.py`` that shadowed the standard library's
    # in both processes, and the default run on torch failed to start)
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    out = subprocess.run([sys.executable, *safe, "-c", _MEASURE, json.dumps(env),
                          sys.executable, *safe, "-m", "torchdevlint", "--exit-zero", *args],
                         cwd=cwd, capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout)
    if figures["rc"] != 0:  # (``--exit-zero``: anything else is a failure to run)
        raise SystemExit(f"torchdevlint failed: {figures['stderr']}")
    return figures


def torch_sources() -> Optional[Path]:
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).parent if spec and spec.origin else None


def corpus_copy(source: Path, limit: Optional[int], into: Path) -> Path:
    """The corpus as a project of its own (a pyproject.toml at its root), ``limit`` files
    evenly spread, keeping their paths (the index resolves imports by them)."""
    files = sorted(p for p in source.rglob("*.py") if "__pycache__" not in p.parts)
    if limit is not None and len(files) > limit:
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    target = into / source.name
    for path in files:
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    (target / "pyproject.toml").write_text("[project]\nname = 'corpus'\n")
    return target


def generated_project(files: int, into: Path) -> Path:
    """A project of ``files`` modules: a flags module, model modules, training scripts that
    import both (guards across imports, saves and loads across files)."""
    root = into / "generated"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'generated'\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "flags.py").write_text(
        "import os\nimport torch\n\nUSE_FUSED = torch.cuda.is_available() and "
        "os.environ.get('NO_FUSED') is None\n")
    for number in range(files - 2):
        if number % 2:
            text = (f"import torch\nfrom torch import nn\n\n\nclass Net{number}(nn.Module):\n"
                    f"    def __init__(self):\n        super().__init__()\n"
                    f"        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n"
                    f"        return self.fc(x) + torch.ones(8)\n" + "\n# padding\n" * 40)
        else:
            text = (f"import torch\n\nfrom pkg.flags import USE_FUSED\nfrom pkg.m{number + 1} "
                    f"import Net{number + 1}\n\n\ndef train(device):\n"
                    f"    model = Net{number + 1}().to(device)\n    if USE_FUSED:\n"
                    f"        model = model.to('cuda')\n"
                    f"    torch.save(model.state_dict(), 'ckpt{number}.pt')\n\n\n"
                    f"def evaluate():\n    return torch.load('ckpt{number}.pt')\n"
                    + "\n# padding\n" * 40)
        (root / "pkg" / f"m{number}.py").write_text(text)
    return root


def parse_floor(project: Path) -> Dict[str, float]:
    """LibCST's parse of every file of ``project`` in one process (bench.py's floor)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.bench import _FLOOR
    names = "\n".join(str(p) for p in sorted(project.rglob("*.py")))
    out = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(dict(os.environ)),
                          "/bin/sh", "-c", f'{sys.executable} -c "$0" < "$1"', _FLOOR,
                          str(_write(project.parent / "floor-files.txt", names))],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def compare(label: str, project: Path, jobs: int, rounds: int, results: Dict,
            floor: bool = False) -> None:
    """Cold with and without the index (each with an empty cache), then warm; with
    ``floor``, LibCST's parse of the same files too."""
    rows: Dict[str, List[Dict[str, float]]] = {"cold_index": [], "cold_no_index": [],
                                               "warm_index": [], "warm_no_index": []}
    for _ in range(rounds):
        for index in (True, False):
            name = "index" if index else "no_index"
            cache = Path(tempfile.mkdtemp(prefix="tdl-bench-cache-"))
            shutil.rmtree(project / ".torchdevlint_cache", ignore_errors=True)
            args = ["-j", str(jobs), "--cache-dir", str(cache), "."]
            rows[f"cold_{name}"].append(measure(args, project, index))
            rows[f"warm_{name}"].append(measure(args, project, index))
            shutil.rmtree(cache, ignore_errors=True)
    if floor:
        rows["parse_floor"] = [parse_floor(project) for _ in range(rounds)]
    best = {key: min(values, key=lambda f: f["cpu"]) for key, values in rows.items()}
    results[label] = best
    cold, base = best["cold_index"], best["cold_no_index"]
    warm = best["warm_index"]
    print(f"\n{label}  (best of {rounds}, -j {jobs})")
    for key, figures in best.items():
        print(f"  {key:14} wall {figures['wall']:7.2f} s  cpu {figures['cpu']:7.2f} s  "
              f"peak {figures['peak_mb']:7.1f} MB")
    print(f"  cold with index / without: cpu x{cold['cpu'] / base['cpu']:.3f}, "
          f"wall x{cold['wall'] / base['wall']:.3f}, peak {cold['peak_mb'] - base['peak_mb']:+.1f} MB")
    if floor:
        print(f"  cold with index / LibCST parse floor: cpu "
              f"x{cold['cpu'] / best['parse_floor']['cpu']:.3f} (without the index "
              f"x{base['cpu'] / best['parse_floor']['cpu']:.3f})")
    print(f"  warm / cold (with index): wall {warm['wall'] / cold['wall']:.1%}, "
          f"cpu {warm['cpu'] / cold['cpu']:.1%}")


def one_changed_file(project: Path, jobs: int, results: Dict, rounds: int = 1,
                     baseline: Optional[Path] = None) -> None:
    """Warm, then one leaf module changed (``rounds`` times, a new edit each time: issue 27's
    "one changed file in a 2,000-file project, warm, under 1 s of wall time"), then the
    flags module that half the project imports. With ``baseline`` (a checkout of another
    revision), its runs (on a copy of the project, with a cache of their own) alternate
    with this one's, round by round, so that both see the same load."""
    variants = {"this": (project, None)}
    if baseline is not None:
        copy = project.parent / "generated-baseline"
        shutil.copytree(project, copy)
        variants["baseline"] = (copy, str(baseline))
    caches = {name: Path(tempfile.mkdtemp(prefix="tdl-bench-cache-")) for name in variants}
    runs: Dict[str, Dict[str, list]] = {name: {"warm": [], "one_leaf": [], "flags": []}
                                        for name in variants}

    def run(name: str, kind: str) -> None:
        where, path = variants[name]
        args = ["-j", str(jobs), "--cache-dir", str(caches[name]), "."]
        runs[name][kind].append(measure(args, where, True, pythonpath=path))

    for name in variants:
        run(name, "flags")  # cold: fills the cache
        runs[name]["flags"].clear()
    for round_ in range(rounds):
        for name in variants if round_ % 2 == 0 else list(variants)[::-1]:
            run(name, "warm")
    for round_ in range(rounds):
        for name in variants if round_ % 2 == 0 else list(variants)[::-1]:
            changed = variants[name][0] / "pkg" / "m0.py"
            changed.write_text(changed.read_text() + f"\nx{round_} = 1\n")
            run(name, "one_leaf")
    for name in variants:
        flags = variants[name][0] / "pkg" / "flags.py"  # a file many others depend on
        flags.write_text(flags.read_text() + "\ny = 2\n")
        run(name, "flags")
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)
    results["changed"] = runs
    print(f"\none changed file, warm ({len(list(project.rglob('*.py')))} files, -j {jobs}, "
          f"{rounds} run(s) each but the last)")
    for name in variants:
        if len(variants) > 1:
            print(f" {name}{'' if variants[name][1] is None else ' (' + variants[name][1] + ')'}")
        for label, kind in (("warm, nothing changed", "warm"),
                            ("a leaf module changed", "one_leaf"),
                            ("the flags module changed", "flags")):
            walls = sorted(f["wall"] for f in runs[name][kind])
            cpus = sorted(f["cpu"] for f in runs[name][kind])
            print(f"  {label:26} wall min {walls[0]:6.2f} s  median "
                  f"{statistics.median(walls):6.2f} s  cpu min {cpus[0]:6.2f} s  median "
                  f"{statistics.median(cpus):6.2f} s  "
                  f"peak {max(f['peak_mb'] for f in runs[name][kind]):6.1f} MB")
    if baseline is not None:
        for kind in ("warm", "one_leaf"):
            this, base = (statistics.median(f["cpu"] for f in runs[name][kind])
                          for name in ("this", "baseline"))
            wall_this, wall_base = (statistics.median(f["wall"] for f in runs[name][kind])
                                    for name in ("this", "baseline"))
            print(f"  {kind}: this / baseline, median cpu x{this / base:.3f}, "
                  f"median wall x{wall_this / wall_base:.3f}")
    print("  (changing the flags module lints its dependents again, as it must)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="default: torch's installed sources")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--limit", type=int, help="at most N files of the corpus")
    parser.add_argument("--generated", type=int, default=2000,
                        help="files of the generated project (0: none)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--changed-rounds", type=int, default=5,
                        help="runs of the warm and the one-changed-file figures (min, median)")
    parser.add_argument("--changed-only", action="store_true",
                        help="of the generated project, only the warm and changed-file figures")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE as the environment sets it")
    parser.add_argument("--baseline", type=Path,
                        help="a checkout of another revision (git archive REV | tar -x -C "
                             "DIR): its changed-file runs alternate with this one's")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args(argv)
    global _KEEP_BYTECODE_SETTING
    _KEEP_BYTECODE_SETTING = options.no_bytecode
    results: Dict = {}
    with tempfile.TemporaryDirectory(prefix="tdl-bench-") as scratch:
        if not options.no_corpus:
            source = options.corpus or torch_sources()
            if source is None:
                print("no corpus: torch is not installed (pass --corpus PATH)")
            else:
                project = corpus_copy(source, options.limit, Path(scratch))
                compare(f"corpus {source}", project, options.jobs, options.rounds, results,
                        floor=True)
        if options.generated:
            project = generated_project(options.generated, Path(scratch))
            if not options.changed_only:
                compare(f"generated {options.generated} files", project, options.jobs,
                        options.rounds, results)
            one_changed_file(project, options.jobs, results, options.changed_rounds,
                             options.baseline)
    if options.json:
        options.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
