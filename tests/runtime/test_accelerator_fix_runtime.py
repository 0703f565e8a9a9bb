"""torch itself confirms TDL002's fix for torch 2.6+ (``torch-version``): the accelerator idiom
``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``
that ``--fix`` writes runs on a machine without CUDA (and, where there is one, on a GPU).

The fixed versions are produced here by the command, from every TDL002 positive fixture, as a
project requiring ``torch>=2.6`` would get them; the checked-in ``.fixed.py`` files are the
default (torch 2.0) output.
"""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from runtime_harness import cuda_available, main_arguments, positive_fixtures, run_main
from runtime_proofs import PROOFS, check_runs, run_fixture
from torchdevlint.engine import lint_bytes
from torchdevlint.rules import DEFAULT_RULES

PROOF = PROOFS["TDL002"]
CASES = [pytest.param(path, id=path.stem) for rule, path in positive_fixtures() if rule == "TDL002"]
# The fixtures whose fix writes the idiom: a "cuda" literal or a .cuda() call (``"cuda:0"``
# keeps the CUDA form, see docs/rules/TDL002.md).
ACCELERATOR_FIXED = {"backwards_guard", "loads_an_extension_in_a_function", "default_parameter", "default_when_none", "device_literal",
                     "factory_cuda", "module_cuda", "mps_else_cuda", "named_literal", "partly_guarded_callers",
                     "test_tied_to_cuda_else"}


def fixed_for_torch_26(path, directory):
    """``path`` fixed by ``torchdevlint --fix --unsafe-fixes`` in a project on torch>=2.6."""
    (directory / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = ["torch>=2.6"]\n', encoding="utf-8")
    copy = directory / path.name
    shutil.copyfile(path, copy)
    run = subprocess.run([sys.executable, "-m", "torchdevlint", "--no-cache", "--fix",
                          "--unsafe-fixes", copy.name], cwd=directory, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr  # every finding fixed
    return copy


@pytest.mark.parametrize("path", CASES)
def test_accelerator_fix_runs_without_cuda(path, tmp_path):
    fixed = fixed_for_torch_26(path, tmp_path)
    text = fixed.read_text(encoding="utf-8")
    assert ("torch.accelerator.is_available()" in text) == (path.stem in ACCELERATOR_FIXED), text
    check_runs(PROOF, fixed, PROOF.stand_in, run_fixture(PROOF, fixed, PROOF.stand_in, tmp_path))
    findings = lint_bytes(fixed.read_bytes(), str(fixed), DEFAULT_RULES, torch_version=(2, 6))
    assert findings.error is None and findings.findings == []


def test_every_accelerator_fixture_exists():
    assert ACCELERATOR_FIXED <= {param.values[0].stem for param in CASES}


@pytest.mark.cuda
@pytest.mark.skipif(not cuda_available(), reason="no CUDA device")
@pytest.mark.parametrize("path", [case for case in CASES if case.id in ACCELERATOR_FIXED])
def test_accelerator_fix_runs_on_cuda(path, tmp_path):
    """Where CUDA is, the accelerator is CUDA: the fixed code runs there, on the GPU."""
    import torch

    fixed = fixed_for_torch_26(path, tmp_path)
    assert torch.accelerator.current_accelerator().type == "cuda"
    outcome = run_main(fixed, *main_arguments(PROOF.argument, None))
    check_runs(PROOF, fixed, "no-cuda", outcome)
