"""The device-check table (torchdevlint/runtime/_op_table.py) is what its generator makes of
the installed torch's native_functions.yaml, so it cannot drift from torch unnoticed."""
from __future__ import annotations

import importlib.util
import re

import pytest

from torchdevlint.runtime import _op_table
from torchdevlint.runtime.make_table import native_functions_path, op_table, render


def test_the_table_is_generated_from_this_torch():
    yaml = pytest.importorskip("yaml")
    if importlib.util.find_spec("torchgen") is None or not native_functions_path().is_file():
        pytest.skip("this torch ships no native_functions.yaml")
    import torch
    generated_from = re.search(r"torch (\S+)'s native_functions", _op_table.__doc__).group(1)
    if torch.__version__.split("+")[0] != generated_from:
        # (torch 2.11's table, seen on a GPU machine, has named-tensor overloads 2.13 dropped)
        pytest.skip(f"the table is torch {generated_from}'s, the one version the runtime supports; "
                    f"this is torch {torch.__version__}")
    table = op_table(yaml.safe_load(native_functions_path().read_text(encoding="utf-8")))
    assert frozenset(table["no_check"]) == _op_table.NO_CHECK
    assert frozenset(table["structured"]) == _op_table.STRUCTURED
    assert frozenset(table["composite"]) == _op_table.COMPOSITE


def test_the_generator_reads_device_check_and_structured():
    entries = [{"func": "add.Tensor(Tensor self, Tensor other) -> Tensor", "device_check": "NoCheck",
                "structured_delegate": "add.out"},
               {"func": "addmm(Tensor self, Tensor mat1, Tensor mat2) -> Tensor",
                "dispatch": {"CPU, CUDA": "addmm"}},
               {"func": "mv(Tensor self, Tensor vec) -> Tensor",
                "dispatch": {"CompositeExplicitAutograd": "mv", "SparseCPU, SparseCUDA": "mv_sparse"}},
               {"func": "inner(Tensor self, Tensor other) -> Tensor"},
               {"func": "resize_as_(Tensor(a!) self, Tensor the_template) -> Tensor(a!)",
                "dispatch": {"CompositeExplicitAutograd": "resize_as_"}, "autogen": "resize_as, resize_as.out"}]
    table = op_table(entries)
    assert table == {"no_check": ["add.Tensor"], "structured": ["add.Tensor"],
                     "composite": ["inner", "mv", "resize_as", "resize_as.out", "resize_as_"]}
    assert "NO_CHECK = frozenset({\n    'add.Tensor',\n})" in render(table, "a test")
