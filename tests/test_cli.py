"""The command line as a user runs it: output, exit codes, options, bad input."""
from __future__ import annotations

import re

import pytest

from conftest import FIXTURES, ROOT, run_cli
from torchdevlint import __version__
from torchdevlint.rules import ALL_RULES

FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?:\[\*\] )?(?P<msg>.+)$")
BUGGY = "import torch\nx = torch.ones(2)\nx.to('cpu')\n"
CLEAN = "import torch\nx = torch.ones(2)\nx = x.to('cpu')\n"


def findings(stdout: str) -> list:
    return [m.groupdict() for m in map(FINDING.match, stdout.splitlines()) if m]


def test_exit_codes(tmp_path):
    (tmp_path / "bad.py").write_text(BUGGY)
    (tmp_path / "good.py").write_text(CLEAN)
    clean = run_cli(tmp_path / "good.py")
    assert clean.returncode == 0 and "All checks passed" in clean.stdout
    dirty = run_cli(tmp_path)
    assert dirty.returncode == 1
    assert [(f["line"], f["col"], f["code"]) for f in findings(dirty.stdout)] == [("3", "1", "TDL001")]
    assert "Found 1 finding (TDL001: 1)" in dirty.stdout


def test_usage_errors_exit_2(tmp_path):
    assert run_cli("--no-such-flag").returncode == 2
    unknown = run_cli("--select", "TDL9", tmp_path)
    assert unknown.returncode == 2 and "TDL9" in unknown.stderr
    assert run_cli("--explain", "TDL404").returncode == 2


def test_select_and_ignore_by_prefix(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\nx = torch.ones(2)\nx.cuda()\n")  # TDL001 and TDL002
    codes = lambda *args: sorted(f["code"] for f in findings(run_cli(*args, path).stdout))
    assert codes() == ["TDL001", "TDL002"]
    assert codes("--select", "TDL001") == ["TDL001"]
    assert codes("--ignore", "TDL001") == ["TDL002"]
    assert codes("--select", "TDL00", "--ignore", "TDL002,TDL003") == ["TDL001"]
    assert run_cli("--ignore", "TDL", path).returncode == 0


def test_version_list_and_explain():
    assert run_cli("--version").stdout.strip() == f"torchdevlint {__version__}"
    listing = run_cli("--list-rules").stdout
    for rule in ALL_RULES:
        assert rule.code in listing and rule.name in listing
        page = run_cli("--explain", rule.code.lower())
        assert page.returncode == 0
        text = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert page.stdout.strip() == text.strip()


def test_directory_recursion_skips_excluded_dirs(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(BUGGY)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "b.py").write_text(BUGGY)
    (tmp_path / "notes.txt").write_text(BUGGY)
    result = run_cli(tmp_path)
    assert [f["path"] for f in findings(result.stdout)] == [str(tmp_path / "pkg" / "a.py")]


BAD_INPUTS = {
    "syntax.py": (b"import torch\ndef broken(:\n    pass\n", "E999"),
    "latin1.py": ("import torch\nname = 'caf\xe9'\n".encode("latin-1"), "E902"),
    # NUL bytes: Python's parser rejects them, and flake8 says E999 (so does the command)
    "binary.py": (b"\x7fELF\x02\x01\x01\x00\x00\x00torch", "E999"),
    "cookie.py": (b"# -*- coding: bogus -*-\nimport torch\nx = torch.ones(2)\nx.to('cpu')\n",
                  "E902"),
    "bom_latin1_cookie.py": (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nimport torch\n"
                             b"x = torch.ones(2)\nx.to('cpu')\n", "E902"),
    "latin1_with_move.py": ("import torch\nx = torch.ones(2)\nx.to('cpu')\ns = 'caf\xe9'\n"
                            .encode("latin-1"), "E902"),
}


def test_bad_inputs_get_one_diagnostic_and_the_run_goes_on(tmp_path):
    for name, (data, _) in BAD_INPUTS.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "z_good.py").write_text(BUGGY)
    result = run_cli(tmp_path)
    assert "Traceback" not in result.stdout + result.stderr
    reported = findings(result.stdout)
    by_file = {}
    for item in reported:
        by_file.setdefault(item["path"].rsplit("/", 1)[-1], []).append(item["code"])
    expected = {name: [code] for name, (_, code) in BAD_INPUTS.items()}
    expected["z_good.py"] = ["TDL001"]
    assert by_file == expected  # the empty file is fine, the good file is still linted
    assert result.returncode == 1
    assert f"{len(BAD_INPUTS)} files could not be analysed" in result.stdout


def test_syntax_error_position(tmp_path):
    (tmp_path / "syntax.py").write_bytes(BAD_INPUTS["syntax.py"][0])
    [item] = findings(run_cli(tmp_path / "syntax.py").stdout)
    assert (item["line"], item["code"]) == ("2", "E999")
    assert item["msg"].startswith("SyntaxError")


def test_encoding_cookie_and_bom_are_honoured(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\nx = torch.ones(1)\nx.cpu()\n".encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + BUGGY.encode())
    result = run_cli(latin, bom)
    got = sorted((f["path"].rsplit("/", 1)[-1], f["line"], f["col"]) for f in findings(result.stdout))
    assert got == [("bom.py", "3", "1"), ("latin.py", "5", "1")]


def test_crlf_positions(tmp_path):
    path = tmp_path / "crlf.py"
    path.write_bytes(b"import torch\r\nx = torch.ones(1)\r\nif x:\r\n    x.cpu()\r\n")
    [item] = findings(run_cli(path).stdout)
    assert (item["line"], item["col"]) == ("4", "5")


def test_unreadable_file(tmp_path):
    import os
    if os.geteuid() == 0:
        pytest.skip("root can read any file")
    path = tmp_path / "secret.py"
    path.write_text(BUGGY)
    path.chmod(0)
    result = run_cli(path)
    assert result.returncode == 1 and "E902" in result.stdout


def test_quiet_prints_findings_only(tmp_path):
    (tmp_path / "bad.py").write_text(BUGGY)
    result = run_cli("--quiet", tmp_path)
    assert len(result.stdout.splitlines()) == 1


def test_fixtures_dir_end_to_end():
    result = run_cli(FIXTURES)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr


def test_closed_pipe_is_not_a_traceback(tmp_path):
    import subprocess
    import sys
    (tmp_path / "bad.py").write_text(BUGGY * 1)
    for index in range(300):
        (tmp_path / f"m{index}.py").write_text(BUGGY)
    reader = subprocess.Popen([sys.executable, "-m", "torchdevlint", "--jobs", "1", "--no-cache",
                               str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.readline()
    reader.stdout.close()  # like `| head -1`
    stderr = reader.stderr.read().decode()
    assert reader.wait() == 141
    assert "Traceback" not in stderr


@pytest.mark.parametrize("option", [["--explain", "TDL004"], ["--list-rules"]])
def test_closed_pipe_after_short_output_is_quiet(option):
    import os
    import subprocess
    import sys
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that has already exited
    try:
        result = subprocess.run([sys.executable, "-m", "torchdevlint", *option],
                                stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr.decode() == ""


def test_unwritable_output_file_is_a_usage_error(tmp_path):
    result = run_cli("--output-file", tmp_path / "missing" / "out.txt", tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("torchdevlint: error: ")
    assert "No such file or directory" in result.stderr and "Traceback" not in result.stderr


def test_message_for_a_receiver_that_cannot_be_rebound(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\nloss = torch.ones(1)\nloss.detach().cpu()\n")
    [item] = findings(run_cli(path).stdout)
    assert item["msg"].endswith("use the result or remove the statement")


@pytest.mark.parametrize("reported,internal,exit_zero,code", [
    (False, False, False, 0), (True, False, False, 1), (True, False, True, 0),
    (False, True, True, 2), (True, True, False, 2),
])
def test_every_front_end_exits_by_one_rule(reported, internal, exit_zero, code):
    from torchdevlint.findings import ExitCode
    assert ExitCode.of_run(reported, internal, exit_zero) == code


def _tree_with_a_locked_directory(tmp_path):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "clean.py").write_text("import torch\nx = torch.zeros(2)\n")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "bad.py").write_text(BUGGY)
    (tmp_path / "other.py").write_text(BUGGY)
    return tmp_path / "locked"


# The command line, in a child process whose os.scandir cannot list ``locked``, as for a user
# without permission (tests run as root here, which chmod 000 does not stop)
_UNLISTABLE = """
import os, sys
real = os.scandir
locked = os.path.abspath("locked")

def scandir(path="."):
    if os.path.abspath(os.fspath(path)) == locked:
        raise PermissionError(13, "Permission denied", os.fspath(path))
    return real(path)

os.scandir = scandir
from torchdevlint.cli import main
sys.exit(main(["--no-cache", *sys.argv[1:]]))
"""


@pytest.fixture
def unlistable(tmp_path):
    import subprocess
    import sys
    _tree_with_a_locked_directory(tmp_path)

    def run(*args):
        return subprocess.run([sys.executable, "-c", _UNLISTABLE, *args], cwd=tmp_path,
                              capture_output=True, text=True)

    return run


def test_unreadable_directory_in_a_tree_is_one_warning(unlistable, tmp_path):
    result = unlistable("ok", ".")
    assert result.stderr.splitlines() == ["torchdevlint: warning: cannot read directory "
                                          "locked: Permission denied; skipped"]
    assert "other.py:3:1: TDL001" in result.stdout and "E902" not in result.stdout
    assert result.returncode == 1  # the finding in other.py; the warning alone changes nothing:
    (tmp_path / "other.py").write_text("x = 1\n")
    result = unlistable(".")
    assert "cannot read directory" in result.stderr and "All checks passed" in result.stdout
    assert result.returncode == 0


@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"], ["--add-noqa"]])
def test_unreadable_directory_named_is_e902_and_the_run_goes_on(unlistable, mode):
    result = unlistable(*mode, "locked", "other.py")
    out = result.stdout + result.stderr
    assert "locked:1:1: E902 cannot read directory: Permission denied" in out
    assert "internal error" not in out and "Traceback" not in out
    assert result.returncode == 1
    if not mode:
        assert "other.py:3:1: TDL001" in result.stdout


def test_unreadable_directory_for_real(tmp_path):
    import os
    if os.geteuid() == 0:
        pytest.skip("root can list any directory (the mocked tests above cover it)")
    locked = _tree_with_a_locked_directory(tmp_path)
    locked.chmod(0)
    try:
        named = run_cli("--no-cache", locked, tmp_path / "locked" / "bad.py", tmp_path / "other.py")
        walked = run_cli("--no-cache", tmp_path)
    finally:
        locked.chmod(0o755)
    assert named.returncode == 1 and "internal error" not in named.stderr
    assert f"{locked}:1:1: E902 cannot read directory: Permission denied" in named.stdout
    assert "bad.py:1:1: E902 cannot read file: Permission denied" in named.stdout
    assert "other.py:3:1: TDL001" in named.stdout
    assert walked.returncode == 1 and "other.py:3:1: TDL001" in walked.stdout
    assert walked.stderr.count("cannot read directory") == 1 and str(locked) in walked.stderr
