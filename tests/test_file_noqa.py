"""File-level exemptions in ruff's syntax (issue 30, point 13): ``# ruff: noqa`` skips a file,
``# ruff: noqa: CODES`` silences those codes in all of it, as ``# flake8: noqa`` does for
every code; the CLI and the flake8 plugin agree (the language server: test_server.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import run_cli
from torchdevlint import noqa

SOURCE = ("import torch\n{comment}\nx = torch.ones(1)\nx.cuda()\n"
          "y = torch.zeros(1, device='cuda')\n")
EVERYTHING = [(4, 1, "TDL001"), (4, 3, "TDL002"), (5, 27, "TDL002")]


@pytest.mark.parametrize("comment,expected", [
    ("# ruff: noqa: TDL001", EVERYTHING[1:]),
    ("# ruff: noqa: TDL001, TDL002", []),
    ("#ruff:noqa:TDL00", []),  # a prefix, as in a line's noqa
    ("# RUFF: NOQA", []),
    ("# ruff: noqa", []),
    ("# flake8: noqa", []),
    ("# flake8: noqa: TDL001", []),  # flake8 reads it as every code, and so do we
    ("x = 1  # ruff: noqa: TDL001", EVERYTHING),  # not a comment line: no exemption
    ("# ruff: isort: skip", EVERYTHING),
    ("# a comment", EVERYTHING),
])
def test_cli_and_flake8_agree_on_file_exemptions(tmp_path, comment, expected):
    path = tmp_path / "exempt.py"
    path.write_text(SOURCE.format(comment=comment), encoding="utf-8")
    cli = run_cli("--no-cache", "--output-format", "concise", "-q", path.name, cwd=tmp_path)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TDL", path.name],
                            capture_output=True, text=True, cwd=tmp_path)

    def parsed(stdout):
        return sorted((int(line.split(":")[1]), int(line.split(":")[2]), line.split()[1])
                      for line in stdout.splitlines() if line.startswith("exempt.py:"))

    assert parsed(cli.stdout) == expected, cli.stdout + cli.stderr
    assert parsed(flake8.stdout) == expected, flake8.stdout + flake8.stderr


def test_ignore_noqa_and_disable_noqa_ignore_the_exemption_too(tmp_path):
    path = tmp_path / "exempt.py"
    path.write_text(SOURCE.format(comment="# ruff: noqa: TDL001"), encoding="utf-8")
    cli = run_cli("--no-cache", "-q", "--ignore-noqa", path.name, cwd=tmp_path)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TDL", "--disable-noqa",
                             path.name], capture_output=True, text=True, cwd=tmp_path)
    assert cli.stdout.count("TDL001") == flake8.stdout.count("TDL001") == 1


def test_file_exemption_reads_codes_and_blankets():
    assert noqa.file_exemption(["# ruff: noqa: TDL001,TDL004\n"]) == {"TDL001", "TDL004"}
    assert noqa.file_exemption(["# ruff: noqa: TDL001\n", "# ruff: noqa: TDL002\n"]) \
        == {"TDL001", "TDL002"}
    assert noqa.is_blanket(noqa.file_exemption(["  # ruff: noqa\n"]))
    assert noqa.file_exemption(["# flake8: noqa\n"], flake8_form=False) is None
    assert noqa.file_exemption(["import torch\n"]) is None
    assert noqa.may_exempt_file("# ruff: noqa: TDL001\n")
