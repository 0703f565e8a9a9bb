"""The pretend accelerator's rules that a real GPU's recording corrected (data/gpu/, an H200,
torch 2.11): each test is one op kind, with the message the GPU raised, or the GPU's run."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from torchdevlint.runtime import device_of, fake_accelerator

MIXED = ("Expected all tensors to be on the same device, but found at least two devices, "
         "cuda:0 and cpu!")


@pytest.fixture
def gpu():
    with fake_accelerator("cuda"):
        yield torch.device("cuda:0")


def guard(name, found, common, method):
    return (f"Expected all tensors to be on the same device, but got {name} is on {found}, "
            f"different from other tensors on {common} (when checking argument in method "
            f"{method})")


def raises(message, call):
    with pytest.raises(RuntimeError) as error:
        call()
    assert str(error.value) == message


# --- composite ops (no GPU kernel of their own): the ops they are made of decide -----------

def test_composite_ops_with_a_cpu_scalar_run_as_on_a_gpu(gpu):
    """allclose, ldexp, soft_margin_loss, as_strided_scatter, resize_as_ check nothing
    themselves on a GPU; their parts accept a CPU scalar (the GPU ran every one)."""
    x, scalar = torch.tensor(1.0, device=gpu), torch.tensor(1.0)
    assert torch.allclose(x, scalar) and torch.allclose(scalar, x)
    assert device_of(torch.ldexp(x, scalar)) == gpu
    assert device_of(F.soft_margin_loss(x, scalar)) == gpu
    assert device_of(torch.as_strided_scatter(torch.ones(1), x, [], [])) == torch.device("cpu")
    assert device_of(torch.ones(5, 5, device=gpu).resize_as_(torch.ones(5, 5))) == gpu


def test_a_composite_op_allocates_from_its_first_tensor(gpu):
    """logical_and(self, other) writes into at::empty({0}, self.options()): a 0-dim CPU self
    makes a CPU output, which TensorIterator refuses beside a GPU input (recorded: logical_and,
    logical_or, logical_xor, index_fill, binary_cross_entropy_with_logits)."""
    scalar, other = torch.tensor(1.0), torch.tensor(0.0, device=gpu)
    raises(MIXED, lambda: torch.logical_and(scalar, other))
    raises(MIXED, lambda: torch.logical_xor(scalar, other))
    # (1 - target).mul_(input): a CPU target makes a CPU self for the in-place mul_
    raises(MIXED, lambda: F.binary_cross_entropy_with_logits(other, scalar))
    assert device_of(torch.logical_and(other, scalar)) == gpu  # a CPU scalar beside a GPU self


def test_a_composite_op_reports_the_part_that_fails(gpu):
    """mv is addmv_ into a new tensor (the GPU names wrapper_CUDA_addmv_), put is put_."""
    raises(guard("vec", "cuda:0", "cpu", "wrapper_CUDA_addmv_"),
           lambda: torch.mv(torch.ones(3, 3), torch.ones(3, device=gpu)))
    raises(guard("index", "cpu", "cuda:0", "wrapper_CUDA__put_"),
           lambda: torch.ones(3, device=gpu).put(torch.tensor([0, 1]), torch.ones(2, device=gpu)))


def test_an_in_place_self_is_an_output_not_a_cpu_scalar(gpu):
    """TensorIterator lets a 0-dim CPU *input* through, never a 0-dim CPU output (pow's
    backward, soft_margin_loss into a CPU self on the GPU)."""
    raises(MIXED, lambda: torch.tensor(1.0).mul_(torch.tensor(2.0, device=gpu)))
    assert device_of(torch.ones(2, device=gpu).mul_(torch.tensor(2.0))) == gpu


def test_composite_ops_that_check_devices_themselves(gpu):
    x = torch.ones(2, 2, device=gpu)
    raises("torch.block_diag: input tensors must all be on the same device. Input 0 is on device "
           "cuda:0 and input 1 is on device cpu", lambda: torch.block_diag(x, torch.ones(2, 2)))
    raises("tensor_split expected tensor_indices_or_sections to be on cpu, but it's on cuda:0",
           lambda: torch.ones(6).tensor_split(torch.tensor([2], device=gpu)))
    assert [device_of(part) for part in x.tensor_split(torch.tensor([1]))] == [gpu, gpu]


# --- ops with their own GPU kernel ---------------------------------------------------------

def test_equal_is_checked_by_the_device_guard(gpu):
    x = torch.ones(3, device=gpu)
    raises(guard("other", "cpu", "cuda:0", "wrapper_CUDA__equal"), lambda: torch.equal(x, torch.ones(3)))
    raises(guard("other", "cuda:0", "cpu", "wrapper_CUDA__equal"), lambda: torch.equal(torch.ones(3), x))
    assert torch.equal(x, x.clone())


def test_clamp_with_tensor_bounds_is_checked_by_the_device_guard(gpu):
    """clamp_min.Tensor is a structured kernel without NoCheck (clamp_min.Scalar has it): the
    guard checks, naming the overload as torchgen does."""
    x = torch.ones(3, device=gpu)
    raises(guard("min", "cpu", "cuda:0", "wrapper_CUDA_clamp_min_Tensor"),
           lambda: torch.clamp_min(x, torch.zeros(3)))
    raises(guard("max", "cuda:0", "cpu", "wrapper_CUDA_clamp_max_Tensor"),
           lambda: torch.clamp_max(torch.ones(3), torch.zeros(3, device=gpu)))
    raises(guard("max", "cpu", "cuda:0", "wrapper_CUDA_clamp_Tensor"),
           lambda: torch.clamp(x, torch.zeros(3, device=gpu), torch.ones(3)))
    assert device_of(torch.clamp_min(x, 0.5)) == gpu


def test_masked_fill_checks_self_and_mask_itself(gpu):
    mask = torch.ones(3, dtype=torch.bool)
    raises("expected self and mask to be on the same device, but got mask on cpu and self on cuda:0",
           lambda: torch.ones(3, device=gpu).masked_fill(mask, 0.0))
    raises("expected self and mask to be on the same device, but got mask on cuda:0 and self on cpu",
           lambda: torch.ones(3).masked_fill(mask.to(gpu), 0.0))
    raises("masked_fill_: Expected inputs to be on same device",
           lambda: torch.ones(3).masked_fill(mask.to(gpu), torch.tensor(0.0, device=gpu)))
    assert device_of(torch.ones(3, device=gpu).masked_fill(mask.to(gpu), torch.tensor(0.0))) == gpu


def test_ctc_loss_takes_targets_and_lengths_from_the_cpu(gpu):
    """ctc_loss moves the targets to the log_probs' device itself (LossCTC.cpp)."""
    torch.manual_seed(0)
    log_probs = torch.randn(50, 2, 20).log_softmax(2).to(gpu).requires_grad_()
    targets = torch.randint(1, 20, (2, 30))
    lengths = torch.full((2,), 50, dtype=torch.long)
    loss = F.ctc_loss(log_probs, targets, lengths, torch.tensor([20, 25]), reduction="none").sum()
    loss.backward()
    assert device_of(loss) == gpu and device_of(log_probs.grad) == gpu


def test_index_put_moves_its_indices_to_self(gpu):
    """index_put_ moves the indices to self's device; the values then meet self."""
    index = (torch.tensor([0, 1], device=gpu),)
    raises(MIXED, lambda: torch.zeros(3).index_put(index, torch.ones(2, device=gpu)))
    assert device_of(torch.zeros(3, device=gpu).index_put((index[0].cpu(),), torch.ones(2, device=gpu))) == gpu
    raises("indices should be either on cpu or on the same device as the indexed tensor (cpu)",
           lambda: torch.zeros(3)[index])


def test_wrapper_names_follow_torchgen(gpu):
    """complex is composite: its out overload's wrapper (C++ name complex_out) checks."""
    raises(guard("imag", "cpu", "cuda:0", "wrapper_CUDA_out_complex_out"),
           lambda: torch.complex(torch.ones(2, device=gpu), torch.ones(2)))


def test_a_cpu_input_meets_the_gpu_native_slow_convolution(gpu):
    """No cuDNN for a CPU input: the GPU's native kernels take it, their guards name weight."""
    for weight, transposed, method in ((torch.ones(2, 1, 3), False, "wrapper_CUDA___slow_conv2d_forward"),
                                       (torch.ones(1, 2, 3, 3), True, "wrapper_CUDA_slow_conv_transpose2d"),
                                       (torch.ones(1, 2, 3, 3, 3), True, "wrapper_CUDA__slow_conv_transpose3d")):
        data = torch.ones((1, 1) + (5,) * (weight.dim() - 2))
        conv = [F.conv1d, F.conv2d, F.conv3d][weight.dim() - 3] if not transposed else \
            [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][weight.dim() - 3]
        raises(guard("weight", "cuda:0", "cpu", method), lambda: conv(data, weight.to(gpu)))


# --- autograd's engine ---------------------------------------------------------------------

def test_the_engine_checks_the_gradients_it_starts_from(gpu):
    x = torch.ones(3, device=gpu, requires_grad=True)
    y = x * 2
    raises("invalid gradient at index 0 - expected device cuda:0 but got cpu",
           lambda: torch.autograd.grad(y, x, grad_outputs=torch.ones(3), retain_graph=True))
    raises("invalid gradient at index 0 - expected device cuda:0 but got cpu",
           lambda: y.backward(torch.ones(3), retain_graph=True))
    # a 0-dim gradient is moved to its output's device
    (grad,) = torch.autograd.grad(y.sum(), x, grad_outputs=torch.tensor(1.0))
    assert device_of(grad) == gpu


def test_the_engine_checks_the_gradients_each_node_returns(gpu):
    """SliceScatterBackward0 hands src the slice of a GPU gradient: the engine refuses it for a
    CPU src (recorded for slice/select/diagonal/as_strided_scatter and bilinear)."""
    base = torch.ones(4, 4, device=gpu, requires_grad=True)
    src = torch.ones(1, 4, requires_grad=True)
    raises("Function SliceScatterBackward0 returned an invalid gradient at index 1 - expected "
           "device cpu but got cuda:0",
           lambda: torch.slice_scatter(base, src, 0, 0, 1).sum().backward())
    # a 0-dim gradient is moved: a CPU scalar times a GPU tensor trains
    scale = torch.tensor(2.0, requires_grad=True)
    (base * scale).sum().backward()
    assert device_of(scale.grad) == torch.device("cpu") and device_of(base.grad) == gpu
