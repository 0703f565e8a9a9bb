"""The flake8 plugin reports exactly what the CLI reports, and never aborts flake8."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import FIXTURES, run_cli
from test_cli import BAD_INPUTS, findings


def _compile_rejects_nul_with_syntax_error() -> bool:
    try:
        compile("x\0", "nul.py", "exec")
    except SyntaxError:
        return True
    except ValueError:
        return False
    return True


# Before Python 3.11 ``compile`` raises ValueError for a NUL byte, which flake8's own
# ``build_ast`` does not catch: flake8 itself crashes on such a file, plugin or none. The
# NUL-byte input is left out of the flake8 tests there (the command's tests keep it).
FLAKE8_INPUTS = {name: value for name, value in BAD_INPUTS.items()
                 if name != "binary.py" or _compile_rejects_nul_with_syntax_error()}


def run_flake8(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "TDL,E999,E902", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def normalized(stdout: str) -> list:
    return sorted((f["path"], int(f["line"]), int(f["col"]), f["code"], f["msg"]) for f in findings(stdout))


def test_plugin_is_registered_and_on_by_default():
    result = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "torchdevlint" in result.stdout


def test_cli_and_flake8_agree_on_all_fixtures():
    cli = normalized(run_cli(FIXTURES).stdout)
    plugin = normalized(run_flake8(FIXTURES).stdout)
    assert cli and cli == plugin


def test_cli_and_flake8_agree_on_noqa_and_columns(tmp_path):
    path = tmp_path / "n.py"
    path.write_text(
        "import torch\n"
        "x = torch.ones(1)\n"
        "x.cuda()  # noqa: TDL002\n"
        "\tx.cpu()  # noqa: E501\n"[:-1] + "\n"
        "x.to('cpu')  # noqa\n"
        "y = torch.zeros(1, device='cuda')  # NOQA:TDL001\n"
    )
    path.write_text(path.read_text().replace("\tx.cpu()", "x.cpu()"))
    cli = normalized(run_cli(path).stdout)
    plugin = normalized(run_flake8(path).stdout)
    assert cli == plugin
    assert [(line, col, code) for _, line, col, code, _ in cli] == [
        (3, 1, "TDL001"), (4, 1, "TDL001"), (5, 26, "TDL002")][:0] + [
        (3, 1, "TDL001"), (4, 1, "TDL001"), (6, 27, "TDL002")]


def test_flake8_survives_bad_files(tmp_path):
    for name, (data, _) in FLAKE8_INPUTS.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "z_good.py").write_text("import torch\nx = torch.ones(2)\nx.to('cpu')\n")
    result = run_flake8(tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    codes = {f["path"].rsplit("/", 1)[-1]: f["code"] for f in findings(result.stdout)}
    assert codes["z_good.py"] == "TDL001"
    assert codes["syntax.py"] == "E999"
    if "binary.py" in FLAKE8_INPUTS:
        assert "binary.py" in codes  # flake8 reports it (E999/E902) and goes on


def test_cli_and_flake8_agree_on_bad_inputs(tmp_path):
    """Undecodable files, NUL bytes, a bad coding cookie, a BOM that contradicts the cookie,
    a file too deeply nested for LibCST: the same code on the same line from both front ends."""
    from test_syntax import PREFIX

    for name, (data, _) in FLAKE8_INPUTS.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "z_good.py").write_text("import torch\nx = torch.ones(2)\nx.to('cpu')\n")
    cli = [(path, line, code)
           for path, line, _, code, _ in normalized(run_cli("--no-cache", ".", cwd=tmp_path).stdout)]
    plugin = [(path[2:] if path.startswith("./") else path, line, code)
              for path, line, _, code, _ in normalized(run_flake8(".", cwd=tmp_path).stdout)]
    assert cli == plugin
    codes = {path: code for path, _, code in cli}
    assert codes["latin1_with_move.py"] == codes["cookie.py"] == "E902"
    assert codes["syntax.py"] == "E999"
    assert codes.get("binary.py", "E999") == "E999"
    assert codes["z_good.py"] == "TDL001"


@pytest.mark.parametrize("statement, code", [
    ("x = " + "+".join(["1"] * 1500), "TDL001"),  # left out: the rest is analysed
    ("a" + ".b" * 1500 + " = 1", "TDL999"),  # a deep target: one diagnostic for the file
])
def test_cli_and_plugin_agree_on_a_file_too_deep_for_libcst(tmp_path, statement, code):
    """pyflakes, which flake8 also runs, aborts flake8 on such a file: the plugin is run as
    flake8 runs it, on Python's ast of the file."""
    import ast

    from test_syntax import PREFIX
    from torchdevlint.flake8_plugin import TorchDevLintChecker

    source = PREFIX + statement + "\n"
    path = tmp_path / "chain.py"
    path.write_text(source)
    [(line, column, message, _)] = TorchDevLintChecker(
        ast.parse(source), source.splitlines(keepends=True), str(path)).run()
    [cli] = normalized(run_cli("--no-cache", path).stdout)
    assert (cli[1], cli[2], f"{cli[3]} {cli[4]}") == (line, column + 1, message)
    assert message.startswith(code)


def test_an_opt_in_rule_is_off_in_flake8_unless_its_code_is_selected(tmp_path):
    """TDL009 is opt-in: flake8 and the CLI agree with it off, under ``--select TDL``, and with
    it selected by its code."""
    path = tmp_path / "m.py"
    path.write_text("import torch\n\n\ndef f(device):\n    return torch.zeros(3).to(device)\n")

    def flake8(*args):
        result = subprocess.run([sys.executable, "-m", "flake8", *args, str(path)],
                                capture_output=True, text=True)
        assert "Traceback" not in result.stderr, result.stderr
        return sorted(f["code"] for f in findings(result.stdout))

    def cli(*args):
        return sorted(f["code"] for f in findings(run_cli("--isolated", "--no-cache", *args, path).stdout))

    for args, expected in (((), []), (("--select", "TDL"), []), (("--extend-select", "TDL009"), ["TDL009"]),
                           (("--select", "TDL009"), ["TDL009"]), (("--select", "TDL,TDL009"), ["TDL009"])):
        assert flake8(*args) == cli(*args) == expected, args
    assert flake8("--ignore", "E501") == []  # an explicit --ignore does not turn it on either


def test_cli_and_flake8_agree_on_all_fixtures_with_the_opt_in_rule_selected():
    cli = normalized(run_cli("--extend-select", "TDL009", FIXTURES).stdout)
    plugin = normalized(subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TDL,E999,E902", "--extend-select", "TDL009",
         str(FIXTURES)], capture_output=True, text=True).stdout)
    assert any(code == "TDL009" for *_, code, _ in cli)
    assert cli == plugin


def test_cli_and_flake8_agree_on_a_file_libcst_parses_only_spaced(tmp_path):
    """``assert(a if c else b)``: LibCST's validation rejects it (issue 1095); both front ends
    analyse it the same way and place the findings on the text as written."""
    path = tmp_path / "k.py"
    path.write_text("import torch\n\n\ndef main(a, c):\n    assert(a if c else True)\n"
                    "    while(a if c else False): x = torch.zeros(2).cuda(); break\n")
    cli = normalized(run_cli(path).stdout)
    plugin = normalized(run_flake8(path).stdout)
    assert cli == plugin and [(line, col, code) for _, line, col, code, _ in cli] == [
        (6, 50, "TDL002")]
