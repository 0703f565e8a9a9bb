"""--jobs, the result cache, the progress line, the prefilter and the benchmark script.

Nothing here times anything (speed is measured by benchmarks/bench.py); these tests check that
the machinery that makes torchdevlint fast never changes what it reports.
"""
from __future__ import annotations

import ast
import gc
import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from conftest import FIXTURES, ROOT, fixture_files, run_cli
from torchdevlint import progress as progress_module
from torchdevlint.cache import CACHE_DIR_NAME, Cache, project_root
from torchdevlint.engine import lint_source
from torchdevlint.parallel import run_per_file
from torchdevlint.config import select_rules
from torchdevlint.rules import ALL_RULES
from torchdevlint.runner import lint_path

BUGGY = "import torch\nx = torch.ones(2)\nx.to('cpu')\nx.cuda()\n"
CLEAN = "import torch\nx = torch.ones(2)\nx = x.to('cpu')\n"


def _project(tmp_path: Path, files: int = 14) -> Path:
    """A small project: buggy, clean, broken and undecodable files in nested directories."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for index in range(files):
        directory = tmp_path / "pkg" / f"sub{index % 3}"
        directory.mkdir(parents=True, exist_ok=True)
        text = BUGGY if index % 2 else CLEAN
        (directory / f"m{index:02d}.py").write_text(text + f"y{index} = {index}\n")
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "pkg" / "binary.py").write_bytes(b"\x00\x01")
    return tmp_path


# -- --jobs ---------------------------------------------------------------------------------


def test_parallel_run_prints_what_a_serial_run_prints_in_the_same_order(tmp_path):
    project = _project(tmp_path)
    serial = run_cli("--no-cache", "--jobs", "1", "pkg", cwd=project)
    parallel = run_cli("--no-cache", "--jobs", "3", "pkg", cwd=project)
    assert serial.returncode == parallel.returncode == 1
    assert parallel.stdout == serial.stdout
    assert "Found 21 findings (TDL001: 14, TDL002: 7); 2 files could not be analysed" in serial.stdout
    assert "binary.py:1:1: E999 SyntaxError: source code string cannot contain null bytes" \
        in serial.stdout
    paths = [line.split(":")[0] for line in serial.stdout.splitlines() if ".py:" in line]
    assert paths == sorted(paths, key=lambda p: (os.path.dirname(p), os.path.basename(p)))


def test_jobs_must_be_positive():
    assert run_cli("--jobs", "0", ".").returncode == 2
    assert run_cli("--jobs", "many", ".").returncode == 2


def test_run_per_file_keeps_input_order():
    items = list(range(-40, 40, 3))
    assert list(run_per_file(abs, items, jobs=3)) == [abs(i) for i in items]
    assert list(run_per_file(abs, items, jobs=1)) == [abs(i) for i in items]


def _crashed(item, reason):
    return ("crashed", item)


def test_a_dead_worker_loses_no_item():
    # os._exit kills the worker process the way an out-of-memory kill or a segfault would.
    results = list(run_per_file(os._exit, [3, 4, 5], jobs=2, on_crash=_crashed))
    assert results == [("crashed", 3), ("crashed", 4), ("crashed", 5)]


# -- the cache ------------------------------------------------------------------------------


def _cache_entries(project: Path) -> list:
    return [p for p in (project / CACHE_DIR_NAME).rglob("*")
            if p.is_file() and p.parent.parent.parent.name == CACHE_DIR_NAME]


def test_cache_lives_at_the_project_root_and_is_tagged(tmp_path):
    project = _project(tmp_path)
    first = run_cli("pkg/sub1", cwd=project / "pkg" / "..")
    cache_dir = project / CACHE_DIR_NAME
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache_dir / ".gitignore").read_text().strip() == "*"
    assert _cache_entries(project)
    second = run_cli("pkg/sub1", cwd=project)
    assert second.stdout == first.stdout and second.returncode == first.returncode == 1
    assert project_root([str(project / "pkg" / "sub1")]) == project.resolve()


def test_no_cache_writes_nothing(tmp_path):
    project = _project(tmp_path, files=2)
    assert run_cli("--no-cache", "pkg", cwd=project).returncode == 1
    assert not (project / CACHE_DIR_NAME).exists()


def test_an_unchanged_file_is_not_parsed_again(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(BUGGY)
    cache = Cache(tmp_path, [rule.code for rule in ALL_RULES])
    assert cache.prepare()
    first = lint_path(path, ALL_RULES, cache)
    assert [f.code for f in first.findings] == ["TDL001", "TDL001", "TDL002"]

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed although cached")

    monkeypatch.setattr("torchdevlint.runner.lint_bytes", no_parsing)
    again = lint_path(path, ALL_RULES, cache)
    assert again.findings == first.findings and again.error is None
    # The same content elsewhere shares the entry, reported under its own path.
    copy = tmp_path / "copy.py"
    copy.write_text(BUGGY)
    assert [f.path for f in lint_path(copy, ALL_RULES, cache).findings] == [str(copy)] * 3
    # An edit is a different key: linted again (and here the parse is refused).
    path.write_text(BUGGY + "\n")
    assert lint_path(path, ALL_RULES, cache).internal_error


def test_cache_key_depends_on_the_selected_rules(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BUGGY)
    only_one = select_rules(["TDL001"])
    every = Cache(tmp_path, [rule.code for rule in ALL_RULES])
    one = Cache(tmp_path, [rule.code for rule in only_one])
    assert every.directory != one.directory
    every.prepare(), one.prepare()
    assert len(lint_path(path, ALL_RULES, every).findings) == 3
    assert [f.code for f in lint_path(path, only_one, one).findings] == ["TDL001", "TDL001"]


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"findings": [[1]], "error": null}',
                                     b'{"findings": [["1", 1, "TDL001", "m", 0, 0]], "error": null}',
                                     b"\xff\xfe"])
def test_a_corrupt_entry_is_ignored(tmp_path, garbage):
    project = _project(tmp_path, files=4)
    expected = run_cli("pkg", cwd=project)
    entries = _cache_entries(project)
    assert entries
    for entry in entries:
        entry.write_bytes(garbage)
    again = run_cli("pkg", cwd=project)
    assert again.stdout == expected.stdout and again.returncode == 1 and not again.stderr


def test_concurrent_runs_share_the_cache(tmp_path):
    project = _project(tmp_path, files=10)
    expected = run_cli("--no-cache", "pkg", cwd=project).stdout
    env = dict(os.environ)
    runs = [subprocess.Popen([sys.executable, "-m", "torchdevlint", "-j", "2", "pkg"], cwd=project,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(3)]
    outputs = [run.communicate() for run in runs]
    assert all(out == expected and not err for out, err in outputs)
    assert not [p for p in (project / CACHE_DIR_NAME).rglob(".tmp-*")]
    assert run_cli("pkg", cwd=project).stdout == expected


# -- progress -------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress_module, "_DELAY_S", 0.0)
    monkeypatch.setattr(progress_module, "_INTERVAL_S", 0.0)
    piped = io.StringIO()
    bar = progress_module.Progress.for_stream(piped, 3)
    bar.advance(2), bar.advance(), bar.clear()
    assert piped.getvalue() == ""
    terminal = _Terminal()
    bar = progress_module.Progress.for_stream(terminal, 3)
    bar.advance(2)
    assert "[1/3]" in terminal.getvalue() and "2 findings" in terminal.getvalue()
    bar.clear()
    assert terminal.getvalue().endswith("\r\033[K")
    silent = _Terminal()
    bar = progress_module.Progress.for_stream(silent, 3, enabled=False)  # e.g. --format json
    bar.advance()
    assert silent.getvalue() == ""


def test_piped_stderr_gets_no_progress(tmp_path):
    project = _project(tmp_path, files=6)
    result = run_cli("--no-cache", "pkg", cwd=project)
    assert result.stderr == ""


# -- the prefilter never loses a finding ----------------------------------------------------


def _both_ways(source: str, path: str = "m.py"):
    """Findings with every prefilter (text, and ast as under flake8) and with none."""
    kept = lint_source(source, path, ALL_RULES, tree=ast.parse(source))
    full = lint_source(source, path, ALL_RULES, prefilter=False)
    return ([(f.line, f.column, f.code, f.message) for f in kept.findings],
            [(f.line, f.column, f.code, f.message) for f in full.findings])


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_prefilter_is_exact_on_fixtures(path):
    kept, full = _both_ways(path.read_text(encoding="utf-8"), str(path))
    assert kept == full


@pytest.mark.parametrize("source", [
    "import torch\nx = torch.ones(2)\nx . to ('cpu')\n",
    "import torch\nx = torch.ones(2)\nx.\\\n    cpu()\n",
    "import torch\nx = torch.ones(2)\n(x.to  # where to\n   # and again\n ('cpu'))\n",
    "import torch\nm = torch.nn.Linear(2, 2)\nm.cuda  (  )\n",
    "import torch\nt = torch.cuda . FloatTensor(2)\n",
    "import torch\ndevice = torch.device('cuda:0')\n",
    'import torch\ndevice = torch.device("""cuda""")\n',
    "from torch import load as read\nstate = read('w.pt')\n",
    "import torch.hub\nw = torch.hub.load_state_dict_from_url('u')\n",
    "from torch.utils.model_zoo import load_url\nw = load_url('u')\n",
    # TDL001 as a statement however it is written; TDL004 with a loader known by any name
    "import torch\nx = torch.ones(2)\nif x.sum():\n    (x\n     .cpu())\n",
    "import torch\nx = torch.ones(2)\nx.to('cpu'); y = 1\n",
    "import torch\nfrom torch.utils.data import DataLoader as DL\n"
    "d = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "m = torch.nn.Linear(2, 2).to(d)\nfor x, y in DL([]):\n    m(x)\n",
    "import torch\nd = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "m = torch.nn.Linear(2, 2).to(d)\nfor x, y in self.val_LOADER:\n    m(x)\n",
])
def test_prefilter_keeps_unusual_spellings(source):
    kept, full = _both_ways(source)
    assert full, "the snippet should have a finding"
    assert kept == full


@pytest.mark.parametrize("source, candidates", [
    # .to( everywhere, but no move is a whole statement, and no loader: nothing to parse
    ("import torch\nh = x.to(torch.float32)\nfor layer in layers:\n    h = layer(h.to(d))\n", []),
    ("import torch\nx = torch.ones(2)\nx.to('cpu')\n", ["TDL001"]),
    # TDL004 has no ast test, so the file is parsed anyway and the ast is not asked
    ("import torch\nfor b in train_loader:\n    b = b.to(d)\n", ["TDL001", "TDL004"]),
])
def test_ast_prefilter_parses_only_files_a_rule_could_report_in(source, candidates):
    from torchdevlint.engine import candidate_rules
    assert {r.code for r in candidate_rules(source, ALL_RULES)} >= set(candidates)
    assert [r.code for r in candidate_rules(source, ALL_RULES, ast.parse(source))] == candidates


def _torch_sample(count: int, max_bytes: int = 40_000) -> list:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    base = Path(list(spec.submodule_search_locations)[0])
    files = sorted(p for p in base.rglob("*.py") if p.stat().st_size <= max_bytes)
    step = max(1, len(files) // count)
    return files[::step][:count]


def test_prefilter_is_exact_on_real_files():
    sample = _torch_sample(60)
    if not sample:
        pytest.skip("torch is not installed")
    skipped = 0
    for path in sample:
        source = path.read_text(encoding="utf-8", errors="replace")
        kept, full = _both_ways(source, str(path))
        assert kept == full, path
        skipped += not lint_source(source, str(path), ALL_RULES).findings and not full
    assert skipped  # the sample exercises files the prefilter skips


# -- the benchmark script -------------------------------------------------------------------


def test_benchmark_script_runs_and_prints_the_figures(tmp_path):
    out = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--no-torch", "--no-transformers",
         "--corpus", f"fixtures={FIXTURES}", "--limit", "6", "--peer-limit", "3", "--no-peers",
         "--large-lines", "400", "--rounds", "2", "--jobs", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for label in ("LibCST parse alone (floor)", "torchdevlint cold, 1 job", "torchdevlint cold, 2 jobs",
                  "torchdevlint warm (cache)", "flake8 -j1 with the torchdevlint plugin",
                  "flake8 -j1 without it", "torchdevlint cold 1 job / floor", "warm / cold",
                  "flake8 with plugin / without", "peak MB per process", "time per line"):
        assert label in text, label
    assert "cold 1 job == cold 2 jobs: True; cold == warm: True" in text
    import json
    figures = json.loads(out.read_text())
    assert {row["corpus"] for row in figures["rows"]} >= {"fixtures"}
    assert all(row["cpu_s"] > 0 for row in figures["rows"])


# -- a linted file's tree is freed by reference counting ------------------------------------

FREED_SOURCE = """\
{marker}
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return [self.fc(y) for y in x if (lambda z: z)(y) is not None]

def train(model, loader):
    for data, target in loader:
        model(data)

x = torch.zeros(1).cuda()
"""


def _trees_alive(marker: str) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is cst.Module  # (no isinstance: abc hooks)
               and any(line.comment is not None and line.comment.value == marker for line in o.header))


def _lint_with_collector_off(lint, marker: str):
    """What ``lint`` leaves alive of the file marked ``marker`` while no collection runs: an
    analysis cycle would keep the whole tree until the collector traverses it."""
    gc.collect()
    gc.disable()
    try:
        found = lint()
        return found, _trees_alive(marker)
    finally:
        gc.enable()


def test_cli_front_end_frees_each_tree_without_the_collector(tmp_path):
    marker = "# tree freed by refcounting (cli)"
    path = tmp_path / "net.py"
    path.write_text(FREED_SOURCE.format(marker=marker))
    from torchdevlint.runner import lint_files
    results, alive = _lint_with_collector_off(lambda: list(lint_files([path], ALL_RULES)), marker)
    assert [f.code for f in results[0].findings] in (["TDL002"], ["TDL002", "TDL009"])  # TDL009: opt-in
    assert alive == 0


def test_flake8_plugin_frees_each_tree_without_the_collector():
    marker = "# tree freed by refcounting (flake8)"
    from torchdevlint.flake8_plugin import TorchDevLintChecker
    lines = FREED_SOURCE.format(marker=marker).splitlines(True)
    reported, alive = _lint_with_collector_off(
        lambda: [m.split()[0] for _, _, m, _ in TorchDevLintChecker(None, lines, "net.py").run()],
        marker)
    assert reported == ["TDL002"]
    assert alive == 0


def test_the_check_above_sees_a_tree_that_is_still_alive():
    marker = "# tree kept alive"
    result, alive = _lint_with_collector_off(
        lambda: lint_source(FREED_SOURCE.format(marker=marker), "net.py"), marker)
    assert result.module is not None and alive == 1
