"""What a ruff user expects of the command line (issue 30, points 11 and 13): a misspelt
command, --show-settings without a path, --diff's exit code, --fix-only, --ignore-noqa,
--cache-dir, -v / -s, a [tool.torchdevlint.lint] table, --watch clearing the screen, a
--help that lists every rule, and a flag for every configuration key. End to end, through
`python -m torchdevlint`, where the behaviour is the command's."""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import pytest

from conftest import run_cli
from torchdevlint import commands
from torchdevlint.rules import ALL_RULES, OPT_IN_CODES

DISCARDED = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"  # TDL001, fixable
# TDL003 only, and its fix is unsafe: plain --fix / --diff change nothing
UNFIXABLE = "import torch\nm = torch.load(path)\n"


def codes(stdout: str) -> list:
    return [line.split()[1] for line in stdout.splitlines() if ": TDL" in line]


def project(root: Path, table: str = "", files=None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(table, encoding="utf-8")
    for name, text in (files or {}).items():
        (root / name).write_text(text, encoding="utf-8")
    return root


# -- a misspelt command ----------------------------------------------------------------------

@pytest.mark.parametrize("typo,meant", [("chekc", "check"), ("chek", "check"),
                                        ("srever", "server"), ("rules", "rule")])
def test_a_misspelt_command_says_so_and_lints_nothing(tmp_path, typo, meant):
    project(tmp_path, files={"a.py": DISCARDED})
    result = run_cli(typo, ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert f"unknown command {typo!r}: did you mean {meant!r}?" in result.stderr
    assert "E902" not in result.stdout + result.stderr


def test_a_path_named_like_a_misspelt_command_is_still_linted(tmp_path):
    project(tmp_path)
    (tmp_path / "chekc").mkdir()
    (tmp_path / "chekc" / "a.py").write_text(DISCARDED, encoding="utf-8")
    result = run_cli("--no-cache", "chekc", cwd=tmp_path)
    assert result.returncode == 1 and codes(result.stdout) == ["TDL001"]


def test_a_missing_path_unlike_any_command_is_still_e902(tmp_path):
    project(tmp_path)
    for missing in ("models", "train.py"):
        result = run_cli("--no-cache", missing, cwd=tmp_path)
        assert result.returncode == 1 and "E902" in result.stdout, result.stdout + result.stderr


# -- --show-settings without a path ----------------------------------------------------------

def test_show_settings_without_a_path_shows_the_current_directory(tmp_path):
    root = project(tmp_path, '[tool.torchdevlint]\nignore = ["TDL004"]\n')
    result = run_cli("--show-settings", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "Resolved settings for: .\n" in result.stdout
    assert f"Settings path: {root / 'pyproject.toml'}" in result.stdout
    assert "TDL004" not in result.stdout.split("enabled rules")[1].splitlines()[0]
    (root / "sub").mkdir()
    first = run_cli("sub", "--show-settings", cwd=root)  # as ruff: the first path given
    assert first.returncode == 0 and "Resolved settings for: sub\n" in first.stdout


# -- --diff exits as ruff does ---------------------------------------------------------------

def test_diff_exits_1_only_when_there_is_a_diff(tmp_path):
    project(tmp_path, files={"unfixable.py": UNFIXABLE, "fixable.py": DISCARDED})
    nothing = run_cli("--diff", "unfixable.py", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (0, ""), nothing.stderr
    something = run_cli("--diff", "fixable.py", cwd=tmp_path)
    assert something.returncode == 1 and "+x = x.to('cpu')" in something.stdout
    stdin = run_cli("--diff", "-", input=UNFIXABLE, cwd=tmp_path)
    assert (stdin.returncode, stdin.stdout) == (0, "")
    stdin = run_cli("--diff", "-", input=DISCARDED, cwd=tmp_path)
    assert stdin.returncode == 1 and stdin.stdout


# -- --fix-only, and a clean --fix says nothing about fixing ---------------------------------

def test_fix_only_fixes_and_reports_nothing_left(tmp_path):
    root = project(tmp_path, files={"a.py": DISCARDED + "m = torch.load(path)\n"})
    result = run_cli("--fix-only", "--no-cache", "a.py", cwd=root)
    assert result.returncode == 0, result.stdout
    assert result.stdout == "Fixed 1 finding in 1 file.\n1 hidden fix can be enabled with " \
                            "the `--unsafe-fixes` option.\n"
    assert "x = x.to('cpu')" in (root / "a.py").read_text(encoding="utf-8")
    again = run_cli("--fix-only", "--no-cache", "a.py", cwd=root)
    assert again.returncode == 0 and "TDL003" not in again.stdout
    (root / "b.py").write_text(DISCARDED, encoding="utf-8")
    strict = run_cli("--fix-only", "--exit-non-zero-on-fix", "--no-cache", "b.py", cwd=root)
    assert strict.returncode == 1 and strict.stdout == "Fixed 1 finding in 1 file.\n"


def test_a_clean_fix_prints_no_fix_count(tmp_path):
    root = project(tmp_path, files={"a.py": "import torch\n"})
    for flags in (["--fix"], ["--diff"], ["--fix-only"]):
        result = run_cli(*flags, "--no-cache", "a.py", cwd=root)
        assert result.returncode == 0
        assert "0 findings" not in result.stdout + result.stderr, flags


# -- --ignore-noqa ---------------------------------------------------------------------------

def test_ignore_noqa_reports_what_noqa_silences_and_is_cached_apart(tmp_path):
    root = project(tmp_path, files={"a.py": "import torch\nx = torch.ones(2)\n"
                                           "x.to('cpu')  # noqa: TDL001\n"})
    assert codes(run_cli("a.py", cwd=root).stdout) == []
    ignoring = run_cli("--ignore-noqa", "a.py", cwd=root)  # (the cache is on in both runs)
    assert ignoring.returncode == 1 and codes(ignoring.stdout) == ["TDL001"]
    assert codes(run_cli("a.py", cwd=root).stdout) == []
    fixed = run_cli("--fix", "--ignore-noqa", "--no-cache", "a.py", cwd=root)
    assert fixed.returncode == 0 and "x = x.to('cpu')" in (root / "a.py").read_text()


# -- --cache-dir -----------------------------------------------------------------------------

def test_cache_dir_puts_the_cache_there(tmp_path):
    root = project(tmp_path, files={"a.py": DISCARDED})
    result = run_cli("--cache-dir", "elsewhere", "a.py", cwd=root)
    assert result.returncode == 1 and codes(result.stdout) == ["TDL001"]
    assert (root / "elsewhere" / "CACHEDIR.TAG").is_file()
    assert not (root / ".torchdevlint_cache").exists()
    again = run_cli("--cache-dir", "elsewhere", "a.py", cwd=root)  # answered from the cache
    assert again.stdout == result.stdout


# -- -v / -s ---------------------------------------------------------------------------------

def test_verbose_says_what_the_run_uses(tmp_path):
    root = project(tmp_path, "[tool.torchdevlint]\n", {"a.py": DISCARDED})
    result = run_cli("-v", "a.py", cwd=root)
    assert result.returncode == 1 and codes(result.stdout) == ["TDL001"]
    assert f"torchdevlint: configuration: {root / 'pyproject.toml'}" in result.stderr
    assert "torchdevlint: 1 file to lint" in result.stderr
    assert f"torchdevlint: cache: {root / '.torchdevlint_cache'}" in result.stderr
    assert "torchdevlint: done in" in result.stderr
    assert "torchdevlint:" not in run_cli("a.py", cwd=root).stderr


@pytest.mark.parametrize("flags", [[], ["--fix"], ["--diff"], ["--statistics"],
                                   ["--output-format", "json"]])
def test_silent_prints_nothing_and_keeps_the_exit_code(tmp_path, flags):
    root = project(tmp_path, files={"a.py": UNFIXABLE})
    for silent in ("-s", "--silent"):
        result = run_cli(silent, *flags, "--no-cache", "a.py", cwd=root)
        assert (result.stdout, result.stderr) == ("", ""), flags
        assert result.returncode == (0 if flags == ["--diff"] else 1), flags
    assert run_cli("-s", "--no-cache", "-", input="import torch\n", cwd=root).returncode == 0


# -- [tool.torchdevlint.lint] ----------------------------------------------------------------

def test_the_lint_table_holds_the_rule_keys_as_in_ruff(tmp_path):
    root = project(tmp_path, '[tool.torchdevlint]\nextend-exclude = ["skipped.py"]\n'
                             '[tool.torchdevlint.lint]\nselect = ["TDL003"]\n'
                             '[tool.torchdevlint.lint.per-file-ignores]\n"b.py" = ["TDL003"]\n',
                   {"a.py": DISCARDED + "m = torch.load(p)\n", "b.py": UNFIXABLE,
                    "skipped.py": UNFIXABLE})
    result = run_cli("--no-cache", ".", cwd=root)
    assert codes(result.stdout) == ["TDL003"] and "a.py:4" in result.stdout, result.stdout


@pytest.mark.parametrize("table,message", [
    ('[tool.torchdevlint.lint]\nexclude = ["x"]\n',
     "unknown key 'exclude' in [tool.torchdevlint.lint]: `exclude` belongs in [tool.torchdevlint]"),
    ('[tool.torchdevlint.lint]\ntarget-version = "py310"\n',
     "`target-version` belongs in [tool.torchdevlint]"),
    ('[tool.torchdevlint]\nselct = ["TDL"]\n',
     "unknown key 'selct' in [tool.torchdevlint]: did you mean `select`?"),
    ('[tool.torchdevlint.lint]\nignroe = ["TDL001"]\n', "did you mean `ignore`?"),
    ('[tool.torchdevlint]\nselect = ["TDL"]\n[tool.torchdevlint.lint]\nselect = ["TDL001"]\n',
     "`select` set both in [tool.torchdevlint] and in [tool.torchdevlint.lint]"),
    ('[tool.torchdevlint]\nlint = 3\n', "[tool.torchdevlint.lint] must be a table"),
])
def test_a_misplaced_or_misspelt_key_gets_a_hint(tmp_path, table, message):
    root = project(tmp_path, table, {"a.py": DISCARDED})
    result = run_cli("a.py", cwd=root)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


# -- --watch clears the screen ---------------------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_clear_screen_only_on_a_terminal():
    terminal, pipe = _Terminal(), io.StringIO()
    commands.clear_screen(terminal)
    commands.clear_screen(pipe)
    assert terminal.getvalue() == commands.CLEAR_SCREEN and pipe.getvalue() == ""


def test_watch_clears_the_screen_before_every_run(tmp_path, monkeypatch):
    """With watchfiles' events stood in for: a start, a timeout, then one change."""
    def fake_watch(*paths, **options):
        yield set()
        yield set()
        yield {(1, str(tmp_path / "a.py"))}
    monkeypatch.setitem(sys.modules, "watchfiles", types.SimpleNamespace(watch=fake_watch))
    happened = []
    code = commands.watch([str(tmp_path)], lambda: happened.append("run"), err=io.StringIO(),
                          clear=lambda: happened.append("clear"))
    assert code == 0 and happened == ["clear", "run", "clear", "run"]


# -- --help and the flags (point 11) ---------------------------------------------------------

def test_help_lists_every_rule_and_the_true_default_selection():
    result = run_cli("--help")
    assert result.returncode == 0
    for rule in ALL_RULES:
        assert f"{rule.code}  {rule.name}" in result.stdout, rule.code
    assert "(default: ALL)" not in result.stdout
    assert OPT_IN_CODES and all(code in result.stdout.split("--select CODES")[2]
                                for code in OPT_IN_CODES)


def test_require_accelerator_flag_overrides_the_key(tmp_path):
    source = 'import torch\nx = torch.zeros(1, device="cuda")\n'
    root = project(tmp_path, "[tool.torchdevlint]\n", {"m.py": source})
    assert codes(run_cli("--no-cache", "m.py", cwd=root).stdout) == ["TDL002"]
    assert codes(run_cli("--no-cache", "--require-accelerator", "m.py", cwd=root).stdout) == []
    (root / "pyproject.toml").write_text("[tool.torchdevlint]\nrequire-accelerator = true\n")
    assert codes(run_cli("--no-cache", "m.py", cwd=root).stdout) == []
    assert codes(run_cli("--no-cache", "--no-require-accelerator", "m.py",
                         cwd=root).stdout) == ["TDL002"]
