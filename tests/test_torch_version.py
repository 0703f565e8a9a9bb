"""torch-version: where it comes from, and what TDL002's message and fix write for it."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli
from torchdevlint import torch_version
from torchdevlint.cli import main
from torchdevlint.config import Overrides, Resolver

ACCELERATOR = 'torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"'
CUDA_CHOICE = '"cuda" if torch.cuda.is_available() else "cpu"'
SCRIPT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def main():
        model = nn.Linear(4, 2).cuda()
        inputs = torch.zeros(2, 4, device="cuda")
        return model(inputs)
    """)


def project(tmp_path: Path, pyproject: str = None, script: str = SCRIPT) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(textwrap.dedent(pyproject), encoding="utf-8")
    (tmp_path / "train.py").write_text(script, encoding="utf-8")
    return tmp_path


def lint_message(directory: Path, *args) -> str:
    run = run_cli("--no-cache", *args, "train.py", cwd=directory)
    assert run.returncode == 1, run.stdout + run.stderr
    return next(line for line in run.stdout.splitlines() if 'device "cuda"' in line)


def settings(directory: Path, **overrides):
    return Resolver(Overrides(**overrides)).for_path(directory / "train.py")


# -- where the version comes from ----------------------------------------------------------


@pytest.mark.parametrize("pyproject, expected", [
    ('dependencies = ["torch>=2.6"]', (2, 6)),
    ('dependencies = ["torch==2.7.1"]', (2, 7)),
    ('dependencies = ["torch~=2.6.0"]', (2, 6)),
    ('dependencies = ["torch==2.8.*"]', (2, 8)),
    ('dependencies = ["torch>2.5"]', (2, 5)),  # 2.5.1 is allowed
    ('dependencies = ["numpy", "torch>=2.1,<3"]', (2, 1)),
    ('dependencies = ["torch[opt] (>=2.7, !=2.7.1)"]', (2, 7)),
    ('dependencies = ["torch>=2.6; python_version >= \'3.9\'"]', (2, 6)),
    ('dependencies = ["torch>=2.6.0+cu124"]', (2, 6)),
    ('optional-dependencies = {gpu = ["torch>=2.6"]}', (2, 6)),
    ('optional-dependencies = {new = ["torch>=2.7"], old = ["torch>=2.4"]}', (2, 4)),
    # no lower bound, or none that can be read: the default
    ('dependencies = ["torch"]', (2, 0)),
    ('dependencies = ["torch<2.6"]', (2, 0)),
    ('dependencies = ["torch @ https://example.com/torch-2.6.0.whl"]', (2, 0)),
    ('dependencies = ["torch>=latest"]', (2, 0)),
    ('dependencies = ["torchvision>=0.21"]', (2, 0)),
    # dependencies always hold: an extra cannot raise their bound
    ('dependencies = ["torch"]\noptional-dependencies = {gpu = ["torch>=2.6"]}', (2, 0)),
])
def test_default_comes_from_the_torch_requirement(tmp_path, pyproject, expected):
    directory = project(tmp_path, f'[project]\nname = "demo"\n{pyproject}\n')
    resolved = settings(directory)
    assert resolved.torch_version == expected
    if expected == torch_version.DEFAULT:
        assert resolved.torch_version_origin == "default"
    else:
        assert resolved.torch_version_origin.startswith(f"{directory / 'pyproject.toml'}: [project")
    proposed = ACCELERATOR if expected >= (2, 6) else CUDA_CHOICE
    assert lint_message(directory).endswith(f"use `{proposed}`")


def test_without_any_pyproject_the_default_is_2_0(tmp_path):
    resolved = settings(project(tmp_path))
    assert (resolved.torch_version, resolved.torch_version_origin) == ((2, 0), "default")


def test_the_closest_pyproject_with_a_torch_requirement_applies(tmp_path):
    project(tmp_path, '[project]\nname = "outer"\ndependencies = ["torch>=2.6"]\n')
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "inner"\n', encoding="utf-8")
    (inner / "train.py").write_text(SCRIPT, encoding="utf-8")
    assert settings(inner).torch_version == (2, 6)
    (inner / "pyproject.toml").write_text(
        '[project]\nname = "inner"\ndependencies = ["torch>=2.3"]\n', encoding="utf-8")
    assert settings(inner).torch_version == (2, 3)


def test_explicit_setting_beats_the_requirement(tmp_path):
    directory = project(tmp_path, """\
        [project]
        name = "demo"
        dependencies = ["torch>=2.1"]

        [tool.torchdevlint]
        torch-version = "2.6"
        """)
    resolved = settings(directory)
    assert resolved.torch_version == (2, 6)
    assert resolved.torch_version_origin == \
        f"{directory / 'pyproject.toml'}: [tool.torchdevlint] torch-version"
    assert lint_message(directory).endswith(f"use `{ACCELERATOR}`")
    # and the other way round: the project says 2.5 whatever it requires
    (directory / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = ["torch>=2.7"]\n'
        '[tool.torchdevlint]\ntorch-version = "2.5.1"\n', encoding="utf-8")
    assert settings(directory).torch_version == (2, 5)
    assert lint_message(directory).endswith(f"use `{CUDA_CHOICE}`")


def test_command_line_flag_beats_the_configuration(tmp_path):
    directory = project(tmp_path / "configured", '[tool.torchdevlint]\ntorch-version = "2.6"\n')
    resolved = settings(directory, torch_version="2.4")
    assert (resolved.torch_version, resolved.torch_version_origin) == ((2, 4), "--torch-version")
    assert lint_message(directory, "--torch-version", "2.4").endswith(f"use `{CUDA_CHOICE}`")
    plain = project(tmp_path / "plain")
    assert lint_message(plain, "--torch-version", "2.6").endswith(f"use `{ACCELERATOR}`")


def test_isolated_ignores_the_requirement_and_config_reads_its_own(tmp_path):
    directory = project(tmp_path, '[project]\nname = "demo"\ndependencies = ["torch>=2.6"]\n')
    assert lint_message(directory, "--isolated").endswith(f"use `{CUDA_CHOICE}`")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["torch>=2.7"]\n[tool.torchdevlint]\n',
        encoding="utf-8")
    resolved = Resolver(Overrides(), config=elsewhere / "pyproject.toml").for_path(directory / "train.py")
    assert resolved.torch_version == (2, 7)


@pytest.mark.parametrize("table, message", [
    ('torch-version = "latest"', "`torch-version`: invalid torch version 'latest': expected "
                                 "MAJOR.MINOR, such as \"2.6\""),
    ('torch-version = "2"', "`torch-version`: invalid torch version '2'"),
    ("torch-version = 2.6", "`torch-version` must be a string, not float 2.6"),
])
def test_invalid_configured_value_is_one_clear_error(tmp_path, capsys, monkeypatch, table, message):
    directory = project(tmp_path, f"[tool.torchdevlint]\n{table}\n")
    monkeypatch.chdir(directory)
    assert main(["--no-cache", "train.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("torchdevlint: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_invalid_flag_is_one_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(project(tmp_path))
    assert main(["--torch-version", "two", "train.py"]) == 2
    err = capsys.readouterr().err
    assert err == ("torchdevlint: error: --torch-version: invalid torch version 'two': "
                   "expected MAJOR.MINOR, such as \"2.6\"\n")


def test_help_documents_the_flag(capsys):
    assert main(["--help"]) == 0
    assert "--torch-version VERSION" in capsys.readouterr().out


# -- what the fix writes -------------------------------------------------------------------


def fixed_script(directory: Path, *args) -> str:
    run = run_cli("--no-cache", "--fix", *args, "train.py", cwd=directory)
    assert run.returncode == 0, run.stdout + run.stderr
    return (directory / "train.py").read_text(encoding="utf-8")


def test_fix_below_2_6_keeps_the_cuda_choice(tmp_path):
    directory = project(tmp_path, '[project]\nname = "demo"\ndependencies = ["torch>=2.5"]\n')
    assert fixed_script(directory) == textwrap.dedent("""\
        import torch
        import torch.nn as nn

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


        def main():
            model = nn.Linear(4, 2).to(device)
            inputs = torch.zeros(2, 4, device="cuda" if torch.cuda.is_available() else "cpu")
            return model(inputs)
        """)


def test_fix_from_2_6_writes_the_accelerator_idiom(tmp_path):
    directory = project(tmp_path, '[project]\nname = "demo"\ndependencies = ["torch>=2.6"]\n')
    assert fixed_script(directory) == textwrap.dedent(f"""\
        import torch
        import torch.nn as nn

        device = {ACCELERATOR}


        def main():
            model = nn.Linear(4, 2).to(device)
            inputs = torch.zeros(2, 4, device={ACCELERATOR})
            return model(inputs)
        """)
    # a fixed point: nothing is reported or rewritten again
    assert fixed_script(directory) == (directory / "train.py").read_text(encoding="utf-8")


def test_fix_flag_and_quotes_and_alias(tmp_path):
    script = "import torch as T\nx = T.ones(2, device='cuda')\ny = T.ones(2, device='cuda:0')\n"
    directory = project(tmp_path, script=script)
    assert fixed_script(directory, "--torch-version", "2.6") == (
        "import torch as T\nx = T.ones(2, device=T.accelerator.current_accelerator().type if "
        "T.accelerator.is_available() else 'cpu')\n"
        # an explicit device 0 keeps naming CUDA's device 0
        "y = T.ones(2, device='cuda:0' if T.cuda.is_available() else 'cpu')\n")


def test_fix_reuses_an_accelerator_device_already_chosen(tmp_path):
    script = (f"import torch\n\ndevice = {ACCELERATOR}\n\n\ndef main(model):\n"
              "    return model.cuda()\n")
    directory = project(tmp_path, script=script)
    assert fixed_script(directory, "--unsafe-fixes") == script.replace(".cuda()", ".to(device)")


def test_show_fixes_describes_the_accelerator_fix(tmp_path):
    directory = project(tmp_path, script='import torch\nx = torch.ones(2, device="cuda")\n')
    run = run_cli("--no-cache", "--diff", "--torch-version", "2.6", "train.py", cwd=directory)
    assert f"+x = torch.ones(2, device={ACCELERATOR})" in run.stdout
    run = run_cli("--no-cache", "--output-format", "json", "--torch-version", "2.6", "train.py",
                  cwd=directory)
    assert "use the accelerator only when there is one" in run.stdout


def test_the_cache_keeps_versions_apart(tmp_path):
    directory = project(tmp_path, '[project]\nname = "demo"\ndependencies = ["torch>=2.1"]\n')
    subprocess.run(["git", "init", "-q"], cwd=directory, check=True)

    def message() -> str:
        run = run_cli("train.py", cwd=directory)
        return next(line for line in run.stdout.splitlines() if 'device "cuda"' in line)

    assert message().endswith(f"use `{CUDA_CHOICE}`")
    (directory / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = ["torch>=2.6"]\n', encoding="utf-8")
    assert message().endswith(f"use `{ACCELERATOR}`")
    assert (directory / ".torchdevlint_cache").is_dir()


# -- flake8 says the same ------------------------------------------------------------------


def flake8(directory: Path, *args):
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "TDL", *args, "train.py"],
                          cwd=directory, capture_output=True, text=True)


@pytest.mark.parametrize("requirement", ["torch>=2.1", "torch>=2.6"])
def test_flake8_proposes_what_the_command_proposes(tmp_path, requirement):
    directory = project(tmp_path, f'[project]\nname = "demo"\ndependencies = ["{requirement}"]\n')
    command = lint_message(directory)
    plugin = next(line for line in flake8(directory).stdout.splitlines() if 'device "cuda"' in line)
    # flake8 prints no [*] marker; the rest is the same finding
    assert plugin.replace("TDL002 ", "TDL002 [*] ") == command


def test_flake8_option_and_its_errors(tmp_path):
    directory = project(tmp_path)
    out = flake8(directory, "--torch-version", "2.6").stdout
    assert f"use `{ACCELERATOR}`" in out
    (directory / ".flake8").write_text("[flake8]\ntorch-version = 2.7\n", encoding="utf-8")
    assert f"use `{ACCELERATOR}`" in flake8(directory).stdout
    (directory / ".flake8").unlink()
    bad = flake8(directory, "--torch-version", "2")
    assert bad.returncode != 0 and "invalid torch version '2'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_flake8_reports_an_unreadable_torch_version_and_goes_on(tmp_path):
    directory = project(tmp_path, '[tool.torchdevlint]\ntorch-version = "new"\n')
    out = flake8(directory).stdout
    assert "TDL999 invalid torchdevlint configuration:" in out
    assert f"use `{CUDA_CHOICE}`" in out  # linted with the default
