"""Causes of false findings that the judging of the first sealed test split showed (issue 28;
benchmarks/precision/verdicts/, judged.tsv), each next to the true finding it must not hide:
the false case is silent and its twin, which differs only where the evidence is, is still
reported. The fixtures named in each test hold the whole cases."""
from __future__ import annotations

import textwrap

from torchdevlint.engine import lint_source
from torchdevlint.rules import RULES_BY_CODE


def found(source: str, code: str) -> list:
    result = lint_source(textwrap.dedent(source), "snippet.py", (RULES_BY_CODE[code],))
    assert result.error is None, result.error
    return sorted((f.line, f.column) for f in result.findings if f.code == code)


# -- TDL004: a data pipeline that moves its items (GraphBolt's ``copy_to``) ------------------

PIPELINE = """\
    import dgl.graphbolt as gb
    import torch


    def main(itemset, device):
        model = torch.nn.Linear(4, 2).to(device)
        datapipe = gb.ItemSampler(itemset, batch_size=16).copy_to(DEVICE)
        loader = gb.DataLoader(datapipe)
        for data in loader:
            model(data.x)
"""


def test_tdl004_a_pipeline_copied_to_the_device_yields_device_batches():
    assert found(PIPELINE.replace("DEVICE", "device"), "TDL004") == []
    assert found(PIPELINE.replace("DEVICE", "device=device"), "TDL004") == []
    # copied to the CPU: the batches are on the host, as from any loader
    assert found(PIPELINE.replace("DEVICE", '"cpu"'), "TDL004") == [(10, 15)]
    assert found(PIPELINE.replace(".copy_to(DEVICE)", ""), "TDL004") == [(10, 15)]


# -- TDL004: loaders kept in a list filled by ``append`` -----------------------------------

LOADER_LIST = """\
    import torch
    from dgl.dataloading import DataLoader


    def main(graph, splits, sampler, device):
        loaders = []
        for eids in splits:
            data_loader = DataLoader(graph, eids, sampler, DEVICE, batch_size=32)
            loaders.append(data_loader)
        train_loader, test_loader = loaders
        model = torch.nn.Linear(4, 2).to(device)
        for gs, y in train_loader:
            model(gs)
"""


def test_tdl004_loaders_appended_to_a_list_with_a_device_yield_device_batches():
    assert found(LOADER_LIST.replace("DEVICE", "device=device"), "TDL004") == []
    assert found(LOADER_LIST.replace("DEVICE", 'device="cpu"'), "TDL004") == [(13, 15)]
    assert found(LOADER_LIST.replace("DEVICE", "shuffle=True"), "TDL004") == [(13, 15)]
