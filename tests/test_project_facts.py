"""A directory that builds a CUDA extension: TDL002 is off for the Python files beside it, in
the command line and in flake8 alike; a CPU fallback or another directory keeps it on."""
from __future__ import annotations

import pytest

from conftest import run_cli
from test_flake8 import run_flake8
from torchdevlint.project import builds_cuda_extension

CUDA_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="fused_op", ext_modules=[CUDAExtension("fused_op", ["op.cpp", "op_kernel.cu"])],
      cmdclass={"build_ext": BuildExtension})
"""
WITH_FALLBACK = CUDA_SETUP.replace("CUDAExtension(", "CUDAExtension if torch.cuda.is_available() "
                                   "else CppExtension)(")
KERNEL_TEST = """\
import torch
import fused_op


def test_forward():
    x = torch.randn(4).cuda()
    assert fused_op.forward(x).is_cuda
"""


def project(tmp_path, setup):
    kernel = tmp_path / "kernels"
    kernel.mkdir()
    if setup is not None:
        (kernel / "setup.py").write_text(setup)
    (kernel / "unit_test.py").write_text(KERNEL_TEST)
    (tmp_path / "train.py").write_text(KERNEL_TEST)
    return kernel


@pytest.mark.parametrize("setup, silent", [(CUDA_SETUP, True), (WITH_FALLBACK, False), (None, False)],
                         ids=["cuda-extension", "cpu-fallback", "no-setup"])
def test_files_beside_a_cuda_extension_build_are_gpu_only(tmp_path, setup, silent):
    kernel = project(tmp_path, setup)
    cli = run_cli("--isolated", "--no-cache", "--quiet", tmp_path)
    flake8 = run_flake8(tmp_path)
    for output in (cli.stdout, flake8.stdout):
        beside = [line for line in output.splitlines() if "unit_test.py" in line and "TDL002" in line]
        elsewhere = [line for line in output.splitlines() if "train.py" in line and "TDL002" in line]
        assert bool(beside) != silent, output
        assert elsewhere, output  # the rest of the project is linted as before
    assert builds_cuda_extension(kernel) is silent


def test_standard_input_is_judged_by_its_stated_filename(tmp_path):
    kernel = project(tmp_path, CUDA_SETUP)
    named = run_cli("--isolated", "--no-cache", "--stdin-filename", kernel / "unit_test.py", "-",
                    input=KERNEL_TEST)
    anonymous = run_cli("--isolated", "--no-cache", "-", input=KERNEL_TEST)
    assert named.returncode == 0 and "TDL002" not in named.stdout
    assert anonymous.returncode == 1 and "TDL002" in anonymous.stdout
