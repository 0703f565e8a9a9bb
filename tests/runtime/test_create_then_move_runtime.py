"""TDL009's runtime proof. It is a performance rule: the flagged code works, so the proof is not
an error but an equivalence and a measurement, for every positive fixture and its .fixed.py:

1. both give the same tensors (values, dtype, device, shape, requires_grad) on the CPU, with
   the same seed, and the same tensors but values (meta has none) on ``meta``;
2. on ``meta`` (the accelerator's stand-in), a recorder of every operator torch dispatches
   shows the flagged statements create a tensor on the CPU and copy it (``aten._to_copy``),
   and the fixed statements create their tensor on ``meta`` directly: no CPU tensor, no copy;
3. on a real GPU (marker ``cuda``), the flagged and fixed code give equal tensors on it, except
   where the fix is unsafe because the values may change (random factories, float ranges).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from conftest import expected_findings
from runtime_harness import cuda_available, fixed_version, load_fixture, positive_fixtures

CASES = [pytest.param(path, id=path.stem) for rule, path in positive_fixtures() if rule == "TDL009"]
# Fixtures whose fixes are unsafe because the values may change on another device.
VALUES_MAY_CHANGE = {"random_and_ranges"}


class Creations(TorchDispatchMode):
    """Every tensor an operator returns while a fixture runs: (operator, device type, the
    fixture line that called it)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.target = str(path.resolve())
        self.made = []

    def _line(self):
        frame = sys._getframe(1)
        while frame is not None:
            if str(Path(frame.f_code.co_filename).resolve()) == self.target:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        line = self._line()
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self.made.append((str(func), value.device.type, line))
        return out


def run(path: Path, device: str, record: bool = False):
    module = load_fixture(path)
    torch.manual_seed(0)
    if not record:
        return module.main(torch.device(device)), None
    recorder = Creations(path)
    with recorder:
        result = module.main(torch.device(device))
    return result, recorder.made


def assert_same(flagged, fixed, values: bool = True) -> None:
    left, right = tree_flatten(flagged)[0], tree_flatten(fixed)[0]
    assert len(left) == len(right)
    for a, b in zip(left, right):
        if not isinstance(a, torch.Tensor):
            assert a == b
            continue
        assert isinstance(b, torch.Tensor)
        assert (a.dtype, a.device, a.shape, a.requires_grad, a.is_leaf) == \
            (b.dtype, b.device, b.shape, b.requires_grad, b.is_leaf)
        if values:
            assert torch.equal(a, b), (a, b)


def flagged_statements(path: Path) -> list:
    """(first, last) line of each statement that carries a TDL009 marker; a marked
    ``name = factory(...)`` runs to the next statement when that one moves ``name`` (the
    factory's result bound to a name whose only use is the move, issue 28)."""
    lines = {line for line, _, code in expected_findings(path) if code == "TDL009"}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spans = []
    for node in ast.walk(tree):
        for body in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(body, list):
                continue
            for index, statement in enumerate(body):
                if isinstance(statement, (ast.FunctionDef, ast.If, ast.For, ast.While, ast.With,
                                          ast.ClassDef)) or not any(
                        statement.lineno <= line <= statement.end_lineno for line in lines):
                    continue
                last = statement.end_lineno
                following = body[index + 1] if index + 1 < len(body) else None
                if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name) \
                        and following is not None and any(
                            isinstance(n, ast.Name) and n.id == statement.targets[0].id
                            for n in ast.walk(following)):
                    last = following.end_lineno
                spans.append((statement.lineno, last))
    return sorted(spans)


def made_in(made, span, device: str = None, op: str = None) -> list:
    first, last = span
    return [entry for entry in made if entry[2] is not None and first <= entry[2] <= last
            and (device is None or entry[1] == device) and (op is None or op in entry[0])]


def test_every_positive_fixture_is_proven_here():
    assert CASES, "TDL009 has no positive fixtures"


@pytest.mark.parametrize("path", CASES)
def test_fixed_code_gives_the_same_tensors_on_the_cpu(path):
    flagged, _ = run(path, "cpu")
    fixed, _ = run(fixed_version(path), "cpu")
    assert_same(flagged, fixed)


@pytest.mark.parametrize("path", CASES)
def test_fixed_code_gives_the_same_tensors_on_meta(path):
    flagged, _ = run(path, "meta")
    fixed, _ = run(fixed_version(path), "meta")
    assert_same(flagged, fixed, values=False)


@pytest.mark.parametrize("path", CASES)
def test_flagged_code_creates_on_the_cpu_and_copies_and_fixed_code_does_not(path):
    """meta plays the accelerator: each flagged statement that runs creates a CPU tensor and
    copies it to meta; the fixed statement creates only meta tensors and copies nothing."""
    _, made = run(path, "meta", record=True)
    _, made_fixed = run(fixed_version(path), "meta", record=True)
    ran = 0
    for span, fixed_span in zip(flagged_statements(path), flagged_statements(fixed_version(path))):
        if not made_in(made, span):
            continue  # not run here (``.cuda()`` behind torch.cuda.is_available())
        ran += 1
        assert made_in(made, span, device="cpu"), f"line {span[0]}: no CPU tensor created"
        assert made_in(made, span, op="_to_copy"), f"line {span[0]}: nothing copied"
        assert made_in(made_fixed, fixed_span), f"fixed line {fixed_span[0]} did not run"
        assert not made_in(made_fixed, fixed_span, device="cpu"), \
            f"fixed line {fixed_span[0]} still creates a CPU tensor: {made_in(made_fixed, fixed_span)}"
        assert not made_in(made_fixed, fixed_span, op="_to_copy"), f"fixed line {fixed_span[0]} copies"
    assert ran or path.stem == "cuda_call"


def test_the_recorder_sees_what_it_must():
    """The recorder is not blind: a CPU factory and its copy are seen, a meta factory too."""
    recorder = Creations(Path(__file__))
    with recorder:
        torch.zeros(2).to("meta")
        torch.zeros(2, device="meta")
    devices = [(op.split(".")[1], device) for op, device, _ in recorder.made]
    assert devices == [("zeros", "cpu"), ("_to_copy", "meta"), ("zeros", "meta")]


needs_cuda = [pytest.mark.cuda, pytest.mark.skipif(not cuda_available(), reason="no CUDA device")]


@pytest.mark.parametrize("path", [pytest.param(p.values[0], id=p.id, marks=needs_cuda) for p in CASES])
def test_fixed_code_gives_the_same_tensors_on_cuda(path):
    flagged, _ = run(path, "cuda")
    fixed, _ = run(fixed_version(path), "cuda")
    assert_same(flagged, fixed, values=path.stem not in VALUES_MAY_CHANGE)
