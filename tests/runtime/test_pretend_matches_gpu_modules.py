"""torch's nn modules (ModuleInfo) on the pretend accelerator, held against what a real GPU did
with the same cases (data/gpu/modules-h200.jsonl: an H200, torch 2.11): each module moved to the
accelerator with all its inputs there, left on the CPU with its inputs moved, and moved with
each input left on the CPU in turn (``benchmarks/runtime_opinfo.py --modules --record``).

Modules take GPU paths that their ops alone do not show (the OpInfo comparison cannot see them):
fused RNN cells, cuDNN batch norm, oneDNN convolution on a CPU input, the fused RMSNorm kernel,
CTC loss moving its targets itself. Every case ends as on the GPU, with the same error and the
same words, but for those listed below with their reasons; a listed case that now ends as on
the GPU fails the test, to be taken off the list.
"""
from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import ROOT

_SPEC = importlib.util.spec_from_file_location("runtime_opinfo", ROOT / "benchmarks" / "runtime_opinfo.py")
runtime_opinfo = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("runtime_opinfo", runtime_opinfo)
_SPEC.loader.exec_module(runtime_opinfo)

RECORDING = ROOT / "tests" / "runtime" / "data" / "gpu" / "modules-h200.jsonl"

SMOOTH_L1 = ("0-dim CPU and GPU inputs: the GPU kernel fails an internal assert (Loops.cuh: "
             "'expected a CUDA device but found cpu'); the pretend one raises the device error "
             "it stands for")
KNOWN = {
    "module:nn.SmoothL1Loss #1:cpu=args/0": SMOOTH_L1,
    "module:nn.SmoothL1Loss #1:cpu=args/1": SMOOTH_L1,
}


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    pretend = tmp_path_factory.mktemp("modules") / "pretend.jsonl"
    runtime_opinfo.record_modules(runtime_opinfo.load_module_db(), "pretend",
                                  samples_per_module=2, backward=True, output=pretend)
    return runtime_opinfo.compare(RECORDING, pretend)


def _differing(comparison) -> dict:
    return {case: (gpu, pretend) for kind, cases in comparison["kinds"].items()
            if kind != "same outcome" for case, gpu, pretend in cases}


def test_most_recorded_cases_are_compared(comparison):
    """(torch versions differ in their module lists: only the cases both have are compared)"""
    compared = sum(len(cases) for cases in comparison["kinds"].values())
    assert comparison["real"] >= 500 and compared >= 0.95 * comparison["real"]


def test_every_module_case_ends_as_on_the_gpu(comparison):
    unexpected = {case: outcomes for case, outcomes in _differing(comparison).items()
                  if case not in KNOWN}
    assert unexpected == {}, "\n".join(f"{case}\n  GPU:     {gpu}\n  pretend: {pretend}"
                                       for case, (gpu, pretend) in unexpected.items())


def test_each_known_difference_is_still_one(comparison):
    fixed = [case for case in KNOWN if case not in _differing(comparison)]
    assert fixed == [], f"now as on the GPU: take {fixed} off KNOWN"
