"""Defects of the pretend accelerator that public projects' test suites found (issue 29,
acceptance 3), each reduced to the few lines that showed it; none needs the projects.

* torchdiffeq: ``module.to(dtype=..., device="cuda")`` left the parameters on the CPU, and
  inside a custom ``autograd.Function.backward`` ``tensor.device`` answered ``cpu``;
* vector-quantize-pytorch: ``autocast("cuda")`` cast nothing, so a half-precision model met
  float32 activations (``mat1 and mat2 must have the same dtype``), which a GPU casts;
* torchsde: ``torch.Generator("cuda")`` failed (a CPU build has no CUDA generator), where a
  GPU machine gives one, and a generator of the wrong device type was accepted;
* the order of the two devices in TensorIterator's message (the accelerator comes first,
  whichever operand is on the CPU)."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from torchdevlint.runtime import device_of, fake_accelerator

GPU = torch.device("cuda:0")


@pytest.fixture
def gpu():
    with fake_accelerator("cuda"):
        yield GPU


@pytest.mark.parametrize("move", [
    lambda module: module.to(device="cuda"),
    lambda module: module.to(dtype=torch.float64, device="cuda"),
    lambda module: module.to(device=torch.device("cuda", 0), dtype=torch.float64),
    lambda module: module.to("cuda", torch.float64),
], ids=["device=", "dtype=,device=", "torch.device,dtype=", "positional"])
def test_module_to_with_keywords_moves_the_parameters(gpu, move):
    module = nn.Linear(3, 2)
    module.register_buffer("scale", torch.ones(2))
    move(module)
    assert {device_of(tensor) for tensor in list(module.parameters()) + list(module.buffers())} \
        == {gpu}
    assert module.weight.device == gpu
    # and it computes with a batch on the GPU, as a moved model does
    out = module(torch.ones(4, 3, device="cuda", dtype=module.weight.dtype))
    assert out.device == gpu


def test_parse_to_answers_the_device_asked_for(gpu):
    device, dtype, _, _ = torch._C._nn._parse_to(device="cuda", dtype=torch.float16)
    assert device == torch.device("cuda") and dtype == torch.float16


class _Double(torch.autograd.Function):
    """Like torchdiffeq's adjoint: the backward builds tensors on ``grad.device``."""
    seen = []

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        _Double.seen.append(grad.device)
        factor = torch.full((), 2.0, device=grad.device)
        weights = torch.ones(grad.shape[-1], device=grad.device)
        return grad * factor * weights


@pytest.mark.parametrize("run_backward", [
    lambda loss, x: loss.backward(),
    lambda loss, x: torch.autograd.grad(loss, x),
    lambda loss, x: torch.autograd.backward([loss]),
], ids=["Tensor.backward", "autograd.grad", "autograd.backward"])
def test_a_custom_backward_sees_the_accelerator(gpu, run_backward):
    _Double.seen.clear()
    x = torch.ones(3, device="cuda", requires_grad=True)
    run_backward(_Double.apply(x).sum(), x)
    assert _Double.seen == [gpu]


def test_a_cpu_tensor_made_in_a_custom_backward_still_fails(gpu):
    class LeftOnCpu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * torch.ones(grad.shape[-1])  # a real GPU fails here too

    x = torch.ones(3, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        LeftOnCpu.apply(x).sum().backward()


def test_tensor_iterator_names_the_accelerator_first(gpu):
    message = "found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError, match=message):
        torch.ones(3) * torch.tensor(2.0, device="cuda")  # a 0-dim GPU tensor, a CPU vector
    with pytest.raises(RuntimeError, match=message):
        torch.ones(3) + torch.ones(3, device="cuda")
    # a 0-dim CPU tensor is a scalar to a GPU kernel, whichever side it is on
    assert (torch.tensor(2.0) * torch.ones(3, device="cuda")).device == gpu


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_cuda_casts_as_a_gpu_does(gpu, dtype):
    half = nn.Linear(8, 8).to("cuda").to(dtype)
    x = torch.randn(2, 8, device="cuda", requires_grad=True)
    with torch.autocast("cuda", dtype=dtype):
        y = half(x)  # float32 input, half weights: a GPU casts the input
        z = nn.Linear(8, 4).to("cuda")(y)
        probabilities = torch.softmax(z, dim=-1)
    assert y.dtype == dtype and z.dtype == dtype and y.device == gpu
    assert probabilities.device == gpu
    y.float().sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.device == gpu
    # outside autocast nothing is cast, as on a GPU
    with pytest.raises(RuntimeError, match="dtype"):
        half(x)
    assert not torch.is_autocast_enabled("cpu")


def test_autocast_disabled_inside_autocast_is_respected(gpu):
    linear = nn.Linear(4, 4).to("cuda")
    x = torch.randn(2, 4, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        assert linear(x).dtype == torch.float16
        with torch.autocast("cuda", enabled=False):
            assert linear(x).dtype == torch.float32
        assert linear(x).dtype == torch.float16
    assert linear(x).dtype == torch.float32


def test_autocast_cuda_runs_an_lstm_in_half_precision(gpu):
    lstm = nn.LSTM(4, 8, batch_first=True).to("cuda")
    head = nn.Linear(8, 2).to("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        out, (h, c) = lstm(torch.randn(2, 3, 4, device="cuda"))
        logits = head(out)
    assert out.dtype == torch.float16 and logits.dtype == torch.float16 and out.device == gpu
    logits.float().sum().backward()
    assert lstm.weight_ih_l0.grad.dtype == torch.float32
    assert lstm.weight_ih_l0.grad.device == gpu


def test_autocast_on_the_cpu_is_left_alone(gpu):
    linear = nn.Linear(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert linear(torch.randn(2, 4)).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")


def test_a_generator_on_the_accelerator(gpu):
    generator = torch.Generator("cuda").manual_seed(7)
    assert generator.device == gpu and isinstance(generator, torch.Generator)
    assert isinstance(torch.default_generator, torch.Generator)  # made before it started
    first = torch.randn(4, device="cuda", generator=generator)
    assert first.device == gpu
    generator.manual_seed(7)
    assert torch.equal(torch.randn(4, device="cuda", generator=generator), first)
    assert torch.empty(4, device="cuda").normal_(generator=generator).device == gpu


@pytest.mark.parametrize("draw, message", [
    (lambda gen, cpu_gen: torch.randn(3, device="cuda", generator=cpu_gen),
     "Expected a 'cuda' device type for generator but found 'cpu'"),
    (lambda gen, cpu_gen: torch.randn(3, generator=gen),
     "Expected a 'cpu' device type for generator but found 'cuda'"),
    (lambda gen, cpu_gen: torch.empty(3).normal_(generator=gen),
     "Expected a 'cpu' device type for generator but found 'cuda'"),
], ids=["cpu generator, gpu tensor", "gpu generator, cpu factory", "gpu generator, cpu tensor"])
def test_a_generator_of_another_device_fails_as_on_a_gpu(gpu, draw, message):
    with pytest.raises(RuntimeError, match=message):
        draw(torch.Generator("cuda"), torch.Generator())


def test_generator_is_restored_afterwards():
    with fake_accelerator("cuda"):
        assert torch.Generator("cuda").device == GPU
    assert torch.Generator is torch._C.Generator
    assert torch.Generator().device == torch.device("cpu")


def test_to_with_a_positional_non_blocking_is_not_a_copy(gpu):
    """``Module.to`` calls ``t.to(device, dtype, non_blocking)``: the third is not ``copy``."""
    x = torch.ones(2, device="cuda")
    assert x.to(gpu, torch.float32, True) is x
    assert x.to(torch.float32, False, True) is not x  # (dtype, non_blocking, copy)


@pytest.mark.parametrize("move", [
    lambda value: value.to(0),
    lambda value: value.to(device=0),
    lambda value: value.to(0, torch.float32),
], ids=["positional", "device=", "with-dtype"])
def test_an_integer_device_is_the_accelerators_ordinal(gpu, move):
    # SamLynnEvans/Transformer moves its masks with .to(opt.device), opt.device being 0: on a
    # GPU that is cuda:0, and the CPU build's parser refused it (no accelerator to ask)
    assert move(torch.ones(2)).device == gpu
    module = move(nn.Linear(3, 2))
    assert module.weight.device == gpu
    with pytest.raises(RuntimeError, match="same device"):
        module(torch.ones(1, 3))


@pytest.mark.parametrize("move", [
    lambda value: value.to("cuda"),
    lambda value: value.cuda(),
    lambda value: value.to(torch.device("cuda", 0), non_blocking=True),
], ids=["to", "cuda", "to-device-non-blocking"])
def test_a_move_under_inference_mode_lands_on_the_device(gpu, move):
    # transformer-heads' evaluate_head_wise runs under @torch.inference_mode(), where torch
    # dispatches aten::to whole (its schema says it may return its input) instead of
    # _to_copy: the copy was left untagged, on the CPU
    with torch.inference_mode():
        moved = move(torch.ones(2))
        assert moved.device == gpu
        assert move(moved) is moved or move(moved).device == gpu
        with pytest.raises(RuntimeError, match="same device"):
            nn.Linear(2, 2)(moved)
