"""Each stand-in really enforces what its rule is about, and we know where it does not.

The meta device plays the GPU for TDL001/TDL004 on CPU-only machines; a checkpoint retagged
as CUDA plays a checkpoint saved on a GPU for TDL003; this CPU-only torch (or a child process
that sees no GPU) plays a machine without CUDA for TDL002.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from runtime_harness import (FIXTURES, cuda_available, retag_storages, run_main_without_cuda,
                             storage_locations, write_cuda_tagged_checkpoint)
from runtime_proofs import (CUDA_CHECKPOINT_ON_CPU, CUDA_DEVICE_MISMATCH, META_DEVICE_MISMATCH,
                            NO_CUDA, checkpoint_state)

META = torch.device("meta")
needs_cuda = [pytest.mark.cuda, pytest.mark.skipif(not cuda_available(), reason="no CUDA device")]
needs_no_cuda = pytest.mark.skipif(cuda_available(), reason="this machine has CUDA")


def _linear(device):
    return nn.Linear(4, 3).to(device)(torch.randn(2, 4))


def _linear_fed_on_device(device):
    return nn.Linear(4, 3)(torch.randn(2, 4, device=device))


# Mixes of a tensor on the device with one left on the CPU, in the operations the TDL001 and
# TDL004 fixtures fail in.
DEVICE_CHECKED_OPERATIONS = {
    "nn.Linear": _linear,
    "nn.Linear, input on the device": _linear_fed_on_device,
    "nn.Sequential": lambda d: nn.Sequential(nn.Linear(4, 3), nn.ReLU()).to(d)(torch.randn(2, 4)),
    "add": lambda d: torch.randn(3, device=d) + torch.randn(3),
    "mul": lambda d: torch.randn(3, device=d) * torch.randn(3),
    "eq": lambda d: torch.zeros(3, device=d) == torch.zeros(3),
    "F.cross_entropy": lambda d: F.cross_entropy(torch.randn(4, 3, device=d), torch.randint(0, 3, (4,))),
    "nn.CrossEntropyLoss": lambda d: nn.CrossEntropyLoss()(torch.randn(4, 3, device=d),
                                                           torch.randint(0, 3, (4,))),
}


def _raised(operation, device):
    with pytest.raises(Exception) as caught:
        operation(device)
    return type(caught.value).__name__, str(caught.value)


@pytest.mark.parametrize("name", DEVICE_CHECKED_OPERATIONS)
def test_meta_checks_devices_in(name):
    assert META_DEVICE_MISMATCH.matches(*_raised(DEVICE_CHECKED_OPERATIONS[name], META))


@pytest.mark.parametrize("name", DEVICE_CHECKED_OPERATIONS)
@pytest.mark.parametrize("_", [pytest.param(None, id="cuda", marks=needs_cuda)])
def test_cuda_checks_devices_in(name, _):
    assert CUDA_DEVICE_MISMATCH.matches(*_raised(DEVICE_CHECKED_OPERATIONS[name], torch.device("cuda")))


@pytest.mark.parametrize("name", DEVICE_CHECKED_OPERATIONS)
def test_the_same_operations_run_on_one_device(name):
    """The error comes from the mix, not from the operation on meta."""
    operation = DEVICE_CHECKED_OPERATIONS[name]
    operation(torch.device("cpu"))
    with torch.device(META):  # every tensor, the CPU ones included, on meta: no mix
        operation(META)


# Where meta does NOT check devices (torch 2.13). No fixture may rely on these: its flagged
# code would run to the end (or fail for another reason) on meta. If torch starts checking,
# these tests fail and the stand-in notes above should be updated.

def test_meta_does_not_check_matmul():
    product = torch.randn(2, 3) @ torch.randn(3, 2, device=META)
    assert product.device.type == "cpu"  # a CPU tensor of garbage, no error
    assert torch.mm(torch.randn(2, 3), torch.randn(3, 2, device=META)).device.type == "cpu"


def test_meta_does_not_check_conv2d():
    output = nn.Conv2d(1, 1, 3).to(META)(torch.randn(1, 1, 5, 5))
    assert output.device.type == "cpu"


def test_zero_dim_cpu_tensors_mix_with_any_device():
    # As on CUDA, a 0-dim CPU tensor counts as a scalar: a running total on the CPU is fine.
    assert (torch.zeros(()) + torch.randn(3, device=META)).device == META


@pytest.mark.parametrize("operation, error_type", [
    (lambda t: t.item(), RuntimeError),
    (lambda t: t.numpy(), TypeError),
    (lambda t: t.cpu(), NotImplementedError),
    (lambda t: t.tolist(), Exception),
])
def test_meta_refuses_to_read_data_with_other_errors(operation, error_type):
    """Reading a meta tensor fails, but never with the message the proofs look for."""
    with pytest.raises(error_type) as caught:
        operation(torch.ones(3, device=META))
    assert not META_DEVICE_MISMATCH.matches(type(caught.value).__name__, str(caught.value))


# --- TDL003: a checkpoint saved on a GPU -----------------------------------------------------

@pytest.fixture
def cuda_checkpoint(tmp_path):
    state = checkpoint_state()
    return write_cuda_tagged_checkpoint(tmp_path / "gpu.pt", state), state


def test_retagged_checkpoint_has_cuda_storages(cuda_checkpoint):
    path, state = cuda_checkpoint
    assert storage_locations(path) == ["cuda:0"] * len(state)


@needs_no_cuda
@pytest.mark.parametrize("weights_only", [True, False])
def test_loading_a_cuda_checkpoint_without_map_location_fails(cuda_checkpoint, weights_only):
    path, _ = cuda_checkpoint
    with pytest.raises(RuntimeError) as caught:
        torch.load(path, weights_only=weights_only)  # noqa: TDL003 (the bug under test)
    assert CUDA_CHECKPOINT_ON_CPU.matches("RuntimeError", str(caught.value))


@pytest.mark.parametrize("map_location", ["cpu", torch.device("cpu"), {"cuda:0": "cpu"}])
def test_loading_a_cuda_checkpoint_with_map_location_works(cuda_checkpoint, map_location):
    path, state = cuda_checkpoint
    loaded = torch.load(path, map_location=map_location)
    assert loaded.keys() == state.keys()
    for name, tensor in state.items():
        assert loaded[name].device.type == "cpu" and torch.equal(loaded[name], tensor)


def test_retagging_needs_cpu_storages():
    import io
    buffer = io.BytesIO()
    torch.save({"step": 3}, buffer)  # no tensor, no storage
    with pytest.raises(ValueError):
        retag_storages(buffer.getvalue())


@pytest.mark.parametrize("_", [pytest.param(None, id="cuda", marks=needs_cuda)])
def test_retagged_checkpoint_matches_one_saved_on_cuda(tmp_path, _):
    state = checkpoint_state()
    real = tmp_path / "real.pt"
    torch.save({name: tensor.cuda() for name, tensor in state.items()}, real)
    retagged = write_cuda_tagged_checkpoint(tmp_path / "retagged.pt", state)
    assert storage_locations(real) == storage_locations(retagged)


# --- TDL002: a machine without CUDA ----------------------------------------------------------

@needs_no_cuda
def test_this_machine_has_no_cuda():
    with pytest.raises(Exception) as caught:
        torch.zeros(1, device="cuda")
    assert any(error.matches(type(caught.value).__name__, str(caught.value)) for error in NO_CUDA)


def test_a_child_process_without_cuda_fails_like_a_cpu_only_machine():
    """The path a GPU machine takes for TDL002/TDL003 (CUDA hidden from a child process)."""
    outcome = run_main_without_cuda(FIXTURES / "TDL002" / "positive" / "factory_keyword.py", "none")
    assert any(error.matches_outcome(outcome) for error in NO_CUDA), outcome.describe()


def test_meta_host_copies_copy_shape_dtype_and_history_but_not_the_refusal():
    """TDL008's stand-in: meta's .cpu() gives a host tensor like a GPU's copy would; NumPy
    still refuses meta itself, and a host copy that records history is refused for that."""
    from runtime_proofs import meta_host_copies

    with meta_host_copies():
        on_device = torch.randn(2, 3, device=META, dtype=torch.float64)
        copy = on_device.cpu()
        assert (copy.device.type, copy.shape, copy.dtype) == ("cpu", (2, 3), torch.float64)
        assert copy.numpy().shape == (2, 3)
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            on_device.numpy()
        weight = torch.randn(3, device=META, requires_grad=True)
        with pytest.raises(RuntimeError, match="requires grad"):
            (weight * 2).cpu().numpy()
        assert (weight * 2).detach().cpu().numpy().shape == (3,)
        cpu_tensor = torch.ones(2)
        assert cpu_tensor.cpu() is cpu_tensor  # host tensors are untouched
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        torch.zeros(1, device=META).cpu()  # the patch is gone after the block
