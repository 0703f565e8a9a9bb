"""TDL010's proof is memory, not an exception: the flagged loops keep every batch's autograd
graph (the activations it saved) alive, so what they hold grows with the number of batches;
their fixed versions do not.

A loop that runs backward() every step (the ``GRAPH_NODES_KEPT`` kind, issue 28) frees what each
step's graph saved, but the total it keeps links every step's graph nodes: its proof counts the
nodes reachable from what the loop returns (they grow by the same number every step, while at
most one batch's saved tensors are alive at once), and none in the fixed version.

On the CPU the saved tensors are counted (``graph_budget.GraphCounter``: saved tensors alive,
by the batch that made them) after N=5 and N=20 batches. Where a GPU is present, the same runs
measure ``torch.cuda.max_memory_allocated`` (marker ``cuda``).
"""
from __future__ import annotations

import re
import string
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.graph_nodes_memory import reachable_nodes  # noqa: E402
from graph_budget import GraphCounter  # noqa: E402
from runtime_harness import (  # noqa: E402
    FIXTURES, cuda_available, fixed_version, load_fixture, positive_fixtures)
from torchdevlint.engine import lint_bytes  # noqa: E402
from torchdevlint.rules.tdl010_autograd_graph_kept_alive import (  # noqa: E402
    AutogradGraphKeptAlive)

TRAINING_LOOP = FIXTURES / "TDL010" / "positive" / "training_loop_backward.py"


def _pattern(message) -> re.Pattern:
    parts = [re.escape(literal) + (".*?" if name else "")
             for literal, name, _, _ in string.Formatter().parse(message.template)]
    return re.compile("".join(parts), re.S)


NODES_KEPT = _pattern(AutogradGraphKeptAlive.GRAPH_NODES_KEPT)


def tdl010_findings(path):
    return [f for f in lint_bytes(path.read_bytes(), str(path)).findings if f.code == "TDL010"]


def keeps_nodes_only(path) -> bool:
    """Whether ``path``'s findings are of the kind that backward() leaves nodes of."""
    return all(NODES_KEPT.fullmatch(f.message) for f in tdl010_findings(path))


def flagged(nodes_only: bool = False):
    return [pytest.param(path, id=path.stem) for code, path in positive_fixtures()
            if code == "TDL010" and keeps_nodes_only(path) == nodes_only]


def graphs_alive(path, batches):
    """(peak, at the end): how many batches' saved tensors were alive at once."""
    import torch
    counter = GraphCounter(budget=None)
    with counter.counting():
        result = load_fixture(path).main(torch.device("cpu"), batches)
        end = counter.batches_alive()
    del result
    return counter.peak, end


def graph_nodes(path, batches):
    """(autograd nodes reachable from what the loop returns, the peak of batches whose saved
    tensors were alive at once)."""
    import torch
    counter = GraphCounter(budget=None)
    with counter.counting():
        result = load_fixture(path).main(torch.device("cpu"), batches)
    return reachable_nodes(result), counter.peak


def test_both_kinds_have_fixtures():
    assert flagged() and flagged(nodes_only=True)


@pytest.mark.parametrize("path", flagged())
def test_flagged_loop_keeps_every_batch_graph(path):
    peak5, _ = graphs_alive(path, 5)
    peak20, _ = graphs_alive(path, 20)
    assert (peak5, peak20) == (5, 20), f"{path.name}: graphs alive {peak5} after 5, {peak20} after 20"


@pytest.mark.parametrize("path", flagged() + flagged(nodes_only=True))
def test_fixed_loop_keeps_none(path):
    fixed = fixed_version(path)
    assert graphs_alive(fixed, 5)[0] <= 2 and graphs_alive(fixed, 20)[0] <= 2
    assert tdl010_findings(fixed) == []


@pytest.mark.parametrize("path", flagged(nodes_only=True))
def test_backward_loop_keeps_every_step_graph_nodes(path):
    nodes5, peak5 = graph_nodes(path, 5)
    nodes10, _ = graph_nodes(path, 10)
    nodes20, peak20 = graph_nodes(path, 20)
    per_step = (nodes10 - nodes5) / 5
    assert per_step >= 1 and nodes20 - nodes10 == 10 * per_step, (nodes5, nodes10, nodes20)
    # backward() freed the activations: one batch's saved tensors alive at a time
    assert (peak5, peak20) == (1, 1)
    assert graph_nodes(fixed_version(path), 20)[0] == 0


def cuda_peak(path, batches):
    """What running ``path``'s loop for ``batches`` batches adds to the peak of allocated GPU
    memory. One warm-up batch first: a process's first matrix product allocates cuBLAS's
    workspace (32 MiB, seen on an H200), which stays and is no graph."""
    import torch
    load_fixture(path).main(torch.device("cuda"), 1)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    load_fixture(path).main(torch.device("cuda"), batches)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


@pytest.mark.cuda
@pytest.mark.skipif(not cuda_available(), reason="no CUDA device")
@pytest.mark.parametrize("path", flagged())
def test_flagged_loop_memory_grows_on_cuda(path):
    grew = cuda_peak(path, 20) - cuda_peak(path, 5)
    fixed_grew = cuda_peak(fixed_version(path), 20) - cuda_peak(fixed_version(path), 5)
    assert grew > 0 and grew > 4 * max(fixed_grew, 0), (grew, fixed_grew)


@pytest.mark.cuda
@pytest.mark.skipif(not cuda_available(), reason="no CUDA device")
@pytest.mark.parametrize("path", flagged(nodes_only=True))
def test_backward_loop_device_memory_flat_on_cuda(path):
    # what such a loop keeps is graph nodes in host memory and scalar losses: no activations
    grew = cuda_peak(path, 20) - cuda_peak(path, 5)
    assert grew <= 64 * 1024, grew


@pytest.mark.parametrize("path", flagged())
def test_flagged_loop_runs_out_of_a_memory_budget_and_its_fix_does_not(path):
    """With memory for two batches' graphs (the stand-in for a GPU's limit), the flagged loop
    fails as a GPU does once memory grows with every batch; the fixed loop runs to the end."""
    import torch
    assert tdl010_findings(path), f"{path.name}: the linter misses the TDL010 bug"
    with pytest.raises(torch.OutOfMemoryError, match=r"saved tensors of 3 batches are alive"):
        with GraphCounter().counting():
            load_fixture(path).main(torch.device("cpu"), 20)
    with GraphCounter().counting():
        load_fixture(fixed_version(path)).main(torch.device("cpu"), 20)
    with GraphCounter().counting():
        load_fixture(TRAINING_LOOP).main(torch.device("cpu"), 20)
