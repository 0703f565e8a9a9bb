"""Grad mode: whether autograd records operations at a point (the ``grad`` fact).

The traversal marks each region with the innermost grad mode its own function sets
(``with torch.no_grad():``, ``@torch.inference_mode()``, ``torch.set_grad_enabled(False)``,
``torch.enable_grad()``); this provider turns that into an answer. A function that sets
nothing runs in its caller's mode, which this file may not show: the answer is then None.
"""

from __future__ import annotations

from typing import Optional

from torchdevlint.analysis.model import GRAD_OFF, GRAD_ON, GRAD_RUNTIME, Ctx


class GradMode:
    """Asked through ``Analysis.grad_recording``."""

    def recording(self, ctx: Ctx) -> Optional[bool]:
        """False under no_grad / inference_mode, True under enable_grad and at module level
        (autograd records by default), None in a function that sets nothing (its caller's, see ``callers_decide``) and under
        ``set_grad_enabled(x)`` (decided at run time)."""
        if ctx.grad == GRAD_OFF:
            return False
        if ctx.grad == GRAD_ON:
            return True
        if ctx.grad == GRAD_RUNTIME:
            return None
        return True if ctx.func is None else None

    def callers_decide(self, ctx: Ctx) -> bool:
        """Whether the mode at ``ctx`` is its callers' (a function that sets none), as opposed
        to one set here at run time (``set_grad_enabled(train)``) or a known one."""
        return ctx.grad is None and ctx.func is not None
