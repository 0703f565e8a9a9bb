"""TDL011's in-place operations (issue 28: PatchmatchNet's ``loss += ...`` into
``torch.zeros(1)``, qdtrack's ``scores *= mask``) and their runtime proof. ``meta``, which
plays the GPU in the fixtures' proofs, does not check the devices of in-place operations
(``meta_tensor.mul_(cpu_tensor)`` runs), so these are proven on the pretend accelerator,
which raises what CUDA raises, instead of with a positive fixture; the negative fixture
``fixtures/TDL011/negative/inplace_correct.py`` holds the silent side."""
from __future__ import annotations

import textwrap

import pytest
import torch

from torchdevlint.engine import lint_source
from torchdevlint.rules.registry import classes_by_code
from torchdevlint.runtime import fake_accelerator

MIXED = "Expected all tensors to be on the same device"

INPLACE_MASK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def match(embed_head, feats, memo_embeds, device):
        embeds = embed_head(feats.to(device))
        scores = torch.mm(embeds, memo_embeds.to(device).t()).softmax(dim=1)
        same_class = torch.ones(feats.size(0), memo_embeds.size(0))
        scores *= same_class
        return scores.argmax(dim=1)


    def main(device):
        embed_head = nn.Linear(8, 4).to(device)
        with torch.no_grad():
            return match(embed_head, torch.randn(3, 8), torch.randn(5, 4), device)
""")

CPU_ACCUMULATOR = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F


    def stage_loss(depths, depth_gt):
        loss = torch.zeros(1)
        for depth in depths:
            loss += F.smooth_l1_loss(depth, depth_gt)
        return loss


    def main(device):
        return stage_loss([torch.rand(2, device=device)], torch.rand(2, device=device))
""")


def run_main(source: str, device):
    namespace: dict = {}
    exec(compile(source, "snippet.py", "exec"), namespace)
    return namespace["main"](device)


@pytest.mark.parametrize("source,where,fixed", [
    (INPLACE_MASK, (9, 5), ("scores *= same_class", "scores *= same_class.to(scores.device)")),
    (CPU_ACCUMULATOR, (8, 9), ("loss = torch.zeros(1)",
                               "loss = torch.zeros(1, device=depth_gt.device)")),
])
def test_inplace_mixes_are_flagged_and_fail_on_a_gpu(source, where, fixed):
    findings = lint_source(source, "snippet.py", [classes_by_code()["TDL011"]]).findings
    assert [(f.line, f.column) for f in findings] == [where]
    if source is CPU_ACCUMULATOR:  # ``loss.to(d) += ...`` is no code: no fix is offered
        assert "`loss += ...` mixes `loss`" in findings[0].message and findings[0].fix is None
    with fake_accelerator("cuda"):
        with pytest.raises(RuntimeError, match=MIXED):
            run_main(source, torch.device("cuda"))
        run_main(source.replace(*fixed), torch.device("cuda"))  # the fix runs
    run_main(source, torch.device("cpu"))  # (and the CPU run never failed)
