"""The calls TDL002 lets take "cuda" (torch_api.DEVICE_TYPE_TOLERANT_CALLS) do run without CUDA.

Each is called exactly as user code does, with the device type "cuda", on this machine's
CPU-only build of torch: none may raise. Warnings ("CUDA is not available. Disabling") are the
point: the code runs on, so a finding there would be false.
"""
from __future__ import annotations

import warnings

import pytest
import torch

from torchdevlint import torch_api as api

CALLS = {
    "torch.autocast": lambda: torch.autocast("cuda", enabled=False).__enter__(),
    "torch.amp.autocast": lambda: torch.amp.autocast(device_type="cuda"),
    "torch.amp.autocast_mode.autocast": lambda: torch.amp.autocast_mode.autocast("cuda"),
    "torch.get_autocast_dtype": lambda: torch.get_autocast_dtype("cuda"),
    "torch.is_autocast_enabled": lambda: torch.is_autocast_enabled("cuda"),
    "torch.set_autocast_enabled": lambda: torch.set_autocast_enabled(
        "cuda", torch.is_autocast_enabled("cuda")),
    "torch.set_autocast_dtype": lambda: torch.set_autocast_dtype(
        "cuda", torch.get_autocast_dtype("cuda")),
    "torch.amp.is_autocast_available": lambda: torch.amp.is_autocast_available("cuda"),
    "torch.amp.GradScaler": lambda: torch.amp.GradScaler(device="cuda"),
    "torch.amp.grad_scaler.GradScaler": lambda: torch.amp.grad_scaler.GradScaler("cuda"),
    "torch.cuda.amp.GradScaler": lambda: torch.cuda.amp.GradScaler(),
    "torch.get_device_module": lambda: torch.get_device_module(device="cuda"),
    # memory statistics of a device CUDA never initialised: 0 (an empty dict), no error
    "torch.cuda.max_memory_allocated": lambda: torch.cuda.max_memory_allocated("cuda"),
    "torch.cuda.memory_allocated": lambda: torch.cuda.memory_allocated(device="cuda:0"),
    "torch.cuda.memory_reserved": lambda: torch.cuda.memory_reserved("cuda"),
    "torch.cuda.max_memory_reserved": lambda: torch.cuda.max_memory_reserved(torch.device("cuda")),
    "torch.cuda.memory_stats": lambda: torch.cuda.memory_stats("cuda"),
}


def test_every_tolerant_call_is_proven():
    assert set(CALLS) == set(api.DEVICE_TYPE_TOLERANT_CALLS)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about machines without CUDA")
@pytest.mark.parametrize("qualified", sorted(CALLS))
def test_runs_without_cuda(qualified):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CALLS[qualified]()


def test_a_real_device_use_still_fails_without_cuda():
    """The control: the same string where a tensor is placed is the crash TDL002 reports."""
    if torch.cuda.is_available():
        pytest.skip("needs a machine without CUDA")
    with pytest.raises((AssertionError, RuntimeError)):
        torch.zeros(1, device="cuda")
