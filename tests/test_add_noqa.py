"""--add-noqa: a directive for every finding, where every front end honours it, code never broken."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, run_cli
from test_flake8 import run_flake8
from torchdevlint.add_noqa import add_noqa, add_noqa_to_line
from torchdevlint.cli import main
from torchdevlint.rules import OPT_IN_CODES

HEAD = "import torch\nx = torch.ones(2)\n"


def add(path, *args):
    return run_cli("--add-noqa", "--no-cache", *args, path)


def assert_silenced(path) -> None:
    """Neither the CLI nor flake8 reports anything left."""
    cli = run_cli("--no-cache", path)
    assert cli.returncode == 0, cli.stdout
    plugin = run_flake8(path)
    assert plugin.returncode == 0 and plugin.stdout == "", plugin.stdout


def test_merges_with_existing_codes_and_comments(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(HEAD +
                    "x.cuda()  # noqa: E501\n"              # TDL001 and TDL002
                    "x.to('cpu')  # noqa:W291,E501  # why\n"
                    "x.cpu()  # keep this note   \n"
                    "x.cpu()  # noqa: TDL002\n")
    result = add(path)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == HEAD + (
        "x.cuda()  # noqa: E501, TDL001, TDL002\n"
        "x.to('cpu')  # noqa:E501, TDL001, W291  # why\n"
        "x.cpu()  # keep this note  # noqa: TDL001\n"
        "x.cpu()  # noqa: TDL001, TDL002\n")
    assert result.stderr.strip() == "Added 4 noqa directives in 1 file."
    assert_silenced(path)


MULTILINE = HEAD + (
    'x.to(torch.device("""cpu\n'       # 3: the finding; its line ends inside the string
    '"""))\n'                          # 4: where the comment can go
    "x.cpu(); s = '''a\n"              # 5: a finding before a string that goes on
    "b'''\n"                           # 6
    "x.to(\\\n"                        # 7: a backslash continuation
    "    'cpu')\n"                     # 8
    "state = torch.load(\n"            # 9: a multi-line call: its first line takes a comment
    "    'model.pt',\n"
    ")\n"
    "y = [\n"
    "    x.cuda(),\n"                  # 13: inside brackets, its own line
    "]\n")


def test_multiline_strings_continuations_and_calls(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MULTILINE)
    before = [(f.split(":")[1], f.split(": ")[1].split()[0])
              for f in run_cli("--no-cache", path).stdout.splitlines() if ": TDL" in f]
    assert before == [("3", "TDL001"), ("5", "TDL001"), ("7", "TDL001"), ("9", "TDL003"),
                      ("13", "TDL002")]
    assert add(path).returncode == 0
    lines = path.read_text().splitlines()
    assert lines[2] == 'x.to(torch.device("""cpu'
    assert lines[3] == '"""))  # noqa: TDL001'
    assert lines[4:6] == ["x.cpu(); s = '''a", "b'''  # noqa: TDL001"]
    assert lines[6:8] == ["x.to(\\", "    'cpu')  # noqa: TDL001"]
    assert lines[8] == "state = torch.load(  # noqa: TDL003"
    assert lines[12] == "    x.cuda(),  # noqa: TDL002"
    compile(path.read_text(), str(path), "exec")
    assert_silenced(path)


def test_crlf_encoding_and_bom_are_kept(tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(HEAD.replace("\n", "\r\n").encode() + b"x.cpu()\r\ny = 1\r\n")
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n" + HEAD.encode() + b"x.cpu()  # caf\xe9\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + HEAD.encode() + b"x.cpu()")  # no final newline
    assert add(tmp_path).returncode == 0
    assert crlf.read_bytes() == HEAD.replace("\n", "\r\n").encode() + \
        b"x.cpu()  # noqa: TDL001\r\ny = 1\r\n"
    assert latin.read_bytes().endswith(b"x.cpu()  # caf\xe9  # noqa: TDL001\n")
    assert bom.read_bytes() == b"\xef\xbb\xbf" + HEAD.encode() + b"x.cpu()  # noqa: TDL001"
    assert_silenced(tmp_path)


def test_notebook_cells_get_their_directives_and_keep_their_format(tmp_path):
    notebook = tmp_path / "training.ipynb"
    shutil.copy(ROOT / "tests" / "data" / "training.ipynb", notebook)
    original = notebook.read_text()
    assert add(notebook).returncode == 0
    text = notebook.read_text()
    changed = [(old, new) for old, new in zip(original.splitlines(), text.splitlines()) if old != new]
    assert len(original.splitlines()) == len(text.splitlines())  # same JSON layout, line for line
    assert changed == [
        ('    "weights.to(device)  # weights is defined in the cell above\\n",',
         '    "weights.to(device)  # weights is defined in the cell above  # noqa: TDL001\\n",'),
        ('    "state = torch.load(\\"model.pt\\")\\n",',
         '    "state = torch.load(\\"model.pt\\")  # noqa: TDL003\\n",'),
        ('    "    features.cuda()\\n",', '    "    features.cuda()  # noqa: TDL001, TDL002\\n",'),
        ('    "batch.cpu();"', '    "batch.cpu();  # noqa: TDL001"'),
    ]
    assert "%time" in text and "!pip" in text  # IPython lines are put back
    assert run_cli("--no-cache", notebook).returncode == 0
    assert add(notebook).stderr.strip() == "Added 0 noqa directives."
    assert notebook.read_text() == text


def test_second_run_changes_nothing(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MULTILINE + "x.cuda()  # noqa: E501\n")
    add(path)
    first = path.read_bytes()
    again = add(path)
    assert again.returncode == 0 and again.stderr.strip() == "Added 0 noqa directives."
    assert path.read_bytes() == first


def test_unparsable_file_gets_one_diagnostic_and_the_run_goes_on(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    x.cpu()\n")
    good = tmp_path / "good.py"
    good.write_text(HEAD + "x.cpu()\n")
    result = add(tmp_path)
    lines = result.stderr.splitlines()
    assert len([line for line in lines if "broken.py" in line]) == 1
    assert "broken.py:1:7: E999 SyntaxError" in result.stderr and "Traceback" not in result.stderr
    assert lines[-1] == "Added 1 noqa directive in 1 file."
    assert good.read_text().endswith("x.cpu()  # noqa: TDL001\n")
    assert (tmp_path / "broken.py").read_text() == "def f(:\n    x.cpu()\n"
    assert result.returncode == 1  # a file could not be given its directives
    assert add(tmp_path, "--exit-zero").returncode == 0


def test_read_only_file_is_reported_and_left_alone(tmp_path):
    locked = tmp_path / "locked.py"
    locked.write_text(HEAD + "x.cpu()\n")
    locked.chmod(0o444)
    other = tmp_path / "other.py"
    other.write_text(HEAD + "x.cpu()\n")
    result = add(tmp_path)
    assert result.returncode == 1
    assert "locked.py:1:1: E902 cannot write file: file is read-only; left unchanged" in result.stderr
    assert locked.read_text() == HEAD + "x.cpu()\n"
    assert other.read_text().endswith("# noqa: TDL001\n")
    assert result.stderr.splitlines()[-1] == "Added 1 noqa directive in 1 file."


def test_directive_inside_a_string_first_cannot_be_beaten(tmp_path):
    """The first ``# noqa`` of a line is the one every front end reads: when a string holds it,
    no comment can silence the finding, which is said, and the line is left as it was."""
    path = tmp_path / "m.py"
    source = HEAD + "x.cpu(); s = '# noqa: E1'\n"
    path.write_text(source)
    result = add(path)
    assert result.returncode == 1
    assert "m.py:3:1: TDL001 no noqa comment can silence this finding" in result.stderr
    assert path.read_text() == source


def test_configuration_selection_and_excludes_are_respected(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchdevlint]\nextend-exclude = ["skipped"]\n'
        '[tool.torchdevlint.per-file-ignores]\n"ignored.py" = ["TDL001"]\n')
    (tmp_path / "skipped").mkdir()
    skipped = tmp_path / "skipped" / "s.py"
    ignored = tmp_path / "ignored.py"
    chosen = tmp_path / "chosen.py"
    for path in (skipped, ignored, chosen):
        path.write_text(HEAD + "x.cuda()\n")  # TDL001 and TDL002
    assert run_cli("--add-noqa", "--select", "TDL002,TDL001", "--ignore", "TDL001", "--no-cache",
                   ".", cwd=tmp_path).returncode == 0
    assert skipped.read_text() == HEAD + "x.cuda()\n"
    assert ignored.read_text() == HEAD + "x.cuda()  # noqa: TDL002\n"
    assert chosen.read_text() == HEAD + "x.cuda()  # noqa: TDL002\n"
    assert run_cli("--add-noqa", "--no-cache", ".", cwd=tmp_path).returncode == 0
    assert ignored.read_text() == HEAD + "x.cuda()  # noqa: TDL002\n"  # per-file-ignores
    assert chosen.read_text() == HEAD + "x.cuda()  # noqa: TDL001, TDL002\n"


def test_usage_quiet_and_in_process(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(HEAD + "x.cpu()\n")
    assert run_cli("--add-noqa", "--fix", path).returncode == 2
    assert "--add-noqa" in run_cli("--add-noqa", "--diff", path).stderr
    assert run_cli("--add-noqa", "-", input=HEAD).returncode == 2
    assert path.read_text() == HEAD + "x.cpu()\n"
    assert "--add-noqa" in run_cli("--help").stdout
    assert main(["--add-noqa", "--quiet", "--no-cache", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert path.read_text() == HEAD + "x.cpu()  # noqa: TDL001\n"


def test_fixtures_are_silenced_for_the_cli_and_flake8(tmp_path):
    opt_in = ",".join(sorted(OPT_IN_CODES))
    copied = 0
    for source in FIXTURES.glob("TDL*/positive/*"):
        if not source.is_file() or source.name.endswith(".fixed.py"):  # (a __pycache__)
            continue
        target = tmp_path / source.parent.parent.name / source.name
        target.parent.mkdir(exist_ok=True)
        shutil.copy(source, target)
        copied += 1
    before = run_cli("--no-cache", "--extend-select", opt_in, tmp_path)
    assert before.returncode == 1 and copied > 40
    result = add(tmp_path, "--extend-select", opt_in)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    after = run_cli("--no-cache", "--extend-select", opt_in, tmp_path)
    assert after.returncode == 0, after.stdout
    plugin = subprocess.run([sys.executable, "-m", "flake8", "--select", f"TDL,E999,{opt_in}",
                             str(tmp_path)], capture_output=True, text=True)
    assert plugin.returncode == 0 and plugin.stdout == ""
    for path in tmp_path.rglob("*.py"):
        compile(path.read_bytes(), str(path), "exec")
    snapshot = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    again = add(tmp_path, "--extend-select", opt_in)
    assert again.stderr.strip() == "Added 0 noqa directives."
    assert snapshot == {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}


@pytest.mark.parametrize("source, line, expected", [
    ("x = 1\n", 1, "x = 1  # noqa: TDL005\n"),
    ("x = 1  # noqa: E501\n", 1, "x = 1  # noqa: E501, TDL005\n"),
    ("x = 1  # noqa: TDL005\n", 1, "x = 1  # noqa: TDL005\n"),  # already silenced
    ("x = 1  # NOQA\n", 1, "x = 1  # NOQA\n"),  # a blanket noqa silences everything
    ('s = f("""\n{x}\n""")\n', 2, 's = f("""\n{x}\n""")  # noqa: TDL005\n'),
    ("y = 2\r\nx = (1 +\r\n     2)\r\n", 2, "y = 2\r\nx = (1 +  # noqa: TDL005\r\n     2)\r\n"),
])
def test_add_noqa_to_line(source, line, expected):
    assert add_noqa_to_line(source, line, "TDL005") == expected


def test_add_noqa_counts_lines_and_ignores_lines_out_of_range():
    result = add_noqa("a = 1\nb = 2\n", [(1, "TDL001"), (1, "TDL002"), (2, "TDL001"), (9, "TDL001")])
    assert result.source == "a = 1  # noqa: TDL001, TDL002\nb = 2  # noqa: TDL001\n"
    assert result.added == 2 and result.unsilenced == ()


def test_cached_results_lead_to_the_same_lines(tmp_path):
    """With the cache on (the default), a cached result still leads to the right lines."""
    path = tmp_path / "m.py"
    path.write_text(HEAD + "x.cpu()\n")
    assert run_cli(path, cwd=tmp_path).returncode == 1  # fills the cache
    assert run_cli("--add-noqa", path, cwd=tmp_path).returncode == 0
    assert path.read_text() == HEAD + "x.cpu()  # noqa: TDL001\n"
    assert run_cli(path, cwd=tmp_path).returncode == 0
    assert os.path.isdir(tmp_path / ".torchdevlint_cache")
