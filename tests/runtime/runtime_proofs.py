"""The runtime proof of every rule: how to run its fixtures and the error torch must raise.

A proof is checked three ways for every positive fixture of its rule: the flagged code fails
with one of the promised errors, at the flagged code or at a use of what it leaves behind;
the fixed version runs; the linter flags the first and not the second.

Stand-ins decide which device plays the accelerator:

``meta``
    On a CPU-only machine the ``meta`` device plays the GPU (TDL001, TDL004): the fixture
    moves its model to ``meta`` and its forgotten tensors stay on the CPU. Meta checks devices
    for the operations these fixtures mix them in (nn.Linear, elementwise arithmetic and
    comparisons, cross_entropy), but not for every operation: see test_stand_ins.py.
``cuda``
    A real GPU, where there is one (pytest marker ``cuda``); without one, the pretend
    accelerator (``torchdevlint.runtime``), which raises the messages a real GPU raises.
``no-cuda``
    A machine without CUDA (TDL002, TDL003): this one when it has none, the pretend
    accelerator's CPU-only phase when that plays the GPU, otherwise a child process that sees
    no GPU (``CUDA_VISIBLE_DEVICES=""``).
``no-accelerator``
    A torch without an accelerator (TDL012): a CPU-only build, where
    ``torch.accelerator.current_accelerator()`` is None. Hiding the GPU does not make one of a
    build with an accelerator (it still names its accelerator), so there the proof is skipped.
"""
from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import expected_findings
from runtime_harness import (FIXTURES, Outcome, accelerator_built, cuda_available, fixed_version,
                             main_arguments, positive_fixtures, pretend_accelerator_active, run_main,
                             run_main_without_cuda, write_cuda_tagged_checkpoint)


class ProofFailed(AssertionError):
    """A fixture did not behave at runtime the way its rule's proof promises."""


@dataclass(frozen=True)
class ExpectedError:
    """An exception type, a regular expression its whole message must match, and a real message
    it matches (the one the rule's documentation quotes)."""
    type: str
    message: str
    example: str

    def matches(self, error_type: str, message: str) -> bool:
        return error_type == self.type and re.fullmatch(self.message, message) is not None

    def matches_outcome(self, outcome: Outcome) -> bool:
        return outcome.failed and self.matches(outcome.error_type, outcome.message)

    def quote(self) -> str:
        """The example as a traceback's last line shows it."""
        return f"{self.type}: {self.example}"

    def __str__(self) -> str:
        return f"{self.type}: /{self.message}/"


@dataclass(frozen=True)
class RuleProof:
    rule: str
    argument: str  # what main() takes: "device", "none" or "checkpoint"
    stand_in: str  # who plays the accelerator (or its absence) without a GPU
    cuda_stand_in: str  # the same, where a real GPU is available
    errors: dict  # stand-in -> the errors the flagged code may raise there

    def expected(self, stand_in: str) -> tuple:
        return self.errors[stand_in]

    def all_errors(self) -> list:
        return [error for errors in self.errors.values() for error in errors]


# What a device mix-up raises on the meta device: one check names the stray tensor, the other
# the device the operation expected (which is which depends on the operation).
META_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError",
    r"Tensor on device (meta is not on the expected device cpu|cpu is not on the expected device meta)!",
    example="Tensor on device meta is not on the expected device cpu!")

# ...and ``index_copy`` / ``index_add`` on meta, which check their three tensors themselves
# (``result.index_copy(1, self.lora_ind, x)`` with the index left on the CPU; on a GPU the
# dispatcher's "got index is on cpu" of CUDA_DEVICE_MISMATCH comes first).
META_INDEXED_UPDATE_MISMATCH = ExpectedError(
    "RuntimeError",
    r"index_(copy|add)\(\): self, index and source expected to be in the same device, but got "
    r"\(self\) (meta|cpu), \(index\) (cpu|meta), and \(source\) (meta|cpu)",
    example="index_copy(): self, index and source expected to be in the same device, but got "
            "(self) meta, (index) cpu, and (source) meta")

# ...and on a real GPU: TensorIterator ops (elementwise, comparisons) report the two devices
# they found, ops with a device guard (addmm in nn.Linear) the argument that is elsewhere.
CUDA_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError",
    r"Expected all tensors to be on the same device, but "
    r"(found at least two devices, (cuda:\d+ and cpu|cpu and cuda:\d+)!"
    r"|got \w+ is on (cpu|cuda:\d+), different from other tensors on (cuda:\d+|cpu))"
    r"( \(when checking argument (for argument \w+ )?in method \w+\))?",
    example="Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu!")

# ...and masked_fill's own check on a GPU (its CUDA kernel tests self and mask before any
# TensorIterator does), seen on an H200 (tests/runtime/data/gpu/proofs-h200.json).
CUDA_MASK_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError",
    r"expected self and mask to be on the same device, but got mask on (cpu|cuda:\d+) and self "
    r"on (cuda:\d+|cpu)",
    example="expected self and mask to be on the same device, but got mask on cpu and self on "
            "cuda:0")

# ...and indexing a CPU tensor with indices on a GPU (``self.alpha[targets]``: advanced
# indexing accepts CPU indices into a device tensor, not the other way round).
CUDA_INDEX_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError",
    r"indices should be either on cpu or on the same device as the indexed tensor \(cpu\)",
    example="indices should be either on cpu or on the same device as the indexed tensor (cpu)")

# ...and where the stray tensor is the initial state of an RNN (``nn.LSTM``/``nn.GRU`` check
# their input and hidden state before anything else), on meta and on a GPU alike.
RNN_STATE_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError", r"Input and hidden tensors are not at the same device, found input tensor "
                    r"at (meta|cuda:\d+) and hidden tensor at cpu",
    example="Input and hidden tensors are not at the same device, found input tensor at cuda:0 "
            "and hidden tensor at cpu")

# ...and where the stray tensor is an RNN's input (``self.lstm(x_cpu)`` of a moved module: the
# layer checks its input against its weights first), on meta and on a GPU alike.
RNN_INPUT_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError", r"Input and parameter tensors are not at the same device, found input "
                    r"tensor at cpu and parameter tensor at (meta|cuda:\d+)",
    example="Input and parameter tensors are not at the same device, found input tensor at cpu "
            "and parameter tensor at cuda:0")

# ...and for gradients handed to autograd (``autograd.grad(out, x, torch.ones(n))``,
# ``out.backward(g)``) on another device than their outputs, on meta and on a GPU alike.
GRADIENT_DEVICE_MISMATCH = ExpectedError(
    "RuntimeError", r"invalid gradient at index \d+ - expected device (meta|cuda:\d+) but got cpu",
    example="invalid gradient at index 0 - expected device cuda:0 but got cpu")

NO_CUDA_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                  "and installed a driver from http://www.nvidia.com/Download/index.aspx")
NO_CUDA = (
    # a CPU-only build of torch
    ExpectedError("AssertionError", r"Torch not compiled with CUDA enabled",
                  example="Torch not compiled with CUDA enabled"),
    # a CUDA build that sees no GPU (CUDA_VISIBLE_DEVICES="")
    ExpectedError("RuntimeError", r"No CUDA GPUs are available", example="No CUDA GPUs are available"),
    # a CUDA build on a machine without the NVIDIA driver
    ExpectedError("RuntimeError", re.escape(NO_CUDA_DRIVER), example=NO_CUDA_DRIVER),
)

CUDA_CHECKPOINT_ON_CPU_MESSAGE = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU.")
CUDA_CHECKPOINT_ON_CPU = ExpectedError("RuntimeError", re.escape(CUDA_CHECKPOINT_ON_CPU_MESSAGE),
                                       example=CUDA_CHECKPOINT_ON_CPU_MESSAGE)

# What dereferencing torch.accelerator.current_accelerator()'s None raises (TDL012).
NONE_ACCELERATOR = ExpectedError("AttributeError", r"'NoneType' object has no attribute '\w+'",
                                 example="'NoneType' object has no attribute 'type'")

# Errors a proof must NOT accept: other failures that merely look alike.
LOOKALIKE_ERRORS = [
    # a torch older than the accelerator API, not a machine without an accelerator
    ("AttributeError", "module 'torch' has no attribute 'accelerator'"),
    ("AttributeError", "'Tensor' object has no attribute 'type_'"),
    ("RuntimeError", ""),
    ("RuntimeError", "boom"),
    # meta refuses to read data with its own errors
    ("RuntimeError", "Tensor.item() cannot be called on meta tensors"),
    ("NotImplementedError", "Cannot copy out of meta tensor; no data!"),
    # a mix-up between two accelerators, not a tensor left on the CPU
    ("RuntimeError", "Tensor on device meta is not on the expected device meta!"),
    ("RuntimeError", "Expected all tensors to be on the same device, but found at least two "
                     "devices, cuda:0 and cuda:1!"),
    # a checkpoint from a bigger machine, not a GPU checkpoint on a CPU-only one
    ("RuntimeError", "Attempting to deserialize object on CUDA device 3 but "
                     "torch.cuda.device_count() is 1. Please use torch.load with map_location to "
                     "map your storages to an existing device."),
    ("FileNotFoundError", "[Errno 2] No such file or directory: 'checkpoint.pt'"),
]

# What NumPy's conversion of a tensor in device memory raises (TDL008): on meta, which plays
# the GPU, and on a real GPU.
NUMPY_OF_DEVICE_TENSOR = ExpectedError(
    "TypeError",
    r"can't convert (meta|cuda:\d+) device type tensor to numpy\. Use Tensor\.cpu\(\) to copy "
    r"the tensor to host memory first\.",
    example="can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
            "tensor to host memory first.")

# (the rules whose fixtures mask attention scores with a tensor the model did not move)
CUDA_MISMATCHES = (CUDA_DEVICE_MISMATCH, CUDA_MASK_DEVICE_MISMATCH, CUDA_INDEX_DEVICE_MISMATCH)

PROOFS = {
    "TDL001": RuleProof("TDL001", argument="device", stand_in="meta", cuda_stand_in="cuda",
                        errors={"meta": (META_DEVICE_MISMATCH,), "cuda": (CUDA_DEVICE_MISMATCH,)}),
    "TDL002": RuleProof("TDL002", argument="none", stand_in="no-cuda", cuda_stand_in="no-cuda",
                        errors={"no-cuda": NO_CUDA}),
    "TDL003": RuleProof("TDL003", argument="checkpoint", stand_in="no-cuda", cuda_stand_in="no-cuda",
                        errors={"no-cuda": (CUDA_CHECKPOINT_ON_CPU,)}),
    "TDL004": RuleProof("TDL004", argument="device", stand_in="meta", cuda_stand_in="cuda",
                        errors={"meta": (META_DEVICE_MISMATCH,), "cuda": (CUDA_DEVICE_MISMATCH,)}),
    "TDL005": RuleProof("TDL005", argument="device", stand_in="meta", cuda_stand_in="cuda",
                        # (an RNN's state kept as a plain tuple: its layer checks it first)
                        errors={"meta": (META_DEVICE_MISMATCH, RNN_STATE_DEVICE_MISMATCH,
                                         META_INDEXED_UPDATE_MISMATCH),
                                "cuda": CUDA_MISMATCHES + (RNN_STATE_DEVICE_MISMATCH,)}),
    "TDL006": RuleProof("TDL006", argument="device", stand_in="meta", cuda_stand_in="cuda",
                        errors={"meta": (META_DEVICE_MISMATCH,), "cuda": (CUDA_DEVICE_MISMATCH,)}),
    "TDL007": RuleProof("TDL007", argument="device", stand_in="meta", cuda_stand_in="cuda",
                        errors={"meta": (META_DEVICE_MISMATCH, RNN_STATE_DEVICE_MISMATCH,
                                         RNN_INPUT_DEVICE_MISMATCH),
                                "cuda": CUDA_MISMATCHES + (RNN_STATE_DEVICE_MISMATCH,
                                                           RNN_INPUT_DEVICE_MISMATCH)}),
    # meta-host: meta plays the GPU, and its .cpu() gives a host tensor of the same shape,
    # dtype and requires_grad (meta has no data to copy; see meta_host_copies)
    "TDL008": RuleProof("TDL008", argument="device", stand_in="meta-host", cuda_stand_in="cuda",
                        errors={"meta-host": (NUMPY_OF_DEVICE_TENSOR,),
                                "cuda": (NUMPY_OF_DEVICE_TENSOR,)}),
    "TDL011": RuleProof("TDL011", argument="device", stand_in="meta", cuda_stand_in="cuda",
                        # (an RNN given a CPU initial state, ``model.init_hidden(n)``, checks
                        # its input and state first: issue 28)
                        errors={"meta": (META_DEVICE_MISMATCH, GRADIENT_DEVICE_MISMATCH,
                                         RNN_STATE_DEVICE_MISMATCH),
                                "cuda": (CUDA_DEVICE_MISMATCH, GRADIENT_DEVICE_MISMATCH,
                                         RNN_STATE_DEVICE_MISMATCH)}),
    "TDL012": RuleProof("TDL012", argument="none", stand_in="no-accelerator",
                        cuda_stand_in="no-accelerator",
                        errors={"no-accelerator": (NONE_ACCELERATOR,)}),
}


# Performance rules promise no error: their fixtures run both ways, and the proof is that the
# fixed code gives the same tensors without what the rule calls waste (TDL009: no CPU tensor
# and no copy; tests/runtime/test_create_then_move_runtime.py).
EQUIVALENCE_PROOFS = {"TDL009": "test_create_then_move_runtime.py"}

# TDL010's proof is memory, not an exception: its flagged loops keep every batch's autograd
# graph (the saved activations) alive, so what they hold grows with the number of batches;
# their fixed versions and a training loop that calls backward() every step do not
# (tests/runtime/test_graph_kept_alive.py; graph_budget.py counts the saved tensors).
MEMORY_PROOFS = {"TDL010": "test_graph_kept_alive.py"}


def leniency_problems(proof: RuleProof, proofs: dict) -> list:
    """Why ``proof`` would accept a failure other than its bug (empty when it would not)."""
    problems = []
    own = proof.all_errors()
    others = [(error.type, error.example) for other in proofs.values() if other is not proof
              for error in other.all_errors() if error not in own]
    for error in own:
        if not error.matches(error.type, error.example):
            problems.append(f"{proof.rule}: {error} does not match its own example {error.example!r}")
        if error.matches("Exception", error.example):
            problems.append(f"{proof.rule}: {error} accepts any exception type")
        for error_type, message in LOOKALIKE_ERRORS + others:
            if error.matches(error_type, message):
                problems.append(f"{proof.rule}: {error} accepts {error_type}: {message!r}")
    return problems


def proof_gaps(proofs: dict) -> list:
    """Why ``proofs`` do not cover every rule and every positive fixture (empty when they do)."""
    from torchdevlint.rules import ALL_RULES

    rules = {rule.code for rule in ALL_RULES}
    fixture_rules = {path.name for path in FIXTURES.glob("TDL*") if path.is_dir()}
    proven = {rule for rule, _ in positive_fixtures()}
    gaps = [f"{rule}: no runtime proof"
            for rule in sorted((rules | fixture_rules) - set(proofs) - set(EQUIVALENCE_PROOFS)
                          - set(MEMORY_PROOFS))]
    gaps += [f"{rule}: a proof or fixture directory for no rule"
             for rule in sorted((set(proofs) | fixture_rules) - rules)]
    gaps += [f"{rule}: no positive fixture to run" for rule in sorted(rules - proven)]
    for rule, proof in sorted(proofs.items()):
        for stand_in in (proof.stand_in, proof.cuda_stand_in):
            if not proof.errors.get(stand_in):
                gaps.append(f"{rule}: promises no error on {stand_in}")
    gaps += [f"{path.relative_to(FIXTURES)}: no fixed version {fixed_version(path).name}"
             for _, path in positive_fixtures() if not fixed_version(path).exists()]
    return gaps


def checkpoint_state() -> dict:
    """What the TDL003 fixtures load: the state dict of an nn.Linear(4, 2)."""
    import torch.nn as nn
    return nn.Linear(4, 2).state_dict()


def write_checkpoint(directory: Path, real_cuda: bool = False) -> Path:
    """A checkpoint saved "on a GPU": really (``real_cuda``), or retagged without one."""
    path = directory / "checkpoint.pt"
    if real_cuda:
        import torch
        torch.save({name: tensor.cuda() for name, tensor in checkpoint_state().items()}, path)
        return path
    return write_cuda_tagged_checkpoint(path, checkpoint_state())


def run_fixture(proof: RuleProof, path: Path, stand_in: str, workdir: Path,
                real_cuda_checkpoint: bool = False) -> Outcome:
    """Run the fixture's ``main`` with ``stand_in`` playing the accelerator (or its absence)."""
    value = None
    if proof.argument == "device":
        value = "meta" if stand_in == "meta-host" else stand_in
    elif proof.argument == "checkpoint":
        value = str(write_checkpoint(workdir, real_cuda_checkpoint))
    if stand_in == "no-accelerator" and accelerator_built():
        pytest.skip("this torch is built with an accelerator: current_accelerator() names it "
                    "even where no device is visible; the proof needs a CPU-only build")
    if stand_in == "no-cuda" and cuda_available():
        if pretend_accelerator_active():  # its CPU-only phase plays the machine without CUDA
            from torchdevlint.runtime import cpu_only
            with cpu_only():
                return run_main(path, *main_arguments(proof.argument, value))
        return run_main_without_cuda(path, proof.argument, value)
    with real_gpu_hidden() if stand_in in ("meta", "meta-host") else _nothing():
        if stand_in == "meta-host":
            with meta_host_copies():
                return run_main(path, *main_arguments(proof.argument, value))
        return run_main(path, *main_arguments(proof.argument, value))


@contextmanager
def _nothing():
    yield


@contextmanager
def real_gpu_hidden():
    """Meta plays the GPU on a machine without one. Where a real GPU is, code that asks torch
    for one must not find it: ``nn.DataParallel`` replicated a meta module onto the H200's
    cuda:0 ("Cannot copy out of meta tensor"). Without a GPU this changes nothing."""
    import torch
    if not cuda_available():
        yield
        return
    saved = torch.cuda.is_available, torch.cuda.device_count
    torch.cuda.is_available, torch.cuda.device_count = (lambda: False), (lambda: 0)
    try:
        yield
    finally:
        torch.cuda.is_available, torch.cuda.device_count = saved


@contextmanager
def meta_host_copies():
    """Meta plays the GPU, and ``Tensor.cpu()`` of a meta tensor copies it to the host as a
    GPU's would: a CPU tensor of the same shape, dtype and ``requires_grad`` (zeros: meta
    holds no data). Everything else about meta is unchanged, NumPy's refusal included."""
    import torch

    original = torch.Tensor.cpu

    def cpu(self, *args, **kwargs):
        if self.device.type != "meta":
            return original(self, *args, **kwargs)
        copy = torch.zeros(self.shape, dtype=self.dtype)
        return copy.requires_grad_() if self.requires_grad else copy

    torch.Tensor.cpu = cpu
    try:
        yield
    finally:
        torch.Tensor.cpu = original


def flagged_lines(path: Path, rule: str) -> set:
    return {line for line, _, code in expected_findings(path) if code == rule}


def _returns_bound_on(function, returned: ast.Return, flagged: set) -> bool:
    """``return h0, c0`` of a function whose flagged line bound ``h0`` (``h0 =
    torch.zeros(...)``): it returns what the flagged line made."""
    if returned.value is None:
        return False
    bound = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
             and node.lineno in flagged for target in node.targets
             if isinstance(target, ast.Name)}
    return any(isinstance(name, ast.Name) and name.id in bound
               for name in ast.walk(returned.value))


def consequence_lines(path: Path, rule: str) -> set:
    """Lines where the bug a fixture's markers point at can surface.

    The flagged lines themselves, and the lines that read what a flagged line leaves behind:
    the receiver of a discarded ``x.to(...)`` (also of each in a tuple statement of them;
    still on the old device; the arguments of a
    discarded ``to_device(x, device)``), the names a flagged
    assignment binds (``device = torch.device("cuda")``, ``self.blocks = [...]``), what a loop
    takes out of those (``for block in self.blocks``), a tuple that holds one (``states =
    (state, state)``) or a tensor made like one (``torch.zeros_like(x)``), a parameter whose
    flagged default
    it is (``def build(device="cuda")``), and what a call of a function whose flagged line
    returns it, or a name it binds, gives (``hidden = self.init_hidden(n)``; ``return h0,
    c0``), also through functions that return what such a call gives.
    """
    flagged = flagged_lines(path, rule)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    carriers = set()
    returning = {function.name for function in ast.walk(tree)
                 if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(isinstance(node, ast.Return) and (
                     node.lineno in flagged or _returns_bound_on(function, node, flagged))
                         for node in ast.walk(function))}
    # a function that returns what one of those gives (``return make_mask(T) == 0``)
    grew = True
    while grew:
        grew = False
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    function.name not in returning and any(
                        isinstance(node, ast.Return) and node.value is not None and any(
                            isinstance(call, ast.Call) and getattr(call.func, "id", None) in returning
                            for call in ast.walk(node.value))
                        for node in ast.walk(function)):
                returning.add(function.name)
                grew = True
    # a module whose forward returns it: what an instance of its class is called as
    modules = {cls.name for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) and any(
        isinstance(f, ast.FunctionDef) and f.name == "forward" and any(
            isinstance(node, ast.Return) and node.lineno in flagged for node in ast.walk(f))
        for f in cls.body)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and getattr(
                node.value.func, "id", None) in modules:
            returning.update(getattr(t, "attr", getattr(t, "id", None)) for t in node.targets)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and getattr(
                node.value.func, "attr", getattr(node.value.func, "id", None)) in returning:
            carriers.update(ast.unparse(target) for target in node.targets)
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and node.lineno in flagged and isinstance(node.value, ast.Tuple):
            # ``x.to(device), y.to(device)``: each receiver stays where it was
            carriers.update(ast.unparse(element.func.value) for element in node.value.elts
                            if isinstance(element, ast.Call) and isinstance(element.func, ast.Attribute))
        elif isinstance(node, ast.Expr) and node.lineno in flagged and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute):
            carriers.add(ast.unparse(node.value.func.value))
        elif isinstance(node, ast.Expr) and node.lineno in flagged and isinstance(node.value, ast.Call):
            # a discarded call of a function that returns a move of its argument
            # (``to_device(x, device)``): the arguments stay where they were
            carriers.update(ast.unparse(arg) for arg in node.value.args)
        elif isinstance(node, ast.Assign) and node.lineno in flagged:
            carriers.update(ast.unparse(target) for target in node.targets)
            carriers.update(ast.unparse(name) for target in node.targets
                            if isinstance(target, (ast.Tuple, ast.List))
                            for name in target.elts)  # ``yv, xv = torch.meshgrid(...)``
        elif isinstance(node, ast.arguments):
            positional = node.posonlyargs + node.args
            defaults = list(zip(positional[len(positional) - len(node.defaults):], node.defaults))
            defaults += [(arg, default) for arg, default in zip(node.kwonlyargs, node.kw_defaults)
                         if default is not None]
            carriers.update(arg.arg for arg, default in defaults if default.lineno in flagged)
    # what a loop takes out of a carrier carries it too (``for block in self.blocks``), and a
    # tuple or list that holds one (``states = (state, state)``, handed to an LSTM whole)
    grew = True
    while grew:
        grew = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and (
                    (isinstance(node.value, (ast.Tuple, ast.List))
                     and any(ast.unparse(element) in carriers for element in node.value.elts))
                    # ``rolled = torch.zeros_like(history)``: made where its argument is
                    or (isinstance(node.value, ast.Call) and node.value.args
                        and getattr(node.value.func, "attr", "").endswith("_like")
                        and ast.unparse(node.value.args[0]) in carriers)):
                names = {ast.unparse(target) for target in node.targets}
                if not names <= carriers:
                    carriers |= names
                    grew = True
            if isinstance(node, (ast.For, ast.comprehension)) and any(
                    ast.unparse(inner) in carriers for inner in ast.walk(node.iter)):
                names = {ast.unparse(target) for target in ast.walk(node.target)
                         if isinstance(target, ast.Name)}
                if not names <= carriers:
                    carriers |= names
                    grew = True
    lines = set(flagged)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Load) \
                and ast.unparse(node) in carriers:
            lines.add(node.lineno)
    return lines


def check_fails_as_promised(proof: RuleProof, path: Path, stand_in: str, outcome: Outcome) -> None:
    """Raise ProofFailed unless the flagged code failed with a promised error, for its bug.

    "For its bug": one of the fixture's frames in the traceback is on a consequence line (the
    error may surface deeper, e.g. in the forward() that the flagged ``model(**batch)`` calls).
    """
    expected = proof.expected(stand_in)
    promise = " or ".join(map(str, expected))
    if not outcome.failed:
        raise ProofFailed(f"{path.name} did not fail as promised ({proof.rule} on {stand_in} promises "
                          f"{promise}): it {outcome.describe()}")
    if not any(error.matches_outcome(outcome) for error in expected):
        raise ProofFailed(f"{path.name} failed with the wrong error ({proof.rule} on {stand_in} "
                          f"promises {promise}): it {outcome.describe()}")
    lines = consequence_lines(path, proof.rule)
    if not lines.intersection(outcome.lines):
        raise ProofFailed(f"{path.name} failed with the promised error, but not while running flagged "
                          f"code or a use of what it leaves behind (lines {sorted(lines)}; the "
                          f"fixture's frames were at lines {list(outcome.lines)}): "
                          f"it {outcome.describe()}")


def check_runs(proof: RuleProof, path: Path, stand_in: str, outcome: Outcome) -> None:
    """Raise ProofFailed unless the (fixed) code ran to the end."""
    if not outcome.failed:
        return
    if any(error.matches_outcome(outcome) for error in proof.expected(stand_in)):
        raise ProofFailed(f"{path.name} still fails with the error {proof.rule} is about: "
                          f"it {outcome.describe()}")
    raise ProofFailed(f"{path.name} does not run: it {outcome.describe()}")
