"""TDL013 (a demonstration of adding a rule, docs/adding-a-rule.md): ``device="cuda"`` given to
a torch call with no availability check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from torchdevlint.analysis import Analysis, string_value
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Edit, Fix, FixPlan
from torchdevlint.rules.base import Message, Rule, Violation


@dataclass
class ChooseAtRuntime(FixPlan):
    """The ``"cuda"`` literal becomes a choice made at runtime."""

    literal: cst.SimpleString

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        start, end = ctx.span(self.literal)
        text = f'{self.literal.value} if torch.cuda.is_available() else "cpu"'
        return Fix(finding.code, True, "choose the device at runtime", (Edit(start, end, text),))


class CudaDeviceKeyword(Rule):
    """
    ## What it does
    Reports `device="cuda"` given to a call where no availability check guards it.

    ## Why is this bad
    Without CUDA the call raises, on a CPU-only build of torch, on a CUDA build that sees no
    GPU, and without the NVIDIA driver:

    ```
    AssertionError: Torch not compiled with CUDA enabled
    RuntimeError: No CUDA GPUs are available
    RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
    ```

    ## Example
    ```python
    x = torch.ones(2, device="cuda")
    ```

    ## Use instead
    ```python
    import torch

    x = torch.ones(2, device="cuda" if torch.cuda.is_available() else "cpu")
    ```

    ## Fix safety
    `--fix` writes `"cuda" if torch.cuda.is_available() else "cpu"`: safe, the same device
    where CUDA is there.

    ## Known limits
    Only a `device=` keyword given the literal `"cuda"`.
    """

    DEVICE_KEYWORD = Message("`device={literal}` fails on a machine without CUDA (Torch not "
                             "compiled with CUDA enabled); choose the device at runtime")

    code = "TDL013"
    name = "cuda-device-keyword"
    summary = '`device="cuda"` given to a call with no `torch.cuda.is_available()` guard'
    fixable = True
    facts = frozenset(("kinds", "guards"))
    required_text = r"\bdevice\s*=\s*[\"']cuda[\"']"
    valid = ('import torch\nif torch.cuda.is_available():\n    x = torch.ones(2, device="cuda")\n',)
    invalid = (('import torch\nx = torch.ones(2, device="cuda")\n', ((2, 26),)),)

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        for sites in analysis.collected.calls_by_name.values():
            for site in sites:
                for arg in site.call.args:
                    if arg.keyword is not None and arg.keyword.value == "device" and \
                            isinstance(arg.value, cst.SimpleString) and \
                            string_value(arg.value) == "cuda" and not analysis.is_guarded(site.ctx):
                        yield Violation(arg.value, self.DEVICE_KEYWORD(literal=arg.value.value),
                                        ChooseAtRuntime(arg.value))
