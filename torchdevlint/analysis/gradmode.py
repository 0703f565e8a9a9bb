"""Grad mode: whether autograd records operations at a point (the ``grad`` fact).

The traversal marks each region with the innermost grad mode its own function sets
(``with torch.no_grad():``, ``@torch.inference_mode()``, ``torch.set_grad_enabled(False)``,
``torch.enable_grad()``); this provider turns that into an answer. A function that sets
nothing runs in its caller's mode, which this file may not show: the answer is then None.
"""

from __future__ import annotations

from typing import Optional

from torchdevlint.analysis.model import GRAD_OFF, GRAD_ON, Ctx


class GradMode:
    """Asked through ``Analysis.grad_recording``."""

    def recording(self, ctx: Ctx) -> Optional[bool]:
        """False under no_grad / inference_mode, True under enable_grad and at module level
        (autograd records by default), None in a function that sets nothing (its caller's)."""
        if ctx.grad == GRAD_OFF:
            return False
        if ctx.grad == GRAD_ON:
            return True
        return True if ctx.func is None else None
