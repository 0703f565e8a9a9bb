"""TDL009 (opt-in, performance): a torch factory creates a tensor on the CPU and the very next
call copies it to a device: ``torch.zeros(3, 4).to(device)``, ``torch.arange(n).cuda()``.
``torch.zeros(3, 4, device=device)`` allocates and fills on the device instead: no CPU tensor,
no host-to-device copy.

Reported: ``.to(D)`` / ``.to(D, dtype)`` / ``.to(device=D, dtype=T)`` (plus ``non_blocking``,
``copy``, ``memory_format``) and ``.cuda(...)`` called directly on a factory that generates its
values (``zeros ones empty full eye arange linspace logspace rand randn randint randperm``,
see ``rules/factories.py``) without ``device=``. ``D`` must name a device: a string, an int,
``torch.device(...)``, ``x.device``, a device-named variable (``device``, ``self.device``,
``args.device``), ``device=``, or a value the analysis knows is a device; and
``analysis.placement.device_of_move`` must call it a move (not a dtype, not the CPU, not another
tensor). Silent: a factory with ``device=``, ``generator=`` (a CPU generator),
``pin_memory=`` or ``out=``; ``pin_memory()`` chains; ``*_like`` / ``torch.tensor`` and the
other data factories (see ``rules/factories.py`` for why).

Fix: move the device (and the dtype given to ``.to``) into the factory's arguments:
``torch.zeros(3, 4, device=device)``; ``.cuda()`` gives ``device="cuda"`` (a device without an
index is the current CUDA device, as for ``.cuda()``). Safe when the result is the very same
tensor: ``.to()`` got only a device (and a dtype), and the factory's values cannot depend on the
device or dtype that computes them (``zeros ones empty eye``, ``full`` without a dtype,
``arange(n)``), and ``requires_grad=`` is not given. Unsafe otherwise: random factories draw
from the device's generator (other numbers for the same seed), ``linspace`` / ``logspace`` /
``arange(a, b, step)`` may round differently, ``non_blocking=`` / ``copy=`` are dropped,
``requires_grad=True`` makes the result a leaf, ``.cuda(i)`` becomes ``device=i``. No fix for
``memory_format=``, for a dtype given both to the factory and to ``.to``, or where a comment
sits in the removed text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

import libcst as cst

from torchdevlint.analysis import K, Analysis, CallSite, Scope, api, is_device_name, string_value
from torchdevlint.findings import Finding
from torchdevlint.fixes.context import FixContext
from torchdevlint.fixes.model import Fix, FixPlan
from torchdevlint.rules import factories
from torchdevlint.rules.base import TOKEN_GAP, Rule, Violation, method_call_text, source_of
from torchdevlint.rules.prefilter import created_then_moved_in

_DROPPABLE = frozenset(("non_blocking", "copy"))


@dataclass
class CreateOnDevice(FixPlan):
    """The factory call, the move on its result, and what goes into the factory."""

    factory: cst.Call
    move: cst.Call
    device: Optional[cst.BaseExpression]  # None: ``.cuda()``
    dtype: Optional[cst.BaseExpression]
    safe: bool

    def build(self, finding: Finding, ctx: FixContext) -> Optional[Fix]:
        device = '"cuda"' if self.device is None else ctx.text(self.device)
        arguments: Tuple[Tuple[str, str], ...] = (("device", device),)
        if self.dtype is not None:
            arguments += (("dtype", ctx.text(self.dtype)),)
        edits = factories.into_factory(ctx, self.factory, self.move, arguments)
        if edits is None:
            return None
        return Fix(finding.code, self.safe,
                   f"create the tensor on the device: `{', '.join(f'{n}={t}' for n, t in arguments)}`",
                   edits)


class CreateThenMove(Rule):
    code = "TDL009"
    name = "create-then-move"
    summary = "A tensor created on the CPU and copied to a device at once (create it there)"
    default_enabled = False
    fixable = True
    facts = frozenset(("kinds", "placement", "devices"))
    # ``.to(`` or ``.cuda(`` right after a closing parenthesis (the factory call's, or the
    # parentheses around it), and a torch factory (reached through a name of torch).
    required_text = (rf"\){TOKEN_GAP}{method_call_text('to', 'cuda')}", r"\btorch\b")
    could_report_in = staticmethod(created_then_moved_in)  # (in prefilter: no LibCST there)
    valid = (
        "import torch\n\n\ndef f(device):\n    return torch.zeros(3, device=device).to(device)\n",
        "import torch\nx = torch.zeros(3).to(torch.float16)\n",
        "import torch\n\n\ndef f(ref):\n    return torch.zeros(3).to(ref)\n",
        # (a pinned staging buffer, ``.pin_memory().to(...)``, and host data,
        # ``torch.tensor(data).to(device)``, never reach the rule: see the negative fixtures)
        "import torch\n\n\ndef f(n, device):\n"
        "    return torch.zeros(n, pin_memory=True).to(device, non_blocking=True)\n",
        "import torch\nx = torch.zeros(3).to('cpu')\n",
    )
    invalid = (
        ("import torch\n\n\ndef f(device):\n    return torch.zeros(3, 4).to(device)\n", ((5, 30),)),
        ("import torch\nx = torch.arange(8).cuda()\n", ((2, 21),)),
    )

    def check(self, analysis: Analysis) -> Iterator[Violation]:
        self.analysis = analysis
        sites = analysis.collected.calls_by_name
        for site in [*sites.get("to", ()), *sites.get("cuda", ())]:
            violation = self._check_site(site)
            if violation is not None:
                yield violation

    def _check_site(self, site: CallSite) -> Optional[Violation]:
        move, scope = site.call, site.ctx.scope
        func = move.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Call):
            return None
        factory = func.value
        tail = factories.factory_name(factory, self.analysis.qualname(factory.func, scope))
        if tail is None or any(a.star for a in move.args):
            return None
        moved, _ = self.analysis.placement.device_of_move(move, scope)
        if not moved:
            return None
        parsed = self._arguments(move, scope)
        if parsed is None:
            return None
        device, dtype, others = parsed
        method = func.attr.value
        where = "the GPU" if method == "cuda" else "the device"
        shown_device = '"cuda"' if device is None else source_of(device)
        callee = source_of(factory.func)
        shown_move = ", ".join((f"{a.keyword.value}=" if a.keyword is not None else "")
                               + source_of(a.value, 30) for a in move.args)
        message = (f"`{callee}(...)` creates the tensor on the CPU and `.{method}({shown_move})` then "
                   f"copies it to {where}: create it there, `{callee}(..., device={shown_device}")
        has_dtype = factories.keyword(factory, "dtype") is not None
        if dtype is None:
            message += ")`"
        elif has_dtype:  # its own dtype first (int64 for exact ranges), then the conversion
            message += f").to({source_of(dtype, 30)})`"
        else:
            message += f", dtype={source_of(dtype, 30)})`"
        plan = None
        if "memory_format" not in others and not (dtype is not None and has_dtype) \
                and others <= _DROPPABLE:
            safe = not others and factories.same_tensor(tail, factory, dtype is not None) \
                and not (method == "cuda" and device is not None)
            plan = CreateOnDevice(factory, move, device, dtype, safe)
        return Violation(func.attr, message, plan)

    def _arguments(self, move: cst.Call, scope: Scope):
        """(device, dtype, names of the other arguments) of the move; device None for a bare
        ``.cuda()``. None when the device is not provably one."""
        positional = [a.value for a in move.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in move.args if a.keyword is not None}
        others = set(keywords) - api.MOVE_KEYWORDS
        if move.func.attr.value == "cuda":
            device = keywords.get("device", positional[0] if positional else None)
            if len(positional) > 1:
                others.add("non_blocking")
            if device is not None and not self._names_a_device(device, scope, "device" in keywords):
                return None
            return device, None, others
        if "device" in keywords:
            if positional:
                return None
            device = keywords["device"]
        elif positional:
            device = positional[0]
        else:
            return None
        dtype = keywords.get("dtype")
        if len(positional) > 1:
            if dtype is not None:
                return None
            dtype = positional[1]
        if len(positional) > 2:
            others.update(("non_blocking", "copy")[: len(positional) - 2])
        if not self._names_a_device(device, scope, "device" in keywords or dtype is not None):
            return None
        return device, dtype, others

    def _names_a_device(self, expr: cst.BaseExpression, scope: Scope, certain: bool) -> bool:
        """Whether ``expr`` is a device, not another tensor (``.to(other)``) nor a dtype held in
        a variable. ``certain``: the signature says so (``device=``, or a dtype follows)."""
        if isinstance(expr, cst.Name) and expr.value == "None":
            return False
        if certain:
            return True
        if string_value(expr) is not None or isinstance(
                expr, (cst.Integer, cst.FormattedString, cst.ConcatenatedString)):
            return True
        if isinstance(expr, cst.Call):
            return self.analysis.qualname(expr.func, scope) == "torch.device"
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "device" or is_device_name(expr.attr.value)
        if isinstance(expr, cst.Name):
            return is_device_name(expr.value) or self.analysis.kind_of(expr, scope) is K.DEVICE
        return False
