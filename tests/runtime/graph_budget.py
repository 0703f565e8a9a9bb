"""The stand-in for a GPU's memory limit in TDL010's runtime proof: a budget on the autograd
graphs alive at once, counted per data-loader batch.

While a fixture runs, every ``DataLoader`` numbers the batches it hands out, and
``torch.autograd.graph.saved_tensors_hooks`` tags each tensor autograd saves for backward (the
activations) with the batch being processed. A tag lives as long as autograd keeps the saved
tensor: until ``backward()`` frees it, or until nothing references the graph any more. When a
forward pass would save a tensor while the saved tensors of more than ``BUDGET`` batches are
alive, the run fails with ``torch.OutOfMemoryError``, as a GPU does when memory grows with every
batch. A loop keeps at most two batches' graphs alive when it drops each iteration's graph (the
previous one lives until its names are rebound); a loop that accumulates history keeps all of
them.
"""
from __future__ import annotations

import contextlib
import weakref
from collections import Counter
from typing import Optional

BUDGET = 2  # batches whose saved tensors may be alive at once
MESSAGE = ("autograd graph budget exceeded: the saved tensors of {alive} batches are alive at "
           "once (the stand-in's budget: {budget} batches); each iteration keeps its graph")


class _Saved:
    """What autograd keeps for one saved tensor while the budget runs."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor) -> None:
        self.tensor = tensor


class GraphCounter:
    """Saved tensors alive, by the batch during which autograd saved them."""

    def __init__(self, budget: Optional[int] = BUDGET) -> None:
        self.budget = budget
        self.batch = 0
        self.alive: Counter = Counter()
        self.peak = 0

    def batches_alive(self) -> int:
        return sum(1 for count in self.alive.values() if count > 0)

    def _released(self, batch: int) -> None:
        self.alive[batch] -= 1

    def pack(self, tensor):
        import torch
        self.alive[self.batch] += 1
        alive = self.batches_alive()
        self.peak = max(self.peak, alive)
        if self.budget is not None and alive > self.budget:
            self.alive[self.batch] -= 1
            raise torch.OutOfMemoryError(MESSAGE.format(alive=alive, budget=self.budget))
        saved = _Saved(tensor.detach())  # (the tensor itself may be the node's output: a cycle)
        weakref.finalize(saved, self._released, self.batch)
        return saved

    @staticmethod
    def unpack(saved):
        return saved.tensor

    @contextlib.contextmanager
    def counting(self):
        """Number the batches of every DataLoader iterated inside, and tag saved tensors."""
        import torch
        from torch.utils.data import DataLoader

        original = DataLoader.__iter__
        counter = self

        def numbered(loader):
            for item in original(loader):
                counter.batch += 1
                yield item

        DataLoader.__iter__ = numbered
        try:
            with torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack):
                yield self
        finally:
            DataLoader.__iter__ = original
