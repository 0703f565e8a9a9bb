"""The pretend accelerator (torchdevlint.runtime, issue 29): the errors a GPU raises, and none
on correct code."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn as nn

from torchdevlint import torch_api as api
from torchdevlint.runtime import cpu_only, device_of, fake_accelerator, is_active
from runtime_harness import ROOT

MIXED = ("Expected all tensors to be on the same device, but found at least two devices, "
         "cuda:0 and cpu!")
CHECKPOINT_ON_CPU = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU.")


@pytest.fixture
def gpu():
    with fake_accelerator("cuda"):
        yield torch.device("cuda:0")


def test_device_agnostic_code_sees_a_gpu(gpu):
    assert torch.cuda.is_available() and torch.cuda.device_count() == 1
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("cuda")
    x = torch.ones(2).to("cuda")
    assert x.device == gpu and x.is_cuda and x.get_device() == 0
    assert torch.zeros(2, device="cuda").device == gpu
    assert "device='cuda:0'" in repr(x)
    assert x.cpu().device == torch.device("cpu") and not x.cpu().is_cuda


def test_it_ends_with_the_context():
    before = torch.cuda.is_available()  # true on a machine with a real GPU
    with fake_accelerator():
        assert is_active()
    assert not is_active() and torch.cuda.is_available() == before
    if before:
        assert torch.zeros(1, device="cuda").device.type == "cuda"  # the real one again
        return
    # what this machine without a GPU says again: a CPU-only build of torch, or a CUDA build
    # that sees no GPU (found on a GPU machine with CUDA_VISIBLE_DEVICES="")
    with pytest.raises((AssertionError, RuntimeError),
                       match="^(Torch not compiled with CUDA enabled|No CUDA GPUs are available)$"):
        torch.zeros(1, device="cuda")


def test_a_decorated_function_runs_on_it():
    @fake_accelerator()
    def step():
        return torch.cuda.is_available()

    before = torch.cuda.is_available()
    assert step() and torch.cuda.is_available() == before


def test_an_unmoved_batch_fails_as_on_a_gpu(gpu):
    model = nn.Linear(4, 2).to(gpu)
    with pytest.raises(RuntimeError) as error:
        model(torch.randn(3, 4))
    assert str(error.value) == (
        "Expected all tensors to be on the same device, but got mat1 is on cpu, different from "
        "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)")
    assert model(torch.randn(3, 4, device=gpu)).device == gpu


def test_elementwise_mixing_fails_but_cpu_scalars_pass(gpu):
    x = torch.ones(3, device=gpu)
    with pytest.raises(RuntimeError, match=f"^{MIXED}$"):
        x + torch.ones(3)
    assert (x * torch.tensor(2.0)).device == gpu  # a 0-dim CPU tensor is a scalar on a GPU
    assert (x * 2).device == gpu


def test_cpu_indices_are_accepted_gpu_indices_into_cpu_are_not(gpu):
    x = torch.arange(6.0, device=gpu)
    assert x[torch.tensor([0, 2])].device == gpu
    with pytest.raises(RuntimeError, match=r"indices should be either on cpu or on the same device"):
        torch.arange(6.0)[torch.tensor([0, 2], device=gpu)]


def test_numpy_of_a_gpu_tensor(gpu):
    with pytest.raises(TypeError) as error:
        torch.ones(2, device=gpu).numpy()
    assert str(error.value) == ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                                "to copy the tensor to host memory first.")
    assert torch.ones(2, device=gpu).cpu().numpy().tolist() == [1.0, 1.0]


# NumPy readers that take two arrays, and those that write to a file first.
_TWO_ARRAYS = frozenset("""maximum minimum dot matmul power multiply add subtract divide allclose
    isclose equal greater less""".split())
_WRITERS = frozenset(("save", "savetxt"))


@pytest.mark.parametrize("qualified", sorted(api.NUMPY_TENSOR_READERS))
def test_each_numpy_reader_converts_a_gpu_tensor_and_fails(gpu, qualified):
    """TDL008 reports a tensor on an accelerator given to one of ``api.NUMPY_TENSOR_READERS``:
    each converts it through ``Tensor.numpy()`` and raises the rule's error."""
    import numpy as np

    function = getattr(np, qualified.rpartition(".")[2])
    t = torch.ones(3, dtype=torch.long, device=gpu) if function.__name__ == "bincount" \
        else torch.ones(3, 3, device=gpu)  # (counts of a 1-d integer array)
    arguments = (t, t) if function.__name__ in _TWO_ARRAYS else \
        (io.BytesIO(), t) if function.__name__ in _WRITERS else (t,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # numpy 2's ``copy=`` notice
        with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
            function(*arguments)
    function(*(a.cpu() if isinstance(a, torch.Tensor) else a for a in arguments))  # the host copy converts


def test_a_tensor_created_in_forward_without_device(gpu):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 3)

        def forward(self, x):
            return self.linear(x) + torch.randn(3)  # no device=

    with pytest.raises(RuntimeError, match=f"^{MIXED}$"):
        Model().to(gpu)(torch.ones(2, 3, device=gpu))


def test_a_plain_list_of_submodules_stays_behind(gpu):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = [nn.Linear(3, 3)]  # not an nn.ModuleList: .to() misses it

        def forward(self, x):
            return self.blocks[0](x)

    with pytest.raises(RuntimeError, match="got mat1 is on cuda:0, different from other tensors on cpu"):
        Model().to(gpu)(torch.ones(2, 3, device=gpu))


def test_rnn_and_conv_messages(gpu):
    lstm = nn.LSTM(4, 3).to(gpu)
    with pytest.raises(RuntimeError, match="^Input and hidden tensors are not at the same device, "
                                           "found input tensor at cuda:0 and hidden tensor at cpu$"):
        lstm(torch.randn(5, 2, 4, device=gpu), (torch.zeros(1, 2, 3), torch.zeros(1, 2, 3)))
    conv = nn.Conv2d(1, 2, 3).to(gpu)
    # a CPU input: the GPU runs its native slow convolution (recorded on an H200, data/gpu/)
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, but "
                                           r"got weight is on cuda:0, different from other tensors "
                                           r"on cpu \(when checking argument in method "
                                           r"wrapper_CUDA___slow_conv2d_forward\)$"):
        conv(torch.randn(1, 1, 5, 5))
    with pytest.raises(RuntimeError, match=r"^Input type \(torch.cuda.FloatTensor\) and weight "
                                           r"type \(torch.FloatTensor\) should be the same$"):
        nn.Conv2d(1, 2, 3)(torch.randn(1, 1, 5, 5, device=gpu))


def test_packed_sequences_keep_their_sizes_on_the_cpu(gpu):
    """As on a GPU: batch_sizes and the lengths pad_packed_sequence returns stay on the CPU."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    for cls in (nn.LSTM, nn.GRU):
        rnn = cls(4, 3, batch_first=True).to(gpu)
        packed = pack_padded_sequence(torch.randn(2, 5, 4, device=gpu), torch.tensor([3, 5]),
                                      batch_first=True, enforce_sorted=False)
        assert packed.data.device == gpu and packed.batch_sizes.device == torch.device("cpu")
        padded, lengths = pad_packed_sequence(rnn(packed)[0], batch_first=True)
        assert padded.device == gpu and lengths.device == torch.device("cpu")
        padded.sum().backward()
        packed = pack_padded_sequence(torch.randn(2, 5, 4, device=gpu), torch.tensor([5, 3]),
                                      batch_first=True)  # sorted: hx is not permuted first
        hidden = torch.zeros(1, 2, 3)  # left on the CPU
        with pytest.raises(RuntimeError, match="^Input and hidden tensors are not at the same device"):
            rnn(packed, (hidden, hidden) if cls is nn.LSTM else hidden)


def test_backward_and_optimizer_kernels_are_checked(gpu):
    model = nn.Linear(2, 1).to(gpu)
    model(torch.ones(1, 2, device=gpu)).sum().backward()
    assert model.weight.grad.device == gpu
    model.weight.grad = torch.ones(1, 2)  # a CPU gradient: the optimizer's kernels mix devices
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False).step()


def test_checkpoint_from_the_gpu_on_a_cpu_only_machine(gpu):
    buffer = io.BytesIO()
    torch.save(nn.Linear(2, 2).to(gpu).state_dict(), buffer)
    assert torch.load(io.BytesIO(buffer.getvalue()))["weight"].device == gpu
    with cpu_only():
        assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
        with pytest.raises(RuntimeError) as error:
            torch.load(io.BytesIO(buffer.getvalue()))
        assert str(error.value) == CHECKPOINT_ON_CPU
        state = torch.load(io.BytesIO(buffer.getvalue()), map_location="cpu")
        assert state["weight"].device == torch.device("cpu")
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            torch.ones(1).cuda()
    assert torch.cuda.is_available()


def test_a_checkpoint_keeps_no_trace_of_the_pretence(gpu, tmp_path):
    """What the pretend GPU saves is what a GPU saves: storages tagged cuda:0, plain tensors."""
    from runtime_harness import storage_locations
    path = tmp_path / "checkpoint.pt"
    torch.save(nn.Linear(2, 2).to(gpu).state_dict(), path)
    assert b"torchdevlint" not in path.read_bytes()
    with cpu_only():
        assert set(storage_locations(path)) == {"cuda:0"}


def test_two_devices(tmp_path):
    with fake_accelerator("cuda", count=2):
        assert torch.cuda.device_count() == 2
        a, b = torch.ones(2, device="cuda:0"), torch.ones(2, device="cuda:1")
        with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cuda:1!"):
            a + b
        torch.cuda.set_device(1)
        assert torch.ones(1).cuda().device == torch.device("cuda:1")
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            torch.ones(1, device="cuda:2")


def test_mps():
    with fake_accelerator("mps"):
        assert torch.backends.mps.is_available() and not torch.cuda.is_available()
        x = torch.ones(2, device="mps")
        assert x.device == torch.device("mps:0")
        with pytest.raises(RuntimeError, match="found at least two devices, mps:0 and cpu!"):
            x + torch.ones(2)


def test_views_parameters_and_copies_share_the_device(gpu):
    import copy
    model = nn.Linear(2, 2).to(gpu)
    assert model.weight.data.device == gpu and model.weight[0].device == gpu
    assert model.weight.detach().device == gpu
    assert copy.deepcopy(model).weight.device == gpu
    assert device_of(nn.Parameter(torch.ones(1, device=gpu))) == gpu
    cpu = torch.ones(2)
    moved = torch.as_tensor(cpu, device=gpu)
    assert moved.device == gpu and cpu.device == torch.device("cpu")


def test_an_embedding_with_a_padding_index_is_built_and_moved(gpu):
    """nn.Embedding(padding_idx=...) zeroes its padding row through a no_grad view filled in
    place; reading that view's grad_fn raises, and building the module failed here."""
    embedding = nn.Embedding(10, 4, padding_idx=0).to(gpu)
    assert embedding.weight.device == gpu and not embedding.weight[0].any()
    assert embedding(torch.tensor([0, 3], device=gpu)).device == gpu


def test_a_factory_allocates_where_asked_not_where_its_tensor_arguments_are(gpu):
    """A 0-dim GPU tensor given to a factory is a number (torch.arange(n) of a GPU n is made on
    the default device on a GPU too)."""
    n = torch.tensor(5, device=gpu)
    assert torch.arange(n).device == torch.device("cpu")
    assert torch.full((2,), n).device == torch.device("cpu")
    assert torch.arange(n, device=gpu).device == gpu
    assert torch.zeros_like(torch.ones(2, device=gpu)).device == gpu


def test_the_standard_training_loop_passes():
    """Acceptance 2: the device-agnostic loop takes its GPU path and runs without a device error."""
    import fake_training_loop
    with fake_accelerator():
        result = fake_training_loop.run()
    gpu = torch.device("cuda:0")
    assert result["device"].type == "cuda"
    assert {result[key] for key in ("param_device", "ema_device", "state_device",
                                    "default_device", "logits_device")} == {gpu}
    assert result["same_after_reload"] and all(result["pinned"]) and len(result["losses"]) == 4


def test_the_same_loop_with_an_unmoved_label_fails():
    import fake_training_loop
    with fake_accelerator():
        with pytest.raises(RuntimeError) as error:
            fake_training_loop.run(workers=0, forget="label")
    assert str(error.value) == (
        "Expected all tensors to be on the same device, but got target is on cpu, different from "
        "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)")
    assert error.traceback[-1].frame.code.raw.co_name != "__torch_dispatch__"
    # on the CPU the same bug goes unnoticed (on a machine with a real GPU it fails there)
    if not torch.cuda.is_available():
        assert fake_training_loop.run(workers=0, forget="label")["device"].type == "cpu"


def test_a_script_run_on_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import sys
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = torch.nn.Linear(3, 1).to(device)
        print("device", device, sys.argv[1:])
        model(torch.randn(2, 3))
    """))
    result = subprocess.run([sys.executable, "-m", "torchdevlint.runtime", str(script), "--lr", "1"],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 1
    assert "device cuda ['--lr', '1']" in result.stdout
    lines = result.stderr.splitlines()
    assert lines[-1].startswith("RuntimeError: Expected all tensors to be on the same device")
    assert f'File "{script}", line 6, in <module>' in result.stderr
    assert "torchdevlint" not in result.stderr.replace(str(script), "")


def test_a_missing_script_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "torchdevlint.runtime", str(tmp_path / "no.py")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip() == f"torchdevlint.runtime: no such script: {tmp_path / 'no.py'}"


def test_legacy_cuda_tensor_types_of_code_before_torch_0_4(gpu):
    # ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`` and ``x.type(Tensor)``
    # (PyTorch-GAN): a copy on the GPU, as TDL004/TDL008/TDL011 read it; the constructor makes
    # one there; ``type()`` names it; ``.type(torch.FloatTensor)`` comes back to the CPU
    x = torch.ones(2, 3, dtype=torch.float64)
    moved = x.type(torch.cuda.FloatTensor)
    assert moved.device == gpu and moved.dtype == torch.float32 and x.device.type == "cpu"
    assert x.type("torch.cuda.LongTensor").device == gpu
    assert moved.type() == "torch.cuda.FloatTensor" and x.type() == "torch.DoubleTensor"
    assert isinstance(moved, torch.cuda.FloatTensor) and not isinstance(x, torch.cuda.FloatTensor)
    back = moved.type(torch.FloatTensor)
    assert back.device.type == "cpu" and back.type() == "torch.FloatTensor"
    assert moved.type(torch.float16).device == gpu  # a dtype stays where it is
    made = torch.cuda.FloatTensor(3, 4)
    assert made.device == gpu and made.shape == (3, 4)
    assert torch.cuda.LongTensor([1, 2]).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        moved + torch.ones(2, 3)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about machines without CUDA")
def test_legacy_cuda_tensor_types_without_a_gpu():
    # on the CPU-only side the pretend accelerator keeps torch's own refusal (on an H200 the
    # move simply runs: this test failed there, the only failure of the runtime suite)
    with pytest.raises((TypeError, RuntimeError, AssertionError)):
        torch.ones(2).type(torch.cuda.FloatTensor)


def test_tdl011_finds_the_legacy_type_move_and_its_fix_runs(gpu):
    # ``X = real.type(Tensor)`` is a move for TDL011 as ``.to(device)`` is (issue 28)
    from runtime_harness import load_fixture
    from torchdevlint.engine import lint_source
    from torchdevlint.rules.registry import classes_by_code

    data = ROOT / "tests" / "data"
    flagged = data / "tdl011_legacy_tensor_type.py"
    found = lint_source(flagged.read_text(encoding="utf-8"), flagged.name,
                        [classes_by_code()["TDL011"]]).findings
    assert [(f.line, f.column) for f in found] == [(14, 12)]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        load_fixture(flagged).main(gpu)
    assert load_fixture(data / "tdl011_legacy_tensor_type.fixed.py").main(gpu).device == gpu


def test_tdl007_finds_a_cpu_tensor_indexed_with_a_device_mask_and_its_fix_runs(gpu):
    # a module without ``forward`` whose method the program calls on the moved instance: a
    # CPU ``linspace`` indexed with a mask computed from the GPU parameter (issue 28)
    from runtime_harness import load_fixture
    from torchdevlint.engine import lint_source
    from torchdevlint.rules.registry import classes_by_code

    data = ROOT / "tests" / "data"
    flagged = data / "tdl007_method_without_forward.py"
    found = lint_source(flagged.read_text(encoding="utf-8"), flagged.name,
                        [classes_by_code()["TDL007"]]).findings
    assert [(f.line, f.column) for f in found] == [(25, 18), (31, 18)]
    assert "indexes it with a tensor on the module's device" in found[0].message
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        load_fixture(flagged).main(gpu)
    colors, shaded = load_fixture(data / "tdl007_method_without_forward.fixed.py").main(gpu)
    assert colors.device == shaded.device == gpu
