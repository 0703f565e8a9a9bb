"""The command line around linting, as ruff users know it: `check`, `rule`, rule names as
selectors, --show-settings / --show-files, --watch, `fix = true` / --no-fix and
--exit-non-zero-on-fix. End to end, through `python -m torchdevlint`."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import run_cli
from torchdevlint.rules import ALL_RULES

BUGGY = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
FIXED = "import torch\nx = torch.ones(2)\nx = x.to('cpu')\n"


def codes(stdout: str) -> list:
    return [line.split()[1] for line in stdout.splitlines() if ": TDL" in line]


def project(root: Path, table: str = "", files=None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f"[tool.torchdevlint]\n{table}", encoding="utf-8")
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# -- check -----------------------------------------------------------------------------------

def test_check_is_the_default_command(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY, encoding="utf-8")
    plain = run_cli("--no-cache", "a.py", cwd=tmp_path)
    check = run_cli("check", "--no-cache", "a.py", cwd=tmp_path)
    assert check.returncode == plain.returncode == 1
    assert check.stdout == plain.stdout and codes(check.stdout) == ["TDL001"]
    fixed = run_cli("check", "--fix", "--no-cache", "a.py", cwd=tmp_path)
    assert fixed.returncode == 0 and (tmp_path / "a.py").read_text(encoding="utf-8") == FIXED


def test_check_alone_lints_the_current_directory(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY, encoding="utf-8")
    result = run_cli("check", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1 and codes(result.stdout) == ["TDL001"]


# -- rule / --explain by code or name --------------------------------------------------------

@pytest.mark.parametrize("key", ["TDL004", "tdl004", "unmoved-batch"])
def test_rule_by_code_or_name(key):
    result = run_cli("rule", key)
    assert result.returncode == 0
    assert result.stdout.startswith("# TDL004: unmoved-batch\n")
    assert run_cli("--explain", key).stdout == result.stdout


def test_rule_all_prints_every_page_and_json_records():
    text = run_cli("rule", "--all")
    assert text.returncode == 0
    assert [line for line in text.stdout.splitlines() if line.startswith("# TDL")] == \
        [f"# {rule.code}: {rule.name}" for rule in ALL_RULES]
    records = json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)
    assert [r["code"] for r in records] == [rule.code for rule in ALL_RULES]
    opt_in = next(r for r in records if r["code"] == "TDL009")
    assert opt_in["default_enabled"] is False and opt_in["fixable"] is True
    assert opt_in["explanation"].startswith("# TDL009: create-then-move")
    one = json.loads(run_cli("rule", "create-then-move", "--output-format", "json").stdout)
    assert one == opt_in


@pytest.mark.parametrize("args", [["rule", "TDL999"], ["rule"], ["rule", "TDL001", "--all"],
                                  ["--explain", "no-such-rule"]])
def test_rule_usage_errors(args):
    result = run_cli(*args)
    assert result.returncode == 2 and result.stdout == ""
    assert "error" in result.stderr and "Traceback" not in result.stderr


# -- rule names as selectors, --list-rules ------------------------------------------------

def test_select_and_ignore_by_name(tmp_path):
    source = "import torch\nx = torch.zeros(3).to('cuda')\ny = torch.ones(2)\ny.to('cpu')\n"
    (tmp_path / "a.py").write_text(source, encoding="utf-8")
    by_name = run_cli("--no-cache", "--isolated", "--select", "hardcoded-cuda-device", "a.py",
                      cwd=tmp_path)
    by_code = run_cli("--no-cache", "--isolated", "--select", "TDL002", "a.py", cwd=tmp_path)
    assert codes(by_name.stdout) == codes(by_code.stdout) == ["TDL002"]
    # a name selects an opt-in rule as its exact code does
    opt_in = run_cli("--no-cache", "--isolated", "--extend-select", "create-then-move",
                     "--ignore", "discarded-tensor-move", "a.py", cwd=tmp_path)
    assert sorted(codes(opt_in.stdout)) == ["TDL002", "TDL009"]


def test_rule_names_in_the_configuration(tmp_path):
    root = project(tmp_path, 'select = ["create-then-move"]\n',
                   {"a.py": "import torch\nx = torch.zeros(3).to('cuda')\n"})
    assert codes(run_cli("--no-cache", ".", cwd=root).stdout) == ["TDL009"]
    bad = project(tmp_path / "bad", 'select = ["no-such-rule"]\n', {"a.py": "x = 1\n"})
    result = run_cli("--no-cache", ".", cwd=bad)
    assert result.returncode == 2 and "NO-SUCH-RULE" in result.stderr
    assert "rule's name" in result.stderr


def test_list_rules_has_columns_and_json():
    listing = run_cli("--list-rules").stdout.splitlines()
    assert listing[0].split() == ["CODE", "NAME", "ENABLED", "FIX", "SUMMARY"]
    rows = {line.split()[0]: line.split()[1:4] for line in listing[1:]}
    assert rows["TDL009"] == ["create-then-move", "opt-in", "fix"]
    assert rows["TDL004"] == ["unmoved-batch", "default", "fix"]
    records = json.loads(run_cli("--list-rules", "--output-format", "json").stdout)
    assert {r["code"]: r["default_enabled"] for r in records} == \
        {rule.code: rule.default_enabled for rule in ALL_RULES}


# -- --show-settings / --show-files -------------------------------------------------------

def _setting(output: str, key: str) -> tuple:
    lines = output.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith(key + " "))
    return lines[index].split("=", 1)[1].strip(), lines[index + 1].split("from:", 1)[1].strip()


def test_show_settings_says_where_each_value_came_from(tmp_path):
    root = project(tmp_path, 'extend-select = ["TDL009"]\nunsafe-fixes = true\n'
                   'per-file-ignores = {"tests/*" = ["TDL002"]}\n'
                   '[project]\nname = "x"\nrequires-python = ">=3.10"\n'
                   'dependencies = ["torch>=2.6"]\n',
                   {"tests/test_a.py": "x = 1\n"})
    result = run_cli("--show-settings", "tests/test_a.py", "--ignore", "TDL001", cwd=root)
    assert result.returncode == 0, result.stderr
    output = result.stdout
    config = str(root / "pyproject.toml")
    assert f"Settings path: {config}" in output
    enabled, origin = _setting(output, "enabled rules")
    assert "TDL009" in enabled and "TDL001" not in enabled
    assert origin == f"{config}: extend-select; command line"
    for_file, origin = _setting(output, "rules for this file")
    assert "TDL002" not in for_file.split(" (")[0] and "per-file-ignores" in origin
    assert _setting(output, "unsafe-fixes") == ("true", f"{config}: unsafe-fixes")
    assert _setting(output, "force-exclude") == ("false", "default")
    assert _setting(output, "target-version") == ("py310", "[project] requires-python")
    torch_value, torch_origin = _setting(output, "torch-version")
    assert torch_value == "2.6" and "torch>=2.6" in torch_origin
    isolated = run_cli("--show-settings", "tests/test_a.py", "--isolated", cwd=root).stdout
    assert "Settings path: (none: defaults)" in isolated
    assert _setting(isolated, "unsafe-fixes") == ("false", "default")


def test_show_files_lists_what_would_be_linted(tmp_path):
    root = project(tmp_path, 'extend-exclude = ["generated"]\n', {
        "a.py": "x = 1\n", "pkg/b.py": "x = 1\n", "nb.ipynb": "{}", "notes.txt": "",
        "generated/c.py": "x = 1\n", "ignored/d.py": "x = 1\n", "venv/e.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    result = run_cli("--show-files", cwd=root)
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["a.py", "nb.ipynb", "pkg/b.py"]
    assert run_cli("--show-files", "--no-respect-gitignore", cwd=root).stdout.splitlines() == \
        ["a.py", "nb.ipynb", "ignored/d.py", "pkg/b.py"]


# -- fix = true, --no-fix, --exit-non-zero-on-fix -----------------------------------------

def test_fix_setting_and_no_fix(tmp_path):
    root = project(tmp_path, "fix = true\n", {"a.py": BUGGY, "b.py": BUGGY})
    kept = run_cli("--no-cache", "--no-fix", "a.py", cwd=root)
    assert kept.returncode == 1 and codes(kept.stdout) == ["TDL001"]
    assert (root / "a.py").read_text(encoding="utf-8") == BUGGY
    fixed = run_cli("--no-cache", "b.py", cwd=root)
    assert fixed.returncode == 0 and (root / "b.py").read_text(encoding="utf-8") == FIXED


def test_exit_non_zero_on_fix(tmp_path):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(BUGGY, encoding="utf-8")
    assert run_cli("--no-cache", "--fix", "a.py", cwd=tmp_path).returncode == 0
    stopped = run_cli("--no-cache", "--fix", "--exit-non-zero-on-fix", "b.py", cwd=tmp_path)
    assert stopped.returncode == 1 and (tmp_path / "b.py").read_text(encoding="utf-8") == FIXED
    # nothing left to fix: the commit goes through
    again = run_cli("--no-cache", "--fix", "--exit-non-zero-on-fix", "b.py", cwd=tmp_path)
    assert again.returncode == 0
    stdin = run_cli("--fix", "--exit-non-zero-on-fix", "-", input=BUGGY, cwd=tmp_path)
    assert stdin.returncode == 1 and stdin.stdout == FIXED


# -- --watch ---------------------------------------------------------------------------------

def _lines(stream) -> "queue.Queue":
    """The stream's lines, read by a thread: the test waits with a deadline, never blocks."""
    lines: "queue.Queue" = queue.Queue()

    def pump():
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _read_until(lines, needle: str, deadline: float) -> str:
    seen = ""
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            line = None
        if line is None:
            raise AssertionError(f"{needle!r} not seen before the deadline; got:\n{seen}")
        seen += line
        if needle in line:
            return seen


def test_watch_lints_again_on_change(tmp_path):
    pytest.importorskip("watchfiles")
    (tmp_path / "a.py").write_text(BUGGY, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "torchdevlint", "--watch", "--no-cache", "."], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NO_COLOR": "1"})
    errors = _lines(process.stderr)
    try:
        deadline = time.monotonic() + 60
        _read_until(errors, "waiting for changes", deadline)
        # the first run's report came before the first "waiting" line
        (tmp_path / "a.py").write_text(FIXED, encoding="utf-8")
        _read_until(errors, "changed: a.py", deadline)
        _read_until(errors, "waiting for changes", deadline)
        (tmp_path / "b.py").write_text(BUGGY, encoding="utf-8")
        _read_until(errors, "changed: b.py", deadline)
        _read_until(errors, "waiting for changes", deadline)
    finally:
        process.terminate()
        process.wait(timeout=30)
    stdout = process.stdout.read()  # (stderr is the reading thread's)
    runs = [block for block in stdout.split("\n") if block.startswith(("a.py:", "b.py:"))]
    assert runs == [line for line in runs if "TDL001" in line]
    assert [line.split(":")[0] for line in runs] == ["a.py", "b.py"]
    assert "All checks passed!" in stdout


def test_watch_without_watchfiles_says_what_to_install(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "watchfiles.py").write_text("raise ImportError('not installed')\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "torchdevlint", "--watch", "."], cwd=tmp_path,
                            capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(blocker)})
    assert result.returncode == 2
    assert "torchdevlint[watch]" in result.stderr and "Traceback" not in result.stderr
